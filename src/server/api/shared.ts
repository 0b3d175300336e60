/**
 * The pieces every resource's schemas are made of: names and version references as the API takes them, a
 * JSON object whose members are not described, a page of a list, and the error answer.
 */
import { z } from 'zod';

/** A package, skill or remote server name: lower case, digits, - and _, at most 64. */
export const name64 = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/);

/** A version as an agent asks for it: "latest" or an exact version. */
export const versionRef = z.string().regex(/^(latest|[A-Za-z0-9][A-Za-z0-9._+-]{0,63})$/);

export const stringList = (max: number) => z.array(z.string().min(1).max(512)).max(max);

/** A JSON object the API passes on without describing its members (a manifest, a tool's schema, a result). */
export const jsonObject = z.record(z.string(), z.unknown());

/** ISO 8601 times, as every record shows them. */
export const timestamp = z.string();

/** A list's page: `limit` items at most (and at most 1 MiB of JSON); `next_cursor` goes on from there. */
export const pageOf = <Item extends z.ZodType>(item: Item) => z.object({ items: z.array(item), next_cursor: z.string().nullable() });

export interface Page<Item> {
  items: Item[];
  next_cursor: string | null;
}

export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    problems: z.array(z.object({ code: z.string().optional(), message: z.string().optional() })).optional(),
    limit: z.enum(['session', 'agent']).describe('On 429: the limit that refused the call.').optional(),
    retry_after_ms: z.int().describe('On 429: when to try again, as Retry-After says in seconds.').optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;
