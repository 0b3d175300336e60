/**
 * The caller's code a run calls back into, the same way for the in-process pool (run.ts) and the sandbox process
 * (process-run.ts): its bridge handlers, and its output callbacks. Neither may take the host down.
 */
import { SubakoError } from '../errors.js';
import type { BridgeHandler, RunContext, RunRequest } from './types.js';

/** What a bridge call came to: the handler's bytes, its failure as the guest may see it, or no handler. */
export type BridgeAnswer = { ok: Uint8Array } | { error: string } | { missing: true };

/** What a guest sees when a bridge handler fails: our own errors are written to be shown, others are not. */
export function safeBridgeMessage(error: unknown): string {
  if (error instanceof SubakoError) return error.message;
  return 'the host could not complete the request';
}

/** Calls the run's handler for `channel`, if it has one (own properties only: never one from a prototype). */
export async function answerBridgeCall(request: RunRequest, channel: string, payload: Uint8Array, context: RunContext): Promise<BridgeAnswer> {
  const bridge = request.bridge as Record<string, BridgeHandler | undefined> | undefined;
  const handler = bridge && Object.hasOwn(bridge, channel) ? bridge[channel] : undefined;
  if (!handler) return { missing: true };
  try {
    const bytes = await handler(payload, context);
    if (!(bytes instanceof Uint8Array)) throw new TypeError('a bridge handler must resolve with bytes');
    return { ok: bytes };
  } catch (error) {
    return { error: safeBridgeMessage(error) };
  }
}

/**
 * Hands a chunk of output to the caller's callback. Returns why the run must stop when the callback threw (the
 * run cannot go on without its reader), else null.
 */
export function deliverOutput(callback: ((chunk: Uint8Array) => void) | undefined, chunk: Uint8Array): string | null {
  if (!callback) return null;
  try {
    callback(chunk);
    return null;
  } catch (error) {
    return `an output callback failed: ${String(error)}`;
  }
}
