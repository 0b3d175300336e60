/**
 * What a person deciding a call is shown of it, pure: its arguments exactly as the tool will receive them (their
 * JSON), with one exception — a value of the session's own vault secrets, found by value wherever it sits (in any
 * string, under any key, or in a key itself), is hidden as `[redacted]`, and the view names each place that hides
 * one (`hidden`, JSON Pointers), so a literal "[redacted]" the agent wrote is told apart from a secret the tool will
 * get there. Nothing is hidden for the name of its key: a key that merely looks secret (`bypass_review`, `token`)
 * shows its value, since that value runs. Nothing is cut: arguments that cannot be shown whole are not shown at
 * all, and the caller decides what that means (approvals.ts: held for an operator, or not held).
 *
 * The call log keeps its own, key-redacted and bounded copy for its own readers (common/redact.ts); this is not it.
 */
import { REDACTED, redactText } from '../../common/index.js';

/** The arguments as an approver reads them, and where a vault secret was hidden in them. */
export interface ShownArguments {
  arguments: unknown;
  /** JSON Pointers (RFC 6901) to each string, or member whose key, held a secret now shown as `[redacted]`. */
  hidden: string[];
}

/**
 * How deep the arguments nest: 1 for an object of scalars, one more for each object or array inside. Walked
 * without recursion and given up past `stopAfter` (answering `stopAfter + 1`), so no nesting a caller sends can
 * exhaust the stack here.
 */
export function nestingDepth(value: unknown, stopAfter: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > stopAfter) return stopAfter + 1;
    deepest = Math.max(deepest, depth);
    for (const child of Array.isArray(item) ? item : Object.values(item as Record<string, unknown>)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * The arguments an approver is shown (their nesting already checked to be bounded: the walk recurses). The value
 * shown is the arguments' JSON form, which is what the tool receives; `secrets` are the session's vault values.
 */
export function showArguments(args: unknown, secrets: readonly string[]): ShownArguments {
  const hidden: string[] = [];
  const json = JSON.parse(JSON.stringify(args) ?? 'null') as unknown;
  return { arguments: hide(json, secrets, '', hidden), hidden };
}

function hide(value: unknown, secrets: readonly string[], pointer: string, hidden: string[]): unknown {
  if (typeof value === 'string') {
    const shown = redactText(value, secrets);
    if (shown !== value) hidden.push(pointer);
    return shown;
  }
  if (Array.isArray(value)) return value.map((item, i) => hide(item, secrets, `${pointer}/${i}`, hidden));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const hiddenKey = redactText(key, secrets);
    let shownKey = hiddenKey;
    if (hiddenKey !== key) {
      // Two keys that differ only by a secret would be one once hidden: each stays apart, and is named.
      const taken = (name: string) => Object.hasOwn(out, name) || Object.hasOwn(value, name);
      for (let n = 2; taken(shownKey); n += 1) shownKey = `${hiddenKey} (${n})`;
      hidden.push(`${pointer}/${escapePointer(shownKey)}`);
    }
    const shown = hide(item, secrets, `${pointer}/${escapePointer(shownKey)}`, hidden);
    // Defined, not assigned: a key "__proto__" is a member like any other, and shown as one.
    Object.defineProperty(out, shownKey, { value: shown, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * JSON a person reads in a plain-text dialog: the same JSON (it parses to the same value), with every character
 * that would not show as itself escaped as `\uXXXX` — controls, format characters such as the bidirectional
 * overrides that would reorder what the person sees, the invisible tag characters, separators and spaces other than
 * the plain one, unassigned and private code points — and only inside strings,
 * where JSON allows escapes.
 */
export function visibleJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/(?! )[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Cs}\p{Co}\p{Cn}]/gu,
    // A character past U+FFFF (the tag characters, say) is escaped as its two UTF-16 halves, as JSON spells it.
    (c) => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''));
}

/** The bounds of an elicitation that shows a call whole: past either, the call is held for an operator instead. */
export const MAX_ELICITATION_MESSAGE_CHARS = 8_192;
export const MAX_ELICITED_DEPTH = 32;

/**
 * The message of an elicitation asking the end user to approve one call, with its whole arguments; null when they
 * cannot be shown whole in one (nested deeper than MAX_ELICITED_DEPTH, or a message longer than
 * MAX_ELICITATION_MESSAGE_CHARS): a message is never clipped.
 */
export function approvalMessage(tool: string, args: Record<string, unknown>, secrets: readonly string[]): string | null {
  if (nestingDepth(args, MAX_ELICITED_DEPTH) > MAX_ELICITED_DEPTH) return null;
  const shown = showArguments(args, secrets);
  const where = shown.hidden.length === 0 ? ''
    : ` A secret of the session's vaults is shown as ${REDACTED} at ${shown.hidden.map(visibleJson).join(', ')}: the tool receives the secret itself there.`;
  const message = `The agent asks to call the tool ${tool} with these arguments: ${visibleJson(shown.arguments)}.${where} Approve this one call?`;
  return message.length <= MAX_ELICITATION_MESSAGE_CHARS ? message : null;
}
