/**
 * The per-run state every preview 1 function reads: guest memory, the descriptor table, the caller's
 * options and the clocks. Built once per WasiHost; the function families close over it. A host that is
 * reused for another run (WasiHost.reset) keeps these objects, resets them, and swaps `options`: the
 * functions read `ctx.options` when called, never keep it.
 */
import type { WasiOptions } from './types.js';
import { GuestMemory } from './memory.js';
import { DescriptorTable } from './descriptors.js';

export interface WasiContext {
  options: WasiOptions;
  readonly memory: GuestMemory;
  readonly table: DescriptorTable;
  readonly clock: Clock;
}

/** A preview 1 function as the import object holds it (wasm passes i32 as number, i64 as bigint). */
export type HostFunction = (...args: never[]) => number | void;
export type FunctionFamily = Record<string, HostFunction>;

/**
 * Time as the guest sees it. Monotonic is the host's high-resolution clock; realtime is the wall
 * clock read once at start and advanced by the monotonic clock (so it never jumps within a run);
 * the CPU-time clocks count from the start of the run on the monotonic clock.
 */
export class Clock {
  private startMonotonic = process.hrtime.bigint();
  private startRealtime = BigInt(Date.now()) * 1_000_000n;

  /** Starts the clocks afresh for a new run. */
  reset(): void {
    this.startMonotonic = process.hrtime.bigint();
    this.startRealtime = BigInt(Date.now()) * 1_000_000n;
  }

  monotonic(): bigint {
    return process.hrtime.bigint();
  }

  realtime(): bigint {
    return this.startRealtime + (process.hrtime.bigint() - this.startMonotonic);
  }

  sinceStart(): bigint {
    return process.hrtime.bigint() - this.startMonotonic;
  }
}

/**
 * An error thrown by a callback of the caller (stdout/stderr limits, the stdin source): it must end
 * the run as the caller intended, so the guard rethrows the original instead of answering an errno.
 */
export class CallerError {
  constructor(readonly error: unknown) {}
}

export function callCaller<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new CallerError(error);
  }
}
