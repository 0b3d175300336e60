/**
 * Finding 9 of issue 11 (clocks): guests read the host's raw monotonic clock, that is the host's uptime
 * and one nanosecond timer shared by every tenant of the process. A real guest, run twice on the same warm
 * worker (the reused WASI host), reads every clock: each run's monotonic clock starts near zero (never
 * before the run itself began), every reading is a multiple of what clock_res_get reports (100 µs, and 1 ms
 * for the wall clock), readings never decrease, and poll_oneoff's sleeps agree with the coarse clock.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { wat } from '../helpers/wat.js';
import { SandboxPool } from '../../src/sandbox/pool.js';
import type { CompiledModule } from '../../src/sandbox/types.js';
import { limits, MIB } from '../sandbox/helpers.js';

const READS = 1000;
const OUT = 1024;
const OUT_END = 2048 + READS * 8;

/**
 * Writes, as little-endian u64s from offset 1024: the four resolutions (1024..1048), the first monotonic
 * reading (1056, taken before anything else), realtime (1064), process CPU time (1072), the monotonic
 * clock before and after a relative 2 ms poll (1080, 1088) and before and after an absolute poll to 3 ms
 * past a reading (1096, 1104); then READS monotonic readings in a tight loop from 2048.
 */
const CLOCK_READER = `(module
  (import "wasi_snapshot_preview1" "clock_res_get" (func $res (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $time (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func $sleep (param $timeout i64) (param $flags i32)
    (i64.store (i32.const 0) (i64.const 7))
    (i32.store8 (i32.const 8) (i32.const 0))
    (i32.store (i32.const 16) (i32.const 1))
    (i64.store (i32.const 24) (local.get $timeout))
    (i64.store (i32.const 32) (i64.const 1))
    (i32.store16 (i32.const 40) (local.get $flags))
    (drop (call $poll (i32.const 0) (i32.const 100) (i32.const 1) (i32.const 200))))
  (func (export "_start") (local $i i32)
    (drop (call $time (i32.const 1) (i64.const 1) (i32.const 1056)))
    (drop (call $res (i32.const 0) (i32.const 1024)))
    (drop (call $res (i32.const 1) (i32.const 1032)))
    (drop (call $res (i32.const 2) (i32.const 1040)))
    (drop (call $res (i32.const 3) (i32.const 1048)))
    (drop (call $time (i32.const 0) (i64.const 1) (i32.const 1064)))
    (drop (call $time (i32.const 2) (i64.const 1) (i32.const 1072)))
    (drop (call $time (i32.const 1) (i64.const 1) (i32.const 1080)))
    (call $sleep (i64.const 2000000) (i32.const 0))
    (drop (call $time (i32.const 1) (i64.const 1) (i32.const 1088)))
    (drop (call $time (i32.const 1) (i64.const 1) (i32.const 1096)))
    (call $sleep (i64.add (i64.load (i32.const 1096)) (i64.const 3000000)) (i32.const 1))
    (drop (call $time (i32.const 1) (i64.const 1) (i32.const 1104)))
    (loop $reads
      (drop (call $time (i32.const 1) (i64.const 1) (i32.add (i32.const 2048) (i32.shl (local.get $i) (i32.const 3)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $reads (i32.lt_u (local.get $i) (i32.const ${READS}))))
    (i32.store (i32.const 300) (i32.const ${OUT}))
    (i32.store (i32.const 304) (i32.const ${OUT_END - OUT}))
    (drop (call $write (i32.const 1) (i32.const 300) (i32.const 1) (i32.const 308)))))`;

interface Readings {
  resolutions: bigint[];
  first: bigint;
  realtime: bigint;
  cpuTime: bigint;
  relativeSleep: [bigint, bigint];
  absoluteSleep: [bigint, bigint];
  loop: bigint[];
  runMs: number;
  hostNowMs: number;
}

let pool: SandboxPool;
let reader: CompiledModule;

before(async () => {
  // One worker, so the second run reuses the first run's WASI host: the reset must restart the clocks.
  pool = new SandboxPool({ size: 1 });
  reader = await pool.compile(await wat(CLOCK_READER), { memoryBytes: 64 * MIB });
});
after(() => pool.close());

async function readClocks(): Promise<Readings> {
  const chunks: Buffer[] = [];
  // Measured from outside, around the whole run: the run's own durationMs is in whole milliseconds of Date.now.
  const began = performance.now();
  const handle = pool.run(reader, {
    args: ['clock'], env: [], preopens: [], limits: limits({ memoryBytes: reader.memoryBytes }),
    onStdout: (chunk) => chunks.push(Buffer.from(chunk)),
  });
  handle.closeStdin();
  const result = await handle.result;
  const runMs = performance.now() - began;
  assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
  const out = Buffer.concat(chunks);
  assert.equal(out.length, OUT_END - OUT);
  const at = (offset: number): bigint => out.readBigUInt64LE(offset - OUT);
  return {
    resolutions: [at(1024), at(1032), at(1040), at(1048)],
    first: at(1056),
    realtime: at(1064),
    cpuTime: at(1072),
    relativeSleep: [at(1080), at(1088)],
    absoluteSleep: [at(1096), at(1104)],
    loop: Array.from({ length: READS }, (_, i) => at(2048 + i * 8)),
    runMs,
    hostNowMs: Date.now(),
  };
}

const MS = 1_000_000n;
const TICK = 100_000n;

describe('the clocks a guest reads', () => {
  let runs: Readings[];
  before(async () => {
    runs = [await readClocks(), await readClocks()];
  });

  test('each run\'s monotonic clock starts near zero, never before the run began (not the host\'s uptime)', () => {
    const uptimeMs = Number(process.hrtime.bigint() / MS);
    for (const run of runs) {
      // The run's own wall duration bounds every reading taken inside it; the host's uptime is far larger.
      assert.ok(run.first <= BigInt(Math.ceil(run.runMs)) * MS + TICK, `first reading ${run.first} ns in a run of ${run.runMs} ms`);
      assert.ok(run.loop[READS - 1] <= BigInt(Math.ceil(run.runMs)) * MS + TICK);
      assert.ok(run.cpuTime <= BigInt(Math.ceil(run.runMs)) * MS + TICK, 'the CPU-time clock counts from the run too');
    }
    assert.ok(uptimeMs > runs[0].runMs + runs[1].runMs, 'the host has been up longer than the two runs took');
  });

  test('clock_res_get reports 1 ms for the wall clock and 100 µs for the others', () => {
    for (const run of runs) assert.deepEqual(run.resolutions, [MS, TICK, TICK, TICK]);
  });

  test('every reading is a multiple of its clock\'s resolution', () => {
    for (const run of runs) {
      assert.equal(run.realtime % MS, 0n);
      for (const value of [run.first, run.cpuTime, ...run.relativeSleep, ...run.absoluteSleep, ...run.loop]) {
        assert.equal(value % TICK, 0n, `${value} is not a multiple of 100 µs`);
      }
    }
  });

  test('monotonic readings never decrease', () => {
    for (const run of runs) {
      const sequence = [run.first, ...run.relativeSleep, ...run.absoluteSleep, ...run.loop];
      for (let i = 1; i < sequence.length; i++) assert.ok(sequence[i] >= sequence[i - 1], `reading ${i} went back`);
    }
  });

  test('the wall clock is the date, in whole milliseconds', () => {
    for (const run of runs) {
      const drift = Math.abs(Number(run.realtime / MS) - run.hostNowMs);
      assert.ok(drift < 5_000, `realtime is ${drift} ms off`);
    }
  });

  test('poll_oneoff sleeps on the same coarse clock: after a sleep the guest reads at least its deadline', () => {
    for (const run of runs) {
      assert.ok(run.relativeSleep[1] - run.relativeSleep[0] >= 2n * MS, `slept ${run.relativeSleep[1] - run.relativeSleep[0]} ns of 2 ms`);
      assert.ok(run.absoluteSleep[1] >= run.absoluteSleep[0] + 3n * MS, 'the absolute deadline was reached');
    }
  });
});
