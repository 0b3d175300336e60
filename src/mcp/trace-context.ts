/**
 * W3C Trace Context (`traceparent`) as MCP carries it: a request's `_meta.traceparent` (the SDK's
 * TRACEPARENT_META_KEY). A value is taken only when it is a well-formed `traceparent` of a version this reader
 * knows the layout of (`00`), or of a later one read by the same first four fields, as the W3C specification
 * says a reader does; anything else is dropped, never passed on: it goes into call records, upstream requests
 * and HTTP headers.
 */

/** The `_meta` key, and the HTTP header, that carry it. */
export const TRACEPARENT = 'traceparent';

const TRACEPARENT_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** A later version: the same first fields, then more after a dash (the specification's forward-compatible reading). */
const TRACEPARENT_LATER = /^([0-9a-e][0-9a-f]|f[0-9a-e])-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^\s]*)?$/;
const ALL_ZERO = /^0+$/;

/** The value when it is a valid `traceparent` (trace id and parent id not all zeros), else undefined. */
export function parseTraceparent(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 256) return undefined;
  const match = TRACEPARENT_00.exec(value);
  if (match) return ALL_ZERO.test(match[1]) || ALL_ZERO.test(match[2]) ? undefined : value;
  const later = TRACEPARENT_LATER.exec(value);
  if (!later || later[1] === '00') return undefined;
  if (ALL_ZERO.test(later[2]) || ALL_ZERO.test(later[3])) return undefined;
  // Passed on as the version this reader knows: the fields it understood, version 00.
  return `00-${later[2]}-${later[3]}-${later[4]}`;
}

/** The `traceparent` a request's `_meta` carries, when valid. */
export function traceparentOf(meta: unknown): string | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  return parseTraceparent((meta as Record<string, unknown>)[TRACEPARENT]);
}
