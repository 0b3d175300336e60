/**
 * The coarse clock, as a pure function: multiples of the tick, never decreasing, never more than one tick
 * from the time it stands for, and with tick edges that depend on the run's key (so they are jittered).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Clock, coarsen, MONOTONIC_RESOLUTION_NS, REALTIME_RESOLUTION_NS } from '../../src/wasi/guest-time.js';

const R = MONOTONIC_RESOLUTION_NS;

/** A deterministic walk through time: steps from 0 to 3 ticks, over about 40 seconds. */
function* walk(seed: number, steps = 200_000): Generator<number> {
  let t = 0;
  let s = seed >>> 0;
  for (let i = 0; i < steps; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    t += s % (3 * R);
    yield t;
  }
}

describe('coarsen', () => {
  test('readings are multiples of the tick, never decrease, and stay within one tick of the time', () => {
    for (const key of [0, 1, 0xdeadbeef, 0xffffffff]) {
      let previous = 0;
      for (const t of walk(key + 7)) {
        const c = coarsen(t, R, key);
        assert.equal(c % R, 0);
        assert.ok(c >= previous, `went back at ${t}`);
        assert.ok(c > t - R && c <= t + R, `${c} is more than a tick from ${t}`);
        previous = c;
      }
    }
  });

  test('the point where a tick gives way to the next depends on the key', () => {
    const edge = (tick: number, key: number): number => {
      for (let into = 0; into < R; into += 1000) if (coarsen(tick * R + into, R, key) > tick * R) return into;
      return R;
    };
    const edges = (key: number) => Array.from({ length: 50 }, (_, tick) => edge(tick, key));
    const a = edges(12345);
    assert.ok(new Set(a).size > 10, 'edges vary from tick to tick');
    assert.notDeepEqual(a, edges(54321));
  });

  test('past 2^32 ticks the keyed edges still move (no wrap to the same pattern)', () => {
    const base = 2 ** 32;
    const low = Array.from({ length: 20 }, (_, i) => coarsen((i * R) + R / 2, R, 99) - i * R);
    const high = Array.from({ length: 20 }, (_, i) => coarsen(((base + i) * R) + R / 2, R, 99) - (base + i) * R);
    assert.notDeepEqual(low, high);
  });
});

describe('the clocks of a run', () => {
  test('reset starts the monotonic clock at zero again; the wall clock is whole milliseconds', () => {
    const clock = new Clock();
    clock.reset();
    const first = clock.monotonic();
    assert.ok(first < 1_000_000_000n, `${first} ns after a reset`);
    assert.equal(clock.realtime() % BigInt(REALTIME_RESOLUTION_NS), 0n);
    assert.equal(clock.cpuTime() % BigInt(R), 0n);
  });
});
