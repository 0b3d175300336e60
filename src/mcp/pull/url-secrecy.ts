/**
 * Whether a server URL may be written into a generated file. Pure.
 *
 * A URL can be a credential: subako's own capability URLs (`/mcp/<256-bit token>`, see capability-router)
 * are nothing but a token, and other servers put API keys in the query or the user-info. A generated file
 * is committed and shared, so it must never hold one. The rule is conservative — a URL is written only when
 * every part of it looks like words a person typed:
 *
 * - no user-info, no query string, no fragment (any of them can carry a key);
 * - every host label and path segment splits (on `-`, `_`, `.`, `~`, `:`) into pieces that are each short
 *   (at most 4 characters), a plain word (letters only, one case or Capitalized, at most 16), or a short
 *   number (at most 8 digits), and a segment of 12 or more characters does not mix letters and digits. A
 *   random token mixes letters and digits, or cases, or is long, and fails. (A key of all-capital letter
 *   groups, `ABCD-EFGH-…`, passes: `--url-env` forces the variable for such URLs.)
 *
 * A URL that fails is "secret": the file names an environment variable instead. A public URL wrongly judged
 * secret costs only convenience; the opposite would leak, so doubtful cases are secret.
 */

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
 * The environment variable a generated file reads its URL from: `SUBAKO_<NAME>_URL`, NAME from the output
 * file's name (`github-tools.ts` → `SUBAKO_GITHUB_TOOLS_URL`).
 */
export function urlVariableFor(outFile: string): string {
  const base = outFile.split(/[\\/]/).pop() ?? '';
  const stem = base.replace(/\.(?:[cm]?ts|tsx)$/i, '').toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return `SUBAKO_${stem === '' ? 'MCP' : stem}_URL`;
}

const VARIABLE = /^[A-Z_][A-Z0-9_]*$/;

/** Checks a variable name given by the user; throws TypeError naming what is accepted. */
export function checkUrlVariable(name: string): string {
  if (!VARIABLE.test(name)) throw new TypeError(`"${name}" is not an environment variable name: use capitals, digits and _ (e.g. SUBAKO_TOOLS_URL)`);
  return name;
}
