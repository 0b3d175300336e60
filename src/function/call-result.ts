/**
 * Is an answer a valid MCP CallToolResult? An answer that is not is a crash (`bad_result`), because the
 * model cannot be shown it.
 *
 * Checked by hand, field by field, rather than by the JSON Schema validator: this check runs on every call, and
 * loading Ajv and compiling the schema was the largest single item of a fresh process's first call (a fifth of
 * its CPU). What it accepts is exactly CALL_TOOL_RESULT_SCHEMA's (kept below as the statement of the rule, and
 * checked against this function by test/function/render.test.ts with the validator): an object with a
 * `content` array of objects, each with a string `type`; `text` blocks with a string `text`, `image` and
 * `audio` blocks with string `data` and `mimeType`, `resource_link` blocks with string `uri` and `name`; an
 * object `structuredContent`, a boolean `isError`, a string `resultType`, an object `_meta` when present; any
 * other field allowed.
 */

/** The fields each block type must carry, as strings. */
const BLOCK_FIELDS: Readonly<Record<string, readonly string[]>> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource_link: ['uri', 'name'],
};

const stringField = { type: 'string' } as const;
const requireWhen = (type: string, fields: readonly string[]) => ({
  if: { properties: { type: { const: type } } },
  then: { required: fields, properties: Object.fromEntries(fields.map((f) => [f, stringField])) },
});

/** The rule as a JSON Schema: what callToolResultProblem checks, for tests to hold the two together. */
export const CALL_TOOL_RESULT_SCHEMA = {
  type: 'object',
  required: ['content'],
  properties: {
    content: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type'],
        properties: { type: stringField },
        allOf: Object.entries(BLOCK_FIELDS).map(([type, fields]) => requireWhen(type, fields)),
      },
    },
    structuredContent: { type: 'object' },
    isError: { type: 'boolean' },
    resultType: stringField,
    _meta: { type: 'object' },
  },
};

type Fields = Record<string, unknown>;

/** A JSON Schema "object": not null, not an array. */
function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const has = (object: Fields, key: string): boolean => Object.prototype.hasOwnProperty.call(object, key);

/** Returns null when `result` is a CallToolResult, else a sentence saying what is wrong. */
export function callToolResultProblem(result: unknown): string | null {
  const problem = firstProblem(result);
  return problem === null ? null : `the answer is not a CallToolResult: ${problem.at === '' ? 'at the top' : `at ${problem.at}`}, ${problem.message}`;
}

function firstProblem(result: unknown): { at: string; message: string } | null {
  if (!isObject(result)) return { at: '', message: 'must be object' };
  if (!has(result, 'content')) return { at: '', message: "must have required property 'content'" };
  const { content } = result;
  if (!Array.isArray(content)) return { at: '/content', message: 'must be array' };
  for (let i = 0; i < content.length; i += 1) {
    const block: unknown = content[i];
    const at = `/content/${i}`;
    if (!isObject(block)) return { at, message: 'must be object' };
    if (!has(block, 'type')) return { at, message: "must have required property 'type'" };
    if (typeof block.type !== 'string') return { at: `${at}/type`, message: 'must be string' };
    const fields = has(BLOCK_FIELDS, block.type) ? BLOCK_FIELDS[block.type] : [];
    for (const field of fields) {
      if (!has(block, field)) return { at, message: `must have required property '${field}'` };
      if (typeof block[field] !== 'string') return { at: `${at}/${field}`, message: 'must be string' };
    }
  }
  if (has(result, 'structuredContent') && !isObject(result.structuredContent)) return { at: '/structuredContent', message: 'must be object' };
  if (has(result, 'isError') && typeof result.isError !== 'boolean') return { at: '/isError', message: 'must be boolean' };
  if (has(result, 'resultType') && typeof result.resultType !== 'string') return { at: '/resultType', message: 'must be string' };
  if (has(result, '_meta') && !isObject(result._meta)) return { at: '/_meta', message: 'must be object' };
  return null;
}
