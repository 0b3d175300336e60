/**
 * The `subako_http` host module (ABI 1), inside the worker: `request(ptr, len) -> len` reads the
 * request bytes, bridges them to the main thread's `http` handler and holds the reply;
 * `read_response(ptr, len) -> 0` copies the held reply into guest memory and forgets it.
 */
import type { BridgeCall } from './bridge-client.js';

/** Negative returns: misuses of the ABI, as the spec numbers them. */
export const HTTP_ABI_MISUSE = Object.freeze({ outOfRange: -1, nothingHeld: -2, lengthMismatch: -3 });

export const NO_NETWORK_REPLY = JSON.stringify({
  error: { kind: 'host_not_allowed', message: 'this run has no network access' },
});

export function connectionErrorReply(message: string): string {
  return JSON.stringify({ error: { kind: 'connection', message } });
}

const encoder = new TextEncoder();

export interface SubakoHttpImports {
  request(ptr: number, len: number): number;
  read_response(ptr: number, len: number): number;
}

/** `memory` returns the guest's memory, or undefined before the instance exists. */
export function makeSubakoHttpImports(
  memory: () => WebAssembly.Memory | undefined,
  bridge: BridgeCall,
): SubakoHttpImports {
  let held: Uint8Array | null = null;

  /** The guest's bytes at [ptr, ptr+len), or null when that range is not inside its memory. */
  function guestRange(ptr: number, len: number): Uint8Array | null {
    const mem = memory();
    if (!mem) return null;
    const start = ptr >>> 0;
    const length = len >>> 0;
    if (start + length > mem.buffer.byteLength) return null;
    return new Uint8Array(mem.buffer, start, length);
  }

  return {
    request(ptr, len) {
      const range = guestRange(ptr, len);
      if (!range) return HTTP_ABI_MISUSE.outOfRange;
      const reply = bridge('http', range.slice());
      if ('ok' in reply) held = reply.ok;
      else if ('missing' in reply) held = encoder.encode(NO_NETWORK_REPLY);
      else held = encoder.encode(connectionErrorReply(reply.error));
      return held.length;
    },
    read_response(ptr, len) {
      const range = guestRange(ptr, len);
      if (!range) return HTTP_ABI_MISUSE.outOfRange;
      if (!held) return HTTP_ABI_MISUSE.nothingHeld;
      if (range.length !== held.length) return HTTP_ABI_MISUSE.lengthMismatch;
      range.set(held);
      held = null;
      return 0;
    },
  };
}
