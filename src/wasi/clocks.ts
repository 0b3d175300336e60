/**
 * clock_res_get, clock_time_get and random_get. The clocks count from the start of the run in coarse ticks
 * (guest-time.ts says why and which); clock_res_get reports exactly those ticks, and the precision a guest
 * asks for in clock_time_get cannot make a reading finer.
 */
import { randomFillSync } from 'node:crypto';
import { Errno } from './errno.js';
import { ClockId } from './constants.js';
import type { Clock, FunctionFamily, WasiContext } from './context.js';
import { MONOTONIC_RESOLUTION_NS, REALTIME_RESOLUTION_NS } from './guest-time.js';

/** The time on a preview 1 clock, or undefined for an unknown clock id. */
export function readClock(clock: Clock, id: number): bigint | undefined {
  switch (id) {
    case ClockId.REALTIME: return clock.realtime();
    case ClockId.MONOTONIC: return clock.monotonic();
    case ClockId.PROCESS_CPUTIME:
    case ClockId.THREAD_CPUTIME: return clock.cpuTime();
    default: return undefined;
  }
}

/** The tick of a clock, in nanoseconds, as clock_res_get reports it; undefined for an unknown clock id. */
export function clockResolution(id: number): bigint | undefined {
  switch (id) {
    case ClockId.REALTIME: return BigInt(REALTIME_RESOLUTION_NS);
    case ClockId.MONOTONIC:
    case ClockId.PROCESS_CPUTIME:
    case ClockId.THREAD_CPUTIME: return BigInt(MONOTONIC_RESOLUTION_NS);
    default: return undefined;
  }
}

/** Largest slice randomFillSync takes at once. */
const RANDOM_CHUNK = 1 << 30;

export function clockFunctions(ctx: WasiContext): FunctionFamily {
  const { memory, clock } = ctx;
  return {
    clock_res_get(id: number, ptr: number): number {
      memory.check(ptr >>> 0, 8);
      const resolution = clockResolution(id);
      if (resolution === undefined) return Errno.INVAL;
      memory.setU64(ptr >>> 0, resolution);
      return Errno.SUCCESS;
    },

    clock_time_get(id: number, _precision: bigint, ptr: number): number {
      memory.check(ptr >>> 0, 8);
      const now = readClock(clock, id);
      if (now === undefined) return Errno.INVAL;
      memory.setU64(ptr >>> 0, now);
      return Errno.SUCCESS;
    },

    random_get(ptr: number, len: number): number {
      const bytes = memory.bytes(ptr >>> 0, len >>> 0);
      for (let offset = 0; offset < bytes.length; offset += RANDOM_CHUNK) {
        randomFillSync(bytes.subarray(offset, Math.min(bytes.length, offset + RANDOM_CHUNK)));
      }
      return Errno.SUCCESS;
    },
  };
}
