/**
 * The `subako_http` host module (ABI 1, defined in subako-http-abi.ts), inside the worker: `request` reads the
 * request bytes, bridges them to the caller's `http` handler (relayed by the sandbox process's main thread
 * when guests run in one) and holds the reply; `read_response` copies
 * the held reply into guest memory and forgets it.
 */
import type { BridgeCall } from './bridge-client.js';
import { HTTP_ABI_MISUSE, NO_NETWORK_REPLY, httpErrorAnswer, type SubakoHttpFunction } from './subako-http-abi.js';

const encoder = new TextEncoder();

/** One implementation per import of the ABI table: a name added there and not here does not compile. */
export type SubakoHttpImports = Record<SubakoHttpFunction, (ptr: number, len: number) => number>;

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
      else held = encoder.encode(JSON.stringify(httpErrorAnswer('connection', reply.error)));
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
