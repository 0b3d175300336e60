/**
 * Header rules of `subako_http`, pure: which names a guest may send, which are dropped because they
 * belong to the connection (the host owns framing), and how response headers are shaped for the guest.
 */

/**
 * Connection-level and framing headers. The host decides these itself; a guest's values are dropped
 * silently, as the ABI page says ("connection headers such as host and content-length are dropped").
 */
export const CONNECTION_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
  'expect',
  'http2-settings',
]);

/** Guest headers that carry the guest's own authority; dropped on a hop to another origin. */
export const CROSS_ORIGIN_DROPPED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'proxy-authorization',
]);

/** Headers that describe a request body; dropped together with the body when a redirect turns it into GET. */
export const BODY_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-encoding',
  'content-language',
  'content-location',
]);

// RFC 9110 token characters.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HAS_UPPER = /[A-Z]/;

export type HeaderNameProblem = 'not_token' | 'upper_case';

/** Why a header name is unacceptable, or null when it is a valid lowercase token. */
export function headerNameProblem(name: string): HeaderNameProblem | null {
  if (!TOKEN.test(name)) return 'not_token';
  if (HAS_UPPER.test(name)) return 'upper_case';
  return null;
}

/**
 * A field value that can go on the wire: no NUL, CR or LF, no other control character but tab, and only
 * code points that fit one byte (HTTP/1.1 field values are octets; anything else cannot be sent as given).
 */
export function isValidHeaderValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x09) continue;
    if (c < 0x20 || c === 0x7f || c > 0xff) return false;
  }
  return true;
}

/**
 * Shapes response headers for the guest: lowercase names, repeated headers joined with ", ".
 * Accepts undici's shape: a string, or a string[] for a repeated header, per name.
 */
export function normalizeResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [rawName, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const name = rawName.toLowerCase();
    const joined = Array.isArray(value) ? value.join(', ') : value;
    out[name] = name in out ? `${out[name]}, ${joined}` : joined;
  }
  // A plain object for JSON.stringify, keeping insertion order.
  return { ...out };
}
