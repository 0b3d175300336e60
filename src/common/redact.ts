/**
 * Redaction for the call log, pure. Two rules, both applied:
 *   - a value under a key that names a secret (password, token, api_key, secret, authorization, cookie,
 *     credential, private_key) is replaced whatever it is;
 *   - any string that contains one of the session's known secret values (its vault credentials) has that
 *     value replaced, wherever it sits.
 * What the log keeps is bounded too: at most 64 KiB of a call's arguments, and as much of its result
 * (platform/'s call preview, which cuts with `cutToBytes`).
 */
/**
 * The one redaction marker: what stands where a secret was, in the call log, in a Secret's every string
 * form, and in a text a server echoed a credential back into.
 */
export const REDACTED = '[redacted]';

const SECRET_KEY = /pass(word|phrase)?|secret|token|api[-_]?key|authorization|cookie|credential|private[-_]?key/i;
const MAX_DEPTH = 32;
/** The most the call log keeps of a call's arguments, and of its result: bytes of JSON, as UTF-8. */
export const CALL_LOG_PREVIEW_BYTES = 64 * 1024;

export function redactArguments(value: unknown, knownSecrets: readonly string[] = []): unknown {
  const secrets = knownSecrets.filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  const redacted = walk(value, secrets, 0);
  const text = JSON.stringify(redacted) ?? 'null';
  if (Buffer.byteLength(text) <= CALL_LOG_PREVIEW_BYTES) return redacted;
  return { truncated: true, preview: cutToBytes(text, CALL_LOG_PREVIEW_BYTES) };
}

/** The longest start of `text` that is at most `maxBytes` in UTF-8, never splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text; // no UTF-16 unit takes more than 3 bytes
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(Math.max(0, maxBytes)));
  return text.slice(0, read);
}

/** Replaces every known secret value inside a piece of text (stderr, messages). */
export function redactText(text: string, knownSecrets: readonly string[] = []): string {
  let out = text;
  for (const secret of knownSecrets.filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)) {
    out = out.split(secret).join(REDACTED);
  }
  return out;
}

function walk(value: unknown, secrets: readonly string[], depth: number): unknown {
  if (depth > MAX_DEPTH) return '[too deep]';
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => walk(item, secrets, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      out[key] = SECRET_KEY.test(key) ? REDACTED : walk(item, secrets, depth + 1);
    }
    return out;
  }
  return value;
}
