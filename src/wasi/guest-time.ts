/**
 * Time as a guest sees it: every clock counts from the start of the run, in coarse ticks.
 *
 * Why. The host's raw monotonic clock is the host's uptime, and one nanosecond timer shared by every tenant
 * of the process: a guest could fingerprint the host, line its runs up with other tenants' work, and time
 * cache effects (Spectre-style side channels) with it. A guest needs time for timeouts, elapsed-time
 * measures and timestamps, none of which need more than a tenth of a millisecond.
 *
 * The references, and what we do:
 * - wasmtime (wasi-common preview 1, wasmtime-wasi): the monotonic clock is the time since the WASI context
 *   was made, so each instance starts near zero; the CPU-time clocks are not offered. Resolution is the
 *   host's, unless the embedder installs its own clock. Here every run starts near zero (a reused worker
 *   resets the clock for each run), and the CPU-time clocks count the run's wall time from zero too.
 * - Browsers (High Resolution Time, after Spectre): `performance.now()` counts from the context's time origin
 *   and is coarsened to 100 µs, or 5 µs only in cross-origin-isolated contexts; Chromium also jitters where
 *   each tick falls (a keyed hash per tick), so spinning on a tick edge does not recover the fine clock.
 *   Guests of one process are not isolated from each other (they share it, like a non-isolated page shares
 *   a renderer), so they get the non-isolated 100 µs, jittered the same way with a key drawn per run.
 * - The wall clock (realtime) is read once at the start of the run and advanced on the same elapsed time,
 *   in whole milliseconds (a date needs no more, and Date.now() gives no more), so it never jumps in a run.
 *
 * Every reading is a multiple of its resolution (what clock_res_get reports), and never decreases.
 */
import { takeRandomBytes } from '../common/lean.js';

/** Tick of the monotonic and the CPU-time clocks: 100 µs, as browsers outside cross-origin isolation. */
export const MONOTONIC_RESOLUTION_NS = 100_000;
/** Tick of the wall clock: 1 ms. */
export const REALTIME_RESOLUTION_NS = 1_000_000;

const TWO_TO_32 = 4_294_967_296;

/** A number in [0, 1) that only the key's holder can foresee for this tick (murmur3's 32-bit finaliser). */
function tickFraction(tick: number, key: number): number {
  let h = Math.imul((tick >>> 0) ^ key, 0x9e3779b1) ^ Math.floor(tick / TWO_TO_32);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / TWO_TO_32;
}

/**
 * `elapsedNs` as a multiple of `resolutionNs`: the tick it is in, or the next one once it has passed a
 * threshold placed in that tick by the key. Non-decreasing in `elapsedNs` (within a tick the step happens
 * once; the next tick starts at least where this one can end), and never more than one tick away from it.
 */
export function coarsen(elapsedNs: number, resolutionNs: number, key: number): number {
  const tick = Math.floor(elapsedNs / resolutionNs);
  const threshold = tickFraction(tick, key) * resolutionNs;
  return (elapsedNs - tick * resolutionNs >= threshold ? tick + 1 : tick) * resolutionNs;
}

/** A run's two jitter keys: fresh random bytes, from the thread's pool (one system call per run cost ~16 µs). */
function newKeys(): Uint32Array {
  return new Uint32Array(takeRandomBytes(8).buffer);
}

/** The clocks of one run. `reset()` starts a new run: zero again, and new jitter keys. */
export class Clock {
  private startNs = process.hrtime.bigint();
  private startRealtimeNs = BigInt(Date.now()) * 1_000_000n;
  private keys = newKeys();

  reset(): void {
    this.startNs = process.hrtime.bigint();
    this.startRealtimeNs = BigInt(Date.now()) * 1_000_000n;
    this.keys = newKeys();
  }

  /** Nanoseconds since the run began, on the host's clock; exact as a number for 104 days. */
  private elapsedNs(): number {
    return Number(process.hrtime.bigint() - this.startNs);
  }

  /** The guest's monotonic clock: time since the run began, in 100 µs ticks. */
  monotonic(): bigint {
    return BigInt(coarsen(this.elapsedNs(), MONOTONIC_RESOLUTION_NS, this.keys[0]));
  }

  /** The guest's process and thread CPU-time clocks: the run's wall time, as the monotonic clock. */
  cpuTime(): bigint {
    return this.monotonic();
  }

  /** The wall clock: the date at the start of the run, advanced in whole milliseconds. */
  realtime(): bigint {
    return this.startRealtimeNs + BigInt(coarsen(this.elapsedNs(), REALTIME_RESOLUTION_NS, this.keys[1]));
  }
}
