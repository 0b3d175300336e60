/** The sandbox's own errors: refusals of the caller's request, never a guest's failure (that is a RunOutcome). */
import { SubakoError } from '../errors.js';

export const SANDBOX_ERROR = Object.freeze({
  /** The bytes are not a module WebAssembly can compile. */
  compile: 'sandbox.compile',
  /** run() was given limits whose memory cap is not the one the module was compiled with. */
  memoryMismatch: 'sandbox.memory_mismatch',
  /** The pool was closed. */
  closed: 'sandbox.closed',
  /** The sandbox process ended while it compiled the module (a new one serves the next request). */
  crashed: 'sandbox.crashed',
  /** Sandbox workers keep failing to start, so no run can be served. */
  workerFailed: 'sandbox.worker_failed',
});

export class SandboxError extends SubakoError {}

/** A module runs only with the memory cap it was compiled with (the cap is written into its bytes). */
export function assertSameMemoryCap(module: { memoryBytes: number }, request: { limits: { memoryBytes: number } }): void {
  if (request.limits.memoryBytes === module.memoryBytes) return;
  throw new SandboxError(
    SANDBOX_ERROR.memoryMismatch,
    `this module was compiled for a memory cap of ${module.memoryBytes} bytes, not ${request.limits.memoryBytes}; ` +
      'compile it again with the cap the run asks for',
  );
}

/** The module's initial memory is over the cap: defined once, by the rewrite that enforces the cap. */
export { MemoryCapError, InstrumentError } from '../wasm/first-call.js';
