/**
 * The small SharedArrayBuffer each worker shares with the main thread, created once per worker.
 * Sequence counters let the worker sleep in Atomics.wait (no CPU) until the main thread has posted
 * something on a MessagePort; the write budget is a 64-bit counter both threads draw on.
 */

/** Int32 slots. */
export const STDIN_SEQ = 0;
export const BRIDGE_SEQ = 1;
/** Never notified: the worker waits on it to sleep for a given time. */
export const SLEEP_SLOT = 2;
/** Output bytes the main thread has received, wrapping at 2^32 (the worker compares differences). */
export const OUTPUT_ACKED = 3;
/** BigInt64 slots (byte offsets 16 and 24). */
const WRITE_USED = 2;
const WRITE_LIMIT = 3;

const CONTROL_BYTES = 32;

export interface ControlBlock {
  readonly buffer: SharedArrayBuffer;
  readonly i32: Int32Array;
  readonly i64: BigInt64Array;
}

export function createControlBlock(): ControlBlock {
  return viewControlBlock(new SharedArrayBuffer(CONTROL_BYTES));
}

export function viewControlBlock(buffer: SharedArrayBuffer): ControlBlock {
  return { buffer, i32: new Int32Array(buffer), i64: new BigInt64Array(buffer) };
}

/** Wakes the worker waiting on `slot` after something was posted for it. */
export function signal(block: ControlBlock, slot: number, by = 1): void {
  Atomics.add(block.i32, slot, by);
  Atomics.notify(block.i32, slot);
}

/** Starts a run's write budget at zero with `limit` bytes allowed (done by the main thread before a run). */
export function resetWriteBudget(block: ControlBlock, limit: number): void {
  const clamped = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : Number.MAX_SAFE_INTEGER;
  Atomics.store(block.i64, WRITE_USED, 0n);
  Atomics.store(block.i64, WRITE_LIMIT, BigInt(clamped));
}

/** Takes `bytes` from the shared budget unless that would pass its limit; safe from both threads. */
export function tryConsumeWriteBudget(block: ControlBlock, bytes: number): boolean {
  if (!(bytes >= 0)) return false;
  const wanted = BigInt(Math.ceil(bytes));
  const limit = Atomics.load(block.i64, WRITE_LIMIT);
  for (;;) {
    const used = Atomics.load(block.i64, WRITE_USED);
    if (used + wanted > limit) return false;
    if (Atomics.compareExchange(block.i64, WRITE_USED, used, used + wanted) === used) return true;
  }
}

export function writeBudgetUsed(block: ControlBlock): number {
  return Number(Atomics.load(block.i64, WRITE_USED));
}
