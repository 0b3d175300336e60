/**
 * What the routes share of their descriptions: the query parameters of a page (JSON Schema, checked by the
 * router one by one) and the error answer. Bodies and answers are declared in server/api/.
 */
import type { JsonSchema } from '../tool.js';
import { ErrorBody } from './api/index.js';

/** A refusal the route documents: its description, with the error answer's schema. */
export const errorResponse = (description: string) => ({ description, schema: ErrorBody });

export const PAGE_QUERY: Record<string, JsonSchema> = {
  limit: {
    type: 'integer', minimum: 1, maximum: 200,
    description: 'Items per page (1-200, default 50). A page also ends before its items pass 1 MiB of JSON (it holds at least one); follow next_cursor for the rest.',
  },
  after: { type: 'string', minLength: 1, maxLength: 512, description: 'The next_cursor of the previous page.' },
};

export const APPROVAL_PAGE_QUERY: Record<string, JsonSchema> = {
  limit: { type: 'integer', minimum: 1, maximum: 32, description: 'Items per page (1-32, default 16): each carries its call\'s whole arguments.' },
  after: { type: 'string', minLength: 1, maxLength: 512, description: 'The next_cursor of the previous page.' },
};
