/**
 * poll_oneoff. Clock subscriptions (relative or absolute, on any clock) and fd_read/fd_write
 * subscriptions. Only stdin can be "not ready": regular files, directories, stdout and stderr are
 * always ready, and a closed descriptor is an immediate event with EBADF. When nothing is ready the
 * thread SLEEPS until the earliest deadline — in the stdin source's wait when stdin is watched, in the
 * caller's sleep otherwise — and never spins.
 */
import { fstatSync } from 'node:fs';
import { Errno, WasiErrno } from './errno.js';
import {
  ClockId, EVENT_FD_READWRITE_HANGUP, EVENT_SIZE, EventType, SUBCLOCK_ABSTIME, SUBSCRIPTION_SIZE,
} from './constants.js';
import { callCaller, type FunctionFamily, type WasiContext } from './context.js';
import { readClock } from './clocks.js';

interface Subscription {
  userdata: bigint;
  type: EventType;
  /** Clock: the deadline on the monotonic clock. */
  deadline: bigint;
  /** fd: watching stdin for reading (the only subscription that can wait). */
  stdin: boolean;
  /** fd subscriptions that are decided at once: their error and byte count. */
  error: Errno;
  nbytes: bigint;
}

const NS_PER_MS = 1_000_000n;

export function pollFunctions(ctx: WasiContext): FunctionFamily {
  // `ctx.options` is read at call time: a reused host swaps it for each run.
  const { memory, table, clock } = ctx;

  function parse(ptr: number, now: bigint): Subscription | Errno {
    const view = memory.view;
    const userdata = view.getBigUint64(ptr, true);
    const type = view.getUint8(ptr + 8);
    const subscription: Subscription = { userdata, type, deadline: 0n, stdin: false, error: Errno.SUCCESS, nbytes: 0n };
    if (type === EventType.CLOCK) {
      const id = view.getUint32(ptr + 16, true);
      const timeout = view.getBigUint64(ptr + 24, true);
      const absolute = (view.getUint16(ptr + 40, true) & SUBCLOCK_ABSTIME) !== 0;
      const clockNow = readClock(clock, id);
      if (clockNow === undefined) return Errno.INVAL;
      // Deadlines are kept on the guest's monotonic clock whatever clock the guest named: the same coarse,
      // run-relative clock clock_time_get reads, so a guest that slept until a time reads at least that time after.
      subscription.deadline = absolute
        ? now + (timeout - (id === ClockId.MONOTONIC ? now : clockNow))
        : now + timeout;
      return subscription;
    }
    if (type !== EventType.FD_READ && type !== EventType.FD_WRITE) return Errno.INVAL;
    const fd = view.getUint32(ptr + 16, true);
    let descriptor;
    try {
      descriptor = table.get(fd);
    } catch (error) {
      if (!(error instanceof WasiErrno)) throw error; // expected: a closed or unknown fd (EBADF)
      subscription.error = Errno.BADF;
      return subscription;
    }
    if (descriptor.kind === 'stdio' && descriptor.stream === 0 && type === EventType.FD_READ) {
      subscription.stdin = true;
    } else if (descriptor.kind === 'file' && type === EventType.FD_READ) {
      const remaining = fstatSync(descriptor.hostFd).size - descriptor.position;
      subscription.nbytes = BigInt(Math.max(0, remaining));
    }
    return subscription;
  }

  function writeEvent(ptr: number, s: Subscription, hangup: boolean): void {
    memory.u8.fill(0, ptr, ptr + EVENT_SIZE);
    const view = memory.view;
    view.setBigUint64(ptr, s.userdata, true);
    view.setUint16(ptr + 8, s.error, true);
    view.setUint8(ptr + 10, s.type);
    if (s.type !== EventType.CLOCK) {
      view.setBigUint64(ptr + 16, s.nbytes, true);
      view.setUint16(ptr + 24, hangup ? EVENT_FD_READWRITE_HANGUP : 0, true);
    }
  }

  return {
    poll_oneoff(inPtr: number, outPtr: number, count: number, neventsPtr: number): number {
      inPtr >>>= 0;
      outPtr >>>= 0;
      count >>>= 0;
      neventsPtr >>>= 0;
      if (count === 0) return Errno.INVAL;
      memory.check(inPtr, count * SUBSCRIPTION_SIZE);
      memory.check(outPtr, count * EVENT_SIZE);
      memory.check(neventsPtr, 4);
      const start = clock.monotonic();
      const subscriptions: Subscription[] = [];
      let watchesStdin = false;
      for (let i = 0; i < count; i++) {
        const parsed = parse(inPtr + i * SUBSCRIPTION_SIZE, start);
        if (typeof parsed === 'number') return parsed;
        subscriptions.push(parsed);
        if (parsed.stdin) watchesStdin = true;
      }
      const options = ctx.options;
      const stdin = options.stdin;
      for (;;) {
        const now = clock.monotonic();
        const stdinReady = watchesStdin && callCaller(() => stdin.waitReadable(0));
        let events = 0;
        let earliest: bigint | undefined;
        for (const s of subscriptions) {
          let ready: boolean;
          if (s.type === EventType.CLOCK) {
            ready = s.deadline <= now;
            if (!ready && (earliest === undefined || s.deadline < earliest)) earliest = s.deadline;
          } else {
            ready = s.stdin ? stdinReady : true;
          }
          if (!ready) continue;
          // Stdin's byte count is not known ahead of a read: 1 says "a read will not block".
          if (s.stdin) s.nbytes = 1n;
          writeEvent(outPtr + events * EVENT_SIZE, s, false);
          events++;
        }
        if (events > 0) {
          memory.setU32(neventsPtr, events);
          return Errno.SUCCESS;
        }
        const waitMs = earliest === undefined ? Infinity : Number((earliest - now + NS_PER_MS - 1n) / NS_PER_MS);
        if (watchesStdin) callCaller(() => stdin.waitReadable(waitMs));
        else callCaller(() => options.sleep(waitMs));
      }
    },
  };
}
