/**
 * JSON Schema → TypeScript type text, for the bindings `pull` writes.
 *
 * The one rule: the type written for a schema admits every value the schema admits (it may admit more);
 * it is never narrower, so a value the server sends or accepts always type-checks. Keywords that cannot
 * be expressed as a type (formats, bounds, patterns, `not`, conditionals) are dropped, which only widens.
 * What does not map at all becomes `JsonValue`.
 *
 * Mapped: `type` (one or a list, `"null"` included), `const`, `enum`, object `properties` / `required` /
 * `additionalProperties` / `patternProperties`, arrays (`items`, `prefixItems`, the draft-07 tuple form),
 * `anyOf` / `oneOf` (unions), `allOf` (intersections), OpenAPI `nullable`, and local `$ref`s
 * (`#`, `#/$defs/…`, `#/definitions/…`), which become named type aliases so recursive schemas stay typed.
 */
import { docComment, literalType, propertyKey } from './ts-text.js';

/** The fallback type's name; the generated module declares it. */
export const JSON_VALUE = 'JsonValue';
/** A JSON object of anything; the generated module declares it. */
export const JSON_OBJECT = 'JsonObject';

/** Deeper than this, a schema is not worth typing precisely (and a hostile one cannot blow the stack). */
const MAX_DEPTH = 48;
const INDENT = '  ';

type Precedence = 'atom' | 'intersection' | 'union';
interface TypeText {
  text: string;
  precedence: Precedence;
}

const atom = (text: string): TypeText => ({ text, precedence: 'atom' });
const JSON_VALUE_TYPE = atom(JSON_VALUE);
const NEVER = atom('never');

interface Walk {
  depth: number;
  indent: string;
  /**
   * Local references being expanded in place because they sit where TypeScript would not defer a
   * recursive alias (directly in a union or an intersection); meeting one again is a cycle.
   */
  inlining: ReadonlySet<string>;
  /** True under an object property, an array element or an index signature, where aliases may recurse. */
  guarded: boolean;
}

type Schema = Record<string, unknown>;
const isSchemaObject = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A named alias the mapper asked for: a local reference's target, to be declared by the caller. */
export interface Definition {
  name: string;
  pointer: string;
}

/**
 * Maps the schemas of one document (a tool's input or output schema, with its own `$defs`). Local
 * references get alias names from `nameDefinition`; `definitions()` lists them in first-use order so the
 * caller declares each once (rendering one may reference more, which the list then includes).
 */
export class SchemaMapper {
  private readonly named = new Map<string, string>();
  private readonly order: Definition[] = [];

  /**
   * @param root the whole document, for resolving references
   * @param rootName the alias the caller declares for the document itself (what `#` refers to)
   * @param nameDefinition picks a unique alias name for a `$defs` entry, given its last pointer segment
   */
  constructor(
    private readonly root: unknown,
    rootName: string,
    private readonly nameDefinition: (segment: string) => string,
  ) {
    this.named.set('', rootName);
  }

  /** The type text of `schema` (a part of this document), as the right-hand side of an alias. */
  typeOf(schema: unknown, indent = ''): string {
    return this.map(schema, { depth: 0, indent, inlining: new Set(), guarded: false }).text;
  }

  /** The type text of the schema at a local pointer (a definition's body). */
  typeAt(pointer: string): string {
    const target = this.resolve(pointer);
    return this.map(target, { depth: 0, indent: '', inlining: new Set([pointer]), guarded: false }).text;
  }

  /** Every alias asked for so far (the list grows while the caller renders them). */
  definitions(): readonly Definition[] {
    return this.order;
  }

  private map(schema: unknown, walk: Walk): TypeText {
    if (schema === false) return NEVER;
    if (!isSchemaObject(schema) || walk.depth > MAX_DEPTH) return JSON_VALUE_TYPE;
    const next: Walk = { ...walk, depth: walk.depth + 1 };

    if (typeof schema.$ref === 'string') return this.reference(schema.$ref, next);
    if ('const' in schema) return atom(literalType(schema.const) ?? JSON_VALUE);

    const own = this.ownType(schema, next);
    const parts: TypeText[] = own === undefined ? [] : [own];
    const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
    if (alternatives !== undefined) parts.push(union(alternatives.map((s) => this.map(s, next))));
    if (Array.isArray(schema.allOf)) parts.push(intersection(schema.allOf.map((s) => this.map(s, next))));
    const result = intersection(parts);
    return schema.nullable === true ? union([result, atom('null')]) : result;
  }

  /** What `type` / `enum` say on their own, or undefined when neither is present. */
  private ownType(schema: Schema, walk: Walk): TypeText | undefined {
    const types = typeNames(schema.type);
    if (Array.isArray(schema.enum)) {
      const literals = schema.enum.filter((value) => types === undefined || types.some((t) => hasJsonType(value, t)));
      const texts = literals.map(literalType);
      if (texts.some((t) => t === undefined)) return JSON_VALUE_TYPE;
      return union(texts.map((t) => atom(t!)));
    }
    if (types === undefined) return undefined;
    return union(types.map((t) => this.typeForName(t, schema, walk)));
  }

  private typeForName(type: string, schema: Schema, walk: Walk): TypeText {
    switch (type) {
      case 'string':
        return atom('string');
      case 'number':
      case 'integer':
        return atom('number');
      case 'boolean':
        return atom('boolean');
      case 'null':
        return atom('null');
      case 'array':
        return this.arrayType(schema, walk);
      case 'object':
        return this.objectType(schema, walk);
      default:
        return JSON_VALUE_TYPE;
    }
  }

  private reference(ref: string, walk: Walk): TypeText {
    const pointer = localPointer(ref);
    if (pointer === undefined || this.resolve(pointer) === undefined) return JSON_VALUE_TYPE;
    if (walk.guarded) return atom(this.aliasFor(pointer));
    // Directly inside a union or intersection TypeScript resolves aliases eagerly, so expand in place.
    if (walk.inlining.has(pointer)) return JSON_VALUE_TYPE;
    const inlining = new Set(walk.inlining).add(pointer);
    return this.map(this.resolve(pointer), { ...walk, inlining });
  }

  private aliasFor(pointer: string): string {
    let name = this.named.get(pointer);
    if (name === undefined) {
      const segments = pointer.split('/');
      const last = (segments[segments.length - 1] ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
      name = this.nameDefinition(last === '' ? 'Definition' : last);
      this.named.set(pointer, name);
      this.order.push({ name, pointer });
    }
    return name;
  }

  private resolve(pointer: string): unknown {
    let node: unknown = this.root;
    if (pointer === '') return node;
    for (const raw of pointer.slice(1).split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      if (!isSchemaObject(node) && !Array.isArray(node)) return undefined;
      if (!Object.prototype.hasOwnProperty.call(node, key)) return undefined;
      node = (node as Record<string, unknown>)[key];
    }
    return node;
  }

  private guardedWalk(walk: Walk, indent: string): Walk {
    return { ...walk, indent, guarded: true, inlining: new Set() };
  }

  private arrayType(schema: Schema, walk: Walk): TypeText {
    const inner = this.guardedWalk(walk, walk.indent);
    const tuple = Array.isArray(schema.prefixItems)
      ? { elements: schema.prefixItems, rest: schema.items }
      : Array.isArray(schema.items)
        ? { elements: schema.items, rest: schema.additionalItems }
        : undefined;
    if (tuple === undefined) {
      const element = schema.items === undefined ? JSON_VALUE_TYPE : this.map(schema.items, inner);
      return atom(`${parenthesize(element, 'atom')}[]`);
    }
    const required = typeof schema.minItems === 'number' ? schema.minItems : 0;
    const parts = tuple.elements.map((element, index) => {
      const type = this.map(element, inner);
      return index < required ? type.text : `${parenthesize(type, 'atom')}?`;
    });
    if (tuple.rest !== false) {
      const rest = tuple.rest === undefined || tuple.rest === true ? JSON_VALUE_TYPE : this.map(tuple.rest, inner);
      parts.push(`...${parenthesize(rest, 'atom')}[]`);
    }
    return atom(`[${parts.join(', ')}]`);
  }

  private objectType(schema: Schema, walk: Walk): TypeText {
    const properties = isSchemaObject(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : []);
    const names = Object.keys(properties);
    for (const name of required) if (!Object.prototype.hasOwnProperty.call(properties, name)) names.push(name);

    const additional = schema.additionalProperties;
    const hasPatterns = isSchemaObject(schema.patternProperties) && Object.keys(schema.patternProperties).length > 0;
    const memberIndent = walk.indent + INDENT;
    const inner = this.guardedWalk(walk, memberIndent);

    // Extra keys: typed when the schema types them; absent or `true` leaves the type open, which
    // TypeScript object types already are; `false` closes it.
    let extra: TypeText | undefined;
    if (hasPatterns) extra = JSON_VALUE_TYPE;
    else if (additional !== undefined && typeof additional !== 'boolean') extra = this.map(additional, inner);

    if (names.length === 0) {
      const value = extra ?? (additional === false ? NEVER : JSON_VALUE_TYPE);
      if (value.text === JSON_VALUE) return atom(JSON_OBJECT);
      return atom(`{ [key: string]: ${value.text} }`);
    }

    const lines: string[] = ['{'];
    const memberTypes: TypeText[] = [];
    let anyOptional = false;
    for (const name of names) {
      const propertySchema = Object.prototype.hasOwnProperty.call(properties, name) ? properties[name] : true;
      const type = this.map(propertySchema, inner);
      memberTypes.push(type);
      const optional = !required.has(name);
      anyOptional ||= optional;
      if (isSchemaObject(propertySchema)) lines.push(...docComment(propertySchema.description, memberIndent));
      lines.push(`${memberIndent}${propertyKey(name)}${optional ? '?' : ''}: ${type.text};`);
    }
    if (extra !== undefined) {
      // An index signature must admit every declared property's type too.
      // (`JsonValue` absorbs other JSON types but not `undefined`, which an optional property adds.)
      const all = union([extra, ...memberTypes]);
      const text = anyOptional ? `${parenthesize(all, 'union')} | undefined` : all.text;
      lines.push(`${memberIndent}[key: string]: ${text};`);
    }
    lines.push(`${walk.indent}}`);
    return atom(lines.join('\n'));
  }
}

/** `#`, `#/$defs/X` → the JSON pointer (URI-decoded); anything else (remote, anchors) → undefined. */
function localPointer(ref: string): string | undefined {
  if (!ref.startsWith('#')) return undefined;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch (error) {
    if (!(error instanceof URIError)) throw error; // expected: not percent-encoding
    return undefined;
  }
  return pointer === '' || pointer.startsWith('/') ? pointer : undefined;
}

function typeNames(type: unknown): string[] | undefined {
  if (typeof type === 'string') return [type];
  if (Array.isArray(type) && type.length > 0 && type.every((t) => typeof t === 'string')) return type as string[];
  return undefined;
}

function hasJsonType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isSchemaObject(value);
    default:
      return true;
  }
}

function parenthesize(type: TypeText, context: Precedence): string {
  const needs = type.precedence === 'union' ? context !== 'union' : type.precedence === 'intersection' && context === 'atom';
  return needs ? `(${type.text})` : type.text;
}

/** A union; `JsonValue` absorbs the rest (it admits everything), `never` members vanish, repeats merge. */
function union(members: TypeText[]): TypeText {
  const texts: string[] = [];
  for (const member of members) {
    if (member.text === JSON_VALUE) return JSON_VALUE_TYPE;
    if (member.text === 'never') continue;
    const text = parenthesize(member, 'union');
    if (!texts.includes(text)) texts.push(text);
  }
  if (texts.length === 0) return NEVER;
  if (texts.length === 1) return members.find((m) => parenthesize(m, 'union') === texts[0])!;
  return { text: texts.join(' | '), precedence: 'union' };
}

/** An intersection; `JsonValue` members say nothing and vanish, `never` wins, repeats merge. */
function intersection(members: TypeText[]): TypeText {
  const kept: TypeText[] = [];
  for (const member of members) {
    if (member.text === 'never') return NEVER;
    if (member.text === JSON_VALUE) continue;
    if (!kept.some((k) => k.text === member.text)) kept.push(member);
  }
  if (kept.length === 0) return JSON_VALUE_TYPE;
  if (kept.length === 1) return kept[0]!;
  return { text: kept.map((k) => parenthesize(k, 'intersection')).join(' & '), precedence: 'intersection' };
}
