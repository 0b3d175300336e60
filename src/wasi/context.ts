/**
 * The per-run state every preview 1 function reads: guest memory, the descriptor table, the caller's
 * options and the clocks. Built once per WasiHost; the function families close over it. A host that is
 * reused for another run (WasiHost.reset) keeps these objects, resets them, and swaps `options`: the
 * functions read `ctx.options` when called, never keep it.
 */
import type { WasiOptions } from './types.js';
import { GuestMemory } from './memory.js';
import { DescriptorTable } from './descriptors.js';
import type { Clock } from './guest-time.js';
import type { EntryBudget } from './entry-budget.js';

/** The clocks of a run: each starts near zero for every run, in coarse ticks (guest-time.ts says why). */
export { Clock } from './guest-time.js';

export interface WasiContext {
  options: WasiOptions;
  readonly memory: GuestMemory;
  readonly table: DescriptorTable;
  readonly clock: Clock;
  /** Directory entries this run created (each charged to its write budget). */
  readonly entries: EntryBudget;
}

/** A preview 1 function as the import object holds it (wasm passes i32 as number, i64 as bigint). */
export type HostFunction = (...args: never[]) => number | void;
export type FunctionFamily = Record<string, HostFunction>;

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
