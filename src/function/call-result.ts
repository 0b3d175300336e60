/**
 * Is an answer a valid MCP CallToolResult? An answer that is not is a crash (`bad_result`), because the
 * model cannot be shown it. Checked by the one JSON Schema validator (common/) against a schema compiled once.
 */
import { compileSchema } from '../common/index.js';

const stringField = { type: 'string' } as const;
const requireWhen = (type: string, fields: string[]) => ({
  if: { properties: { type: { const: type } } },
  then: { required: fields, properties: Object.fromEntries(fields.map((f) => [f, stringField])) },
});

const CALL_TOOL_RESULT_SCHEMA = {
  type: 'object',
  required: ['content'],
  properties: {
    content: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type'],
        properties: { type: stringField },
        allOf: [
          requireWhen('text', ['text']),
          requireWhen('image', ['data', 'mimeType']),
          requireWhen('audio', ['data', 'mimeType']),
          requireWhen('resource_link', ['uri', 'name']),
        ],
      },
    },
    structuredContent: { type: 'object' },
    isError: { type: 'boolean' },
    resultType: stringField,
    _meta: { type: 'object' },
  },
};

const validate = compileSchema(CALL_TOOL_RESULT_SCHEMA);

/** Returns null when `result` is a CallToolResult, else a sentence saying what is wrong. */
export function callToolResultProblem(result: unknown): string | null {
  if (validate(result)) return null;
  const error = validate.errors?.[0];
  const at = error?.instancePath ? `at ${error.instancePath}` : 'at the top';
  return `the answer is not a CallToolResult: ${at}, ${error?.message ?? 'invalid'}`;
}
