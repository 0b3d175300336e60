/**
 * The validator the SDK client checks a remote tool's `structuredContent` with, against the tool's
 * `outputSchema`, after each call. The SDK's default runs the server's patterns on the backtracking engine: a
 * hostile server's outputSchema and its own answer together could freeze the event loop. This one is
 * subako's bounded engine (common/json-schema.ts, origin `untrusted`): linear-time patterns, a time budget,
 * a refusal naming the keyword. As everywhere in subako, `format` is an annotation.
 */
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/client';
import { untrustedCheck, type SchemaSubject } from '../common/index.js';
import type { JsonSchema } from '../tool.js';

const STRUCTURED_CONTENT: SchemaSubject = Object.freeze({ whole: 'the structured content', part: 'structured content at', code: 'result' });

export const boundedOutputValidator: jsonSchemaValidator = {
  // Throws InvalidSchemaError for a schema it cannot use: the SDK then refuses the call before sending it.
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const check = untrustedCheck(schema as JsonSchema, STRUCTURED_CONTENT);
    return (input: unknown) => {
      const checked = check(input);
      return checked.ok
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: checked.problems.map((problem) => problem.message).join('; ') };
    };
  },
};
