/**
 * Classifies one stdout line of a guest as the ABI page reads it. Pure.
 * - a request from the module (method + id) breaks the call: a stateless server sends none;
 * - a notification (method, no id) is ignored, but for `notifications/progress`, which the call may relay;
 * - a response carries `id` and exactly one of `result` / `error`;
 * - anything else is not a JSON-RPC message.
 */
export type GuestMessage =
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'request'; method: string }
  | { kind: 'result'; id: string | number; result: unknown }
  | { kind: 'error'; id: string | number | null; error: { code?: unknown; message?: unknown } }
  | { kind: 'invalid'; why: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is string | number => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

export function classifyLine(line: string): GuestMessage {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
    return { kind: 'invalid', why: 'the line is not JSON' };
  }
  if (!isObject(message)) return { kind: 'invalid', why: 'the line is JSON but not an object' };
  if (message.jsonrpc !== '2.0') return { kind: 'invalid', why: 'the object has no "jsonrpc": "2.0"' };
  if ('method' in message) {
    if (typeof message.method !== 'string') return { kind: 'invalid', why: '"method" is not a string' };
    if (!('id' in message)) return { kind: 'notification', method: message.method, params: message.params };
    return { kind: 'request', method: message.method };
  }
  const hasResult = 'result' in message;
  const hasError = 'error' in message;
  if (hasResult === hasError) return { kind: 'invalid', why: 'a response needs exactly one of "result" and "error"' };
  if (hasError) {
    if (!isObject(message.error)) return { kind: 'invalid', why: '"error" is not an object' };
    if (message.id !== null && !isId(message.id)) return { kind: 'invalid', why: 'the response "id" is not a string or a number' };
    return { kind: 'error', id: (message.id ?? null) as string | number | null, error: message.error };
  }
  if (!isId(message.id)) return { kind: 'invalid', why: 'the response "id" is not a string or a number' };
  return { kind: 'result', id: message.id, result: message.result };
}
