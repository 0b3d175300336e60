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
/**
 * The id (as an Int32) of the last run whose stdin the main thread closed. End of file is a flag here
 * rather than a port message: the main thread sets it after posting every byte of that run's stdin,
 * so a worker that sees it set and then drains the port has all of them (see StdinReader).
 */
export const STDIN_CLOSED_RUN = 4;
/** BigInt64 slots (byte offsets 24 and 32). */
const WRITE_USED = 3;
const WRITE_LIMIT = 4;

const CONTROL_BYTES = 40;

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

/** How a run id is kept in an Int32 slot (ids wrap there; only equality is ever asked). */
export function runIdSlotValue(runId: number): number {
  return runId | 0;
}

/** Main thread: end of file on `runId`'s stdin, once everything written before was posted. */
export function closeStdinOf(block: ControlBlock, runId: number): void {
  Atomics.store(block.i32, STDIN_CLOSED_RUN, runIdSlotValue(runId));
  signal(block, STDIN_SEQ);
}

/** Worker: whether the main thread closed `runId`'s stdin. */
export function isStdinClosed(block: ControlBlock, runId: number): boolean {
  return Atomics.load(block.i32, STDIN_CLOSED_RUN) === runIdSlotValue(runId);
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
