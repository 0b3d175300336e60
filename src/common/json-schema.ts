/**
 * The one JSON Schema validator, for every value subako checks against a schema: tool arguments against
 * input schemas, REST bodies and query parameters against the routes' schemas, a guest's answer against
 * CallToolResult (2020-12 by default, draft-07 and 2019-09 when a schema says so through `$schema`). Compiled validators are cached per schema, by object
 * identity and by content, so re-listing a server's tools does not recompile.
 *
 * `format` is treated as an annotation (the 2020-12 default vocabulary), since the format plugins are not
 * installed: a value is never refused for its format alone.
 */
import { createRequire } from 'node:module';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv as AjvDraft7 } from 'ajv/dist/ajv.js';
import type { ErrorObject, ValidateFunction, Options } from 'ajv';
import type { JsonSchema } from '../tool.js';
import { InvalidSchemaError } from './errors.js';

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

type Dialect = 'draft-07' | '2019-09' | '2020-12';
const engines: Partial<Record<Dialect, AjvDraft7 | Ajv2019 | Ajv2020>> = {};

/** Each dialect's Ajv is loaded when a schema first needs it: loading all three was most of a fresh CLI's start. */
const requireAjv = createRequire(import.meta.url);

function engine(dialect: Dialect): AjvDraft7 | Ajv2019 | Ajv2020 {
  const existing = engines[dialect];
  if (existing) return existing;
  const made =
    dialect === 'draft-07' ? new (requireAjv('ajv/dist/ajv.js') as { Ajv: typeof AjvDraft7 }).Ajv(ajvOptions)
      : dialect === '2019-09' ? new (requireAjv('ajv/dist/2019.js') as { Ajv2019: typeof Ajv2019 }).Ajv2019(ajvOptions)
        : new (requireAjv('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020(ajvOptions);
  engines[dialect] = made;
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
const byIdentity = new WeakMap<object, ValidateFunction>();
/** Insertion-ordered, so the first key is the least recently used. */
const byContent = new Map<string, { validate: ValidateFunction; compiled: JsonSchema; dialect: Dialect }>();

/** Returns the compiled validator for a schema; throws InvalidSchemaError when it cannot be compiled. */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new InvalidSchemaError('a JSON Schema must be an object');
  }
  const known = byIdentity.get(schema);
  if (known) return known;
  const text = JSON.stringify(schema);
  const cached = byContent.get(text);
  if (cached) {
    byContent.delete(text);
    byContent.set(text, cached);
    byIdentity.set(schema, cached.validate);
    return cached.validate;
  }
  const { dialect, schema: compiled } = dialectOf(schema);
  let validate: ValidateFunction;
  try {
    validate = engine(dialect).compile(compiled);
  } catch (err) {
    throw new InvalidSchemaError(`the schema cannot be compiled: ${(err as Error).message}`, { cause: err });
  }
  byContent.set(text, { validate, compiled, dialect });
  byIdentity.set(schema, validate);
  if (byContent.size > MAX_CACHED) {
    const [oldestText, oldest] = byContent.entries().next().value as [string, { compiled: JsonSchema; dialect: Dialect }];
    byContent.delete(oldestText);
    engine(oldest.dialect).removeSchema(oldest.compiled);
  }
  return validate;
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
export function checkAgainstSchema(schema: JsonSchema, value: unknown, subject: SchemaSubject = TOOL_ARGUMENTS): SchemaCheck {
  const validate = compileSchema(schema);
  if (validate(value)) return { ok: true };
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

/** Tool arguments: a JSON object, checked against the tool's input schema. */
export function checkArguments(schema: JsonSchema, args: unknown): SchemaCheck {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return {
      ok: false,
      problems: [{ code: 'call.type', path: '', rule: 'type', message: 'the arguments must be a JSON object (rule: type)' }],
    };
  }
  return checkAgainstSchema(schema, args);
}
