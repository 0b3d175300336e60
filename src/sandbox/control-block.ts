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
/**
 * Offers of runs posted ahead to this worker while it is busy: two slots, each holding an offer token
 * or 0. A token's low bit names its slot. The worker starts such a run only if it can swap its token for
 * 0 first; the main thread takes an offer back the same way, so exactly one of them wins. Two slots,
 * because the run the main thread has already promoted (the worker's current one, perhaps not taken yet)
 * keeps its offer while the next one is made in the other slot.
 */
const OFFER_SLOTS = 5;
/** The id (as an Int32) of the run the write budget counts for; the worker sets it when a run starts. */
const BUDGET_RUN = 7;
/** BigInt64 slots (byte offsets 32 and 40). */
const WRITE_USED = 4;
const WRITE_LIMIT = 5;

const CONTROL_BYTES = 48;

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

/** Starts a run's write budget at zero with `limit` bytes allowed. */
export function resetWriteBudget(block: ControlBlock, limit: number): void {
  const clamped = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : Number.MAX_SAFE_INTEGER;
  Atomics.store(block.i64, WRITE_USED, 0n);
  Atomics.store(block.i64, WRITE_LIMIT, BigInt(clamped));
}

/** Worker: the budget now counts for `runId` (done as the run starts, before its guest runs). */
export function startRunBudget(block: ControlBlock, runId: number, limit: number): void {
  resetWriteBudget(block, limit);
  Atomics.store(block.i32, BUDGET_RUN, runIdSlotValue(runId));
}

/** Main thread: whether the budget counts for `runId` (false before its worker started it). */
export function budgetIsFor(block: ControlBlock, runId: number): boolean {
  return Atomics.load(block.i32, BUDGET_RUN) === runIdSlotValue(runId);
}

/** Main thread: offers a run posted ahead under `token` (non-zero; its low bit picks the slot). */
export function offerNext(block: ControlBlock, token: number): void {
  Atomics.store(block.i32, OFFER_SLOTS + (token & 1), token);
}

/** Either side: takes the offer `token`; true for exactly one taker, false once it was taken. */
export function takeOffer(block: ControlBlock, token: number): boolean {
  return token !== 0 && Atomics.compareExchange(block.i32, OFFER_SLOTS + (token & 1), token, 0) === token;
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

/** What the budget still allows. */
export function writeBudgetLeft(block: ControlBlock): number {
  return Number(Atomics.load(block.i64, WRITE_LIMIT) - Atomics.load(block.i64, WRITE_USED));
}

export function writeBudgetUsed(block: ControlBlock): number {
  return Number(Atomics.load(block.i64, WRITE_USED));
}
