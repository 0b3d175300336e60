/**
 * Which parts of a server URL may be a credential, one rule for every place a URL is shown or kept. Pure.
 *
 * A URL can be a credential: subako's own capability URLs (`/mcp/<256-bit token>`, see capability-router)
 * are nothing but a token, and other servers put API keys in the query or the user-info. So a URL is written
 * into a generated file (`subako mcp pull`), and shown whole in an error, a log line, a call record or an API
 * answer, only when every part of it looks like words a person typed (the rule is conservative):
 *
 * - no user-info, no query string, no fragment (any of them can carry a key);
 * - every host label and path segment splits (on `-`, `_`, `.`, `~`, `:`) into pieces that are each short
 *   (at most 4 characters), a plain word (letters only, one case or Capitalized, at most 16), or a short
 *   number (at most 8 digits), and a segment of 12 or more characters does not mix letters and digits. A
 *   random token mixes letters and digits, or cases, or is long, and fails. (A key of all-capital letter
 *   groups, `ABCD-EFGH-…`, passes: `--url-env` forces the variable for such URLs.)
 *
 * A URL that fails is "secret": a generated file names an environment variable instead, and `redactUrl` shows
 * it with the doubtful parts replaced. A public URL wrongly judged secret costs only convenience; the opposite
 * would leak, so doubtful cases are secret.
 */
import { REDACTED } from './redact.js';

export interface UrlSecrecy {
  /** True when the URL must not be written into a file. */
  readonly secret: boolean;
  /** Why, for the pull's message (names the part, never its value). */
  readonly reasons: readonly string[];
}

const SHORT_PIECE = 4;
const LONGEST_WORD = 16;
const LONGEST_NUMBER = 8;
const MIXED_SEGMENT = 12;
const WORD = /^(?:[a-z]+|[A-Z][a-z]+|[A-Z]+)$/;
const NUMBER = /^[0-9]+$/;

/** True when a piece of a segment looks typed by a person rather than drawn at random. */
function isPlainPiece(piece: string): boolean {
  if (piece.length <= SHORT_PIECE) return /^[A-Za-z0-9]*$/.test(piece);
  if (WORD.test(piece)) return piece.length <= LONGEST_WORD;
  if (NUMBER.test(piece)) return piece.length <= LONGEST_NUMBER;
  return false;
}

/** A host label or path segment is plain when all its pieces are (percent-escapes and other signs are not). */
export function isPlainSegment(segment: string): boolean {
  // Short pieces may mix letters and digits (`v2`), but a long segment that does is a grouped key (`a1B2-c3D4-…`).
  if (segment.length >= MIXED_SEGMENT && /[0-9]/.test(segment) && /[A-Za-z]/.test(segment)) return false;
  return segment.split(/[-_.~:]/).every(isPlainPiece);
}

export function classifyServerUrl(text: string): UrlSecrecy {
  const url = new URL(text);
  const reasons: string[] = [];
  if (url.username !== '' || url.password !== '') reasons.push('it has user-info');
  if (url.search !== '' || text.includes('?')) reasons.push('it has a query string');
  if (url.hash !== '' || text.includes('#')) reasons.push('it has a fragment');
  if (!url.hostname.replace(/^\[|\]$/g, '').split('.').every(isPlainSegment)) reasons.push('its host has a label that may be a token');
  const segments = url.pathname.split('/').filter((s) => s !== '');
  if (!segments.every(isPlainSegment)) reasons.push('its path has a segment that may be a token');
  return { secret: reasons.length > 0, reasons };
}

/**
 * The URL as it may be shown anywhere (an error the model reads, a log line, a call record, the CLI, the API):
 * user-info gone, each query value and the fragment replaced by "[redacted]" (the names stay: they say what was
 * sent), and each path segment that may be a token (isPlainSegment) replaced too. Host and port stay: they say
 * where. Text that is not a URL is replaced whole: it cannot be told what part of it is safe.
 */
export function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    return REDACTED;
  }
  const path = url.pathname.split('/').map((segment) => (segment === '' || isPlainSegment(segment) ? segment : REDACTED)).join('/');
  const query = [...url.searchParams.keys()].map((name) => `${isPlainSegment(name) ? name : REDACTED}=${REDACTED}`).join('&');
  const userinfo = url.username !== '' || url.password !== '' ? `${REDACTED}@` : '';
  return `${url.protocol}//${userinfo}${url.host}${path}${query !== '' || url.search !== '' ? `?${query === '' ? REDACTED : query}` : ''}${url.hash !== '' ? `#${REDACTED}` : ''}`;
}

/** Every http(s) URL inside a text (an SDK's message may quote the one it fetched), each as redactUrl shows it. */
export function redactUrlsIn(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s"'<>`]+/gi, (found) => {
    // A sentence's closing punctuation is not the URL's (a "]" is, when it closes a "[" of its own: "[redacted]").
    const trail = /[.,;:)]+$/.exec(found)?.[0] ?? '';
    return redactUrl(found.slice(0, found.length - trail.length)) + trail;
  });
}
