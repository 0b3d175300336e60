/**
 * Redaction for the call log, pure. Two rules, both applied:
 *   - a value under a key that names a secret (password, token, api_key, secret, authorization, cookie,
 *     credential, private_key) is replaced whatever it is;
 *   - any string that contains one of the session's known secret values (its vault credentials) has that
 *     value replaced, wherever it sits.
 * Arguments are bounded too: the log keeps at most 64 KiB of them.
 */
/**
 * The one redaction marker: what stands where a secret was, in the call log, in a Secret's every string
 * form, and in a text a server echoed a credential back into.
 */
export const REDACTED = '[redacted]';

const SECRET_KEY = /pass(word|phrase)?|secret|token|api[-_]?key|authorization|cookie|credential|private[-_]?key/i;
const MAX_DEPTH = 32;
const MAX_LOGGED_BYTES = 64 * 1024;

export function redactArguments(value: unknown, knownSecrets: readonly string[] = []): unknown {
  const secrets = knownSecrets.filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  const redacted = walk(value, secrets, 0);
  const text = JSON.stringify(redacted) ?? 'null';
  if (text.length <= MAX_LOGGED_BYTES) return redacted;
  return { truncated: true, preview: text.slice(0, MAX_LOGGED_BYTES) };
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
