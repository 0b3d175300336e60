/**
 * A zod schema of the API (server/api/) as JSON Schema 2020-12: what the router checks a body against and what
 * the OpenAPI document shows, the same object for both (one conversion per schema, kept). Keywords that say
 * nothing are left out so the document reads as if written by hand: the bounds of a safe integer, the
 * `additionalProperties: {}` of an open object, the `propertyNames: {type: string}` of a record (JSON's names
 * are strings) and an empty `properties`.
 */
import { toJSONSchema, type ZodType } from 'zod';
import type { JsonSchema } from '../tool.js';

const converted = new WeakMap<ZodType, JsonSchema>();

export function jsonSchemaOf(schema: ZodType): JsonSchema {
  const known = converted.get(schema);
  if (known) return known;
  // io 'input': an object says what it holds without `additionalProperties: false`, unless declared strict.
  const { $schema: _dialect, ...rest } = toJSONSchema(schema, { io: 'input', override: ({ jsonSchema }) => leaveOutNoOps(jsonSchema) }) as JsonSchema;
  converted.set(schema, rest);
  return rest;
}

function leaveOutNoOps(node: Record<string, unknown>): void {
  if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
  if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
  if (isEmptyObject(node.additionalProperties)) delete node.additionalProperties;
  if (isEmptyObject(node.properties)) delete node.properties;
  const names = node.propertyNames as Record<string, unknown> | undefined;
  if (names && Object.keys(names).length === 1 && names.type === 'string') delete node.propertyNames;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
