/**
 * The one JSON Schema validator, for every value subako checks against a schema: tool arguments against
 * input schemas, REST bodies and query parameters against the routes' schemas, a guest's answer against
 * CallToolResult (2020-12 by default, draft-07 and 2019-09 when a schema says so through `$schema`). Compiled validators are cached per schema, by object
 * identity and by content, so re-listing a server's tools does not recompile.
 *
 * `format` is treated as an annotation (the 2020-12 default vocabulary), since the format plugins are not
 * installed: a value is never refused for its format alone.
 *
 * A schema subako did not write (a remote MCP server's, a package's: origin `untrusted`) compiles on engines of
 * its own, whose options differ only in the regular-expression engine (linear time) and whose keywords are
 * bounded (schema-budget.ts): at most MAX_UNTRUSTED_SCHEMA_CHARS of it is compiled, compiling and each check
 * have a time budget, and a check past its budget is refused with a problem naming the keyword. Our own
 * schemas (the routes', CallToolResult, a defineTool's) stay on the fast path.
 */
import { createRequire } from 'node:module';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv as AjvDraft7 } from 'ajv/dist/ajv.js';
import type { ErrorObject, ValidateFunction, Options } from 'ajv';
import type { JsonSchema } from '../tool.js';
import { InvalidSchemaError } from './errors.js';
import { boundKeywords, boundedRegExp, linearUniqueItems, CHECK_BUDGET_MS, COMPILE_BUDGET_MS, SchemaBudgetExceeded, withinBudget } from './schema-budget.js';

export interface SchemaProblem {
  code: string;
  /** JSON Pointer into the validated value; for a missing property, the path it should have had. */
  path: string;
  /** The failing keyword (`type`, `required`, `enum`, …). */
  rule: string;
  message: string;
}

export type SchemaCheck = { ok: true } | { ok: false; problems: SchemaProblem[] };

/** A tool argument's problem: the same shape, under the name the MCP face always gave it. */
export type ArgumentProblem = SchemaProblem;

/**
 * What is being checked, as the messages name it: the whole value ("the arguments", "the body") and one
 * of its parts ("argument /name", "field /name"), and the prefix of the problems' codes.
 */
export interface SchemaSubject {
  whole: string;
  part: string;
  code: string;
}

export const TOOL_ARGUMENTS: SchemaSubject = Object.freeze({ whole: 'the arguments', part: 'argument', code: 'call' });
export const REQUEST_BODY: SchemaSubject = Object.freeze({ whole: 'the body', part: 'field', code: 'body' });

/** A query parameter is checked as a whole value: its problems read "query parameter limit must be …". */
export function queryParameter(name: string): SchemaSubject {
  return { whole: `query parameter ${name}`, part: `query parameter ${name} at`, code: 'query' };
}

const ajvOptions: Options = {
  allErrors: true,
  strict: false,
  validateFormats: false,
  // Servers reuse `$id`s across tools; never register compiled schemas under their ids.
  addUsedSchema: false,
  logger: false,
};

/**
 * Who wrote a schema: subako (`trusted`: its routes', CallToolResult, a defineTool's) or someone it must not
 * believe (`untrusted`: a remote MCP server's, a package's), whose schema is compiled and run bounded.
 */
export type SchemaOrigin = 'trusted' | 'untrusted';

/** The most of an untrusted schema compiled (its JSON text): compiling runs on the event loop, milliseconds per KiB. */
export const MAX_UNTRUSTED_SCHEMA_CHARS = 64 * 1024;

/** The options of an untrusted schema's engines: ours, but for the linear-time regular-expression engine. */
const untrustedOptions: Options = { ...ajvOptions, code: { regExp: boundedRegExp } };

type Dialect = 'draft-07' | '2019-09' | '2020-12';
type Engine = AjvDraft7 | Ajv2019 | Ajv2020;
const engines: Record<SchemaOrigin, Partial<Record<Dialect, Engine>>> = { trusted: {}, untrusted: {} };

/** Each dialect's Ajv is loaded when a schema first needs it: loading all three was most of a fresh CLI's start. */
const requireAjv = createRequire(import.meta.url);

function engine(dialect: Dialect, origin: SchemaOrigin): Engine {
  const existing = engines[origin][dialect];
  if (existing) return existing;
  const options = origin === 'trusted' ? ajvOptions : untrustedOptions;
  const made =
    dialect === 'draft-07' ? new (requireAjv('ajv/dist/ajv.js') as { Ajv: typeof AjvDraft7 }).Ajv(options)
      : dialect === '2019-09' ? new (requireAjv('ajv/dist/2019.js') as { Ajv2019: typeof Ajv2019 }).Ajv2019(options)
        : new (requireAjv('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020(options);
  if (origin === 'untrusted') boundKeywords(made);
  else linearUniqueItems(made);
  engines[origin][dialect] = made;
  return made;
}

function dialectOf(schema: JsonSchema): { dialect: Dialect; schema: JsonSchema } {
  const declared = schema.$schema;
  if (typeof declared !== 'string') return { dialect: '2020-12', schema };
  if (/json-schema\.org\/draft-0[67]\/schema/.test(declared)) return { dialect: 'draft-07', schema };
  if (/json-schema\.org\/draft\/2019-09\/schema/.test(declared)) return { dialect: '2019-09', schema };
  if (/json-schema\.org\/draft\/2020-12\/schema/.test(declared)) return { dialect: '2020-12', schema };
  // An unknown meta-schema: validate by the default dialect rather than refuse the tool.
  const { $schema: _ignored, ...rest } = schema;
  return { dialect: '2020-12', schema: rest };
}

const MAX_CACHED = 256;
interface Compiled {
  validate: ValidateFunction;
  compiled: JsonSchema;
  dialect: Dialect;
}
/** Per origin (the same schema on both engines is two validators); byContent is insertion-ordered: first = least recently used. */
const caches: Record<SchemaOrigin, { byIdentity: WeakMap<object, ValidateFunction>; byContent: Map<string, Compiled> }> = {
  trusted: { byIdentity: new WeakMap(), byContent: new Map() },
  untrusted: { byIdentity: new WeakMap(), byContent: new Map() },
};

/** Returns the compiled validator for one of our schemas; throws InvalidSchemaError when it cannot be compiled. */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  return compile(schema, 'trusted');
}

function compile(schema: JsonSchema, origin: SchemaOrigin): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new InvalidSchemaError('a JSON Schema must be an object');
  }
  const { byIdentity, byContent } = caches[origin];
  const known = byIdentity.get(schema);
  if (known) return known;
  const text = schemaText(schema);
  const cached = byContent.get(text);
  if (cached) {
    byContent.delete(text);
    byContent.set(text, cached);
    byIdentity.set(schema, cached.validate);
    return cached.validate;
  }
  if (origin === 'untrusted' && text.length > MAX_UNTRUSTED_SCHEMA_CHARS) {
    throw new InvalidSchemaError(
      `the schema is ${Math.ceil(text.length / 1024)} KiB of JSON; at most ${MAX_UNTRUSTED_SCHEMA_CHARS / 1024} KiB of a schema subako did not write is compiled`,
    );
  }
  const { dialect, schema: compiled } = dialectOf(schema);
  const ajv = engine(dialect, origin);
  let validate: ValidateFunction;
  try {
    validate = origin === 'trusted' ? ajv.compile(compiled) : withinBudget('compiling', COMPILE_BUDGET_MS, () => ajv.compile(compiled));
  } catch (err) {
    // A failed compile leaves the schema in Ajv's own cache: a server sending new bad schemas must not grow it.
    ajv.removeSchema(compiled);
    if (err instanceof SchemaBudgetExceeded) {
      throw new InvalidSchemaError(`the schema cannot be compiled: its ${err.keyword} at ${err.location}: ${err.reason}`, { cause: err });
    }
    throw new InvalidSchemaError(`the schema cannot be compiled: ${(err as Error).message}`, { cause: err });
  }
  byContent.set(text, { validate, compiled, dialect });
  byIdentity.set(schema, validate);
  if (byContent.size > MAX_CACHED) {
    const [oldestText, oldest] = byContent.entries().next().value as [string, Compiled];
    byContent.delete(oldestText);
    engine(oldest.dialect, origin).removeSchema(oldest.compiled);
  }
  return validate;
}

/** The cache key; a schema nested past what JSON.stringify follows is not a schema we can use. */
function schemaText(schema: JsonSchema): string {
  try {
    return JSON.stringify(schema);
  } catch (err) {
    throw new InvalidSchemaError(`the schema cannot be read as JSON: ${(err as Error).message}`, { cause: err });
  }
}

function describe(error: ErrorObject, subject: SchemaSubject): SchemaProblem {
  let path = error.instancePath;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    path = `${path}/${escapePointer(params.missingProperty)}`;
  } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    path = `${path}/${escapePointer(params.additionalProperty)}`;
  } else if (error.keyword === 'unevaluatedProperties' && typeof params.unevaluatedProperty === 'string') {
    path = `${path}/${escapePointer(params.unevaluatedProperty)}`;
  }
  const where = path === '' ? subject.whole : `${subject.part} ${path}`;
  let detail = error.message ?? 'is invalid';
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    detail += `: ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return { code: `${subject.code}.${error.keyword}`, path, rule: error.keyword, message: `${where} ${detail} (rule: ${error.keyword})` };
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Checks a value against a schema; every problem names its path and its rule, in the words of `subject`
 * (tool arguments unless told).
 */
export function checkAgainstSchema(
  schema: JsonSchema, value: unknown, subject: SchemaSubject = TOOL_ARGUMENTS, origin: SchemaOrigin = 'trusted',
): SchemaCheck {
  const validate = compile(schema, origin);
  let valid: boolean;
  try {
    valid = origin === 'trusted' ? (validate(value) as boolean) : withinBudget('checking', CHECK_BUDGET_MS, () => validate(value) as boolean);
  } catch (err) {
    if (err instanceof SchemaBudgetExceeded) return { ok: false, problems: [refusal(err, subject)] };
    throw err;
  }
  if (valid) return { ok: true };
  const seen = new Set<string>();
  const problems: SchemaProblem[] = [];
  for (const error of validate.errors ?? []) {
    const problem = describe(error, subject);
    if (seen.has(problem.message)) continue;
    seen.add(problem.message);
    problems.push(problem);
  }
  return { ok: false, problems };
}

/**
 * A schema subako did not write, compiled now (InvalidSchemaError when it cannot be), as a bounded check of
 * values: for a caller that must learn of an unusable schema before it has a value (the SDK client's output
 * validation).
 */
export function untrustedCheck(schema: JsonSchema, subject: SchemaSubject): (value: unknown) => SchemaCheck {
  compile(schema, 'untrusted');
  return (value) => checkAgainstSchema(schema, value, subject, 'untrusted');
}

/** A check past its budget: refused, naming the keyword it was in and where in the schema. */
function refusal(exceeded: SchemaBudgetExceeded, subject: SchemaSubject): SchemaProblem {
  const rule = exceeded.keyword;
  return {
    code: `${subject.code}.${rule}`,
    path: '',
    rule,
    message: `${subject.whole} cannot be checked against the schema's ${rule} at ${exceeded.location}: ${exceeded.reason}; refused (rule: ${rule})`,
  };
}

/** Tool arguments: a JSON object, checked against the tool's input schema. */
export function checkArguments(schema: JsonSchema, args: unknown, origin: SchemaOrigin = 'trusted'): SchemaCheck {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return {
      ok: false,
      problems: [{ code: 'call.type', path: '', rule: 'type', message: 'the arguments must be a JSON object (rule: type)' }],
    };
  }
  return checkAgainstSchema(schema, args, TOOL_ARGUMENTS, origin);
}
