/**
 * The limits of a run: nothing a guest does (endless loop, memory hog, stdout flood, sleeping for
 * ever, a trap) crashes, hangs or leaks the host, and the pool keeps its size.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { wat } from '../helpers/wat.js';
import { SandboxPool } from '../../src/sandbox/pool.js';
import { MemoryCapError, SANDBOX_ERROR, SandboxError } from '../../src/sandbox/errors.js';
import { SandboxProcess } from '../../src/sandbox/sandbox-process.js';
import type { ModuleHandle, Sandbox } from '../../src/sandbox/types.js';
import { MIB, cGuest, limits, runToEnd, start, text, until } from './helpers.js';

const ENDLESS_LOOP = '(module (memory (export "memory") 1) (func (export "_start") (loop (br 0))))';
const TRAP = '(module (memory (export "memory") 1) (func (export "_start") unreachable))';
const EXIT_0 = '(module (memory (export "memory") 1) (func (export "_start")))';

const SAY_GO_THEN_LOOP = `(module
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "go\\n")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 3))
    (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
    (loop (br 0))))`;

/** Past the deadline, a stopped guest must be reported within this (the rule: well under a second). */
const PROMPT_MS = 500;

/** A sandbox under test: the in-process pool, or the sandbox process with its lanes. */
type Subject = Sandbox & { close(): Promise<void> };

for (const [kind, make] of [
  ['a pool in this process', (size: number) => new SandboxPool({ size })],
  ['a sandbox process', (size: number) => new SandboxProcess({ size })],
] as Array<[string, (size: number) => Subject]>) describe(`limits of a run, ${kind}`, () => {
  let pool: Subject;
  let loop: ModuleHandle;
  let exit0: ModuleHandle;
  let echo: ModuleHandle;

  before(async () => {
    pool = make(2);
    loop = await pool.compile(await wat(ENDLESS_LOOP), { memoryBytes: 64 * MIB });
    exit0 = await pool.compile(await wat(EXIT_0), { memoryBytes: 64 * MIB });
    echo = await pool.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
  });
  after(() => pool.close());

  test('an endless loop is stopped at its deadline, well under a second past it, and the next run succeeds', async () => {
    const timeoutMs = 300;
    const began = Date.now();
    const { finished } = start(pool, loop, { limits: limits({ timeoutMs }) });
    const { result } = await finished;
    const took = Date.now() - began;
    assert.deepEqual(result.outcome, { kind: 'timeout' });
    assert.ok(took >= timeoutMs, `stopped after ${took} ms, before its deadline`);
    assert.ok(took < timeoutMs + PROMPT_MS, `stopped ${took - timeoutMs} ms past its deadline`);
    const next = await runToEnd(pool, exit0);
    assert.deepEqual(next.result.outcome, { kind: 'exit', code: 0 });
  });

  test('a guest blocked on stdin that never comes is stopped at its deadline', async () => {
    const began = Date.now();
    const { finished } = start(pool, echo, { limits: limits({ timeoutMs: 300 }) });
    const { result } = await finished;
    assert.deepEqual(result.outcome, { kind: 'timeout' });
    assert.ok(Date.now() - began < 300 + PROMPT_MS);
  });

  test('a guest sleeping for ever in poll_oneoff is stopped at its deadline', async () => {
    const sleeper = await pool.compile(cGuest('sleep-forever'), { memoryBytes: 64 * MIB });
    const began = Date.now();
    const { finished } = start(pool, sleeper, { limits: limits({ timeoutMs: 300 }) });
    const { result, stderr } = await finished;
    assert.deepEqual(result.outcome, { kind: 'timeout' });
    assert.ok(Date.now() - began < 300 + PROMPT_MS);
    assert.equal(stderr, 'going to sleep\n');
  });

  test('a guest that tries to take 4 GiB is refused memory and the host\'s memory stays flat', async () => {
    const hog = await pool.compile(cGuest('memory-hog'), { memoryBytes: 64 * MIB });
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    try {
      const { result, stdout, stderr } = await runToEnd(pool, hog);
      assert.equal(result.outcome.kind, 'out_of_memory');
      assert.equal(stdout, '');
      assert.match(stderr, /memory refused after \d+ MiB/);
      const refusedAt = Number(/after (\d+) MiB/.exec(stderr)![1]);
      assert.ok(refusedAt > 0 && refusedAt < 64, `the guest got ${refusedAt} MiB under a 64 MiB cap`);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    // The guest wanted 4 GiB; a cap of 64 MiB plus a generous margin for the worker and the GC.
    assert.ok(peak - before < 256 * MIB, `RSS rose by ${Math.round((peak - before) / MIB)} MiB`);
  });

  test('a module whose initial memory is over the cap is refused when compiled', async () => {
    const big = await wat('(module (memory (export "memory") 32) (func (export "_start")))');
    await assert.rejects(pool.compile(big, { memoryBytes: MIB }), MemoryCapError);
  });

  test('a stdout flood stops the guest at the stdout cap', async () => {
    const flood = await pool.compile(cGuest('stdout-flood'), { memoryBytes: 64 * MIB });
    let received = 0;
    const { finished } = start(pool, flood, {
      limits: limits({ stdoutBytes: 100_000 }),
      onStdout: (chunk) => (received += chunk.length),
    });
    const { result } = await finished;
    assert.deepEqual(result.outcome, { kind: 'stdout_limit' });
    assert.equal(result.stdoutBytes, 100_000);
    assert.equal(received, 100_000);
  });

  test('a stderr flood cannot pile up in the host\'s memory; its tail is kept', async () => {
    // Writes the same 1 MiB to stderr for ever.
    const flood = await pool.compile(
      await wat(`(module
        (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
        (memory (export "memory") 17)
        (data (i32.const 1048639) "!")
        (func (export "_start")
          (i32.store (i32.const 0) (i32.const 64))
          (i32.store (i32.const 4) (i32.const 1048576))
          (loop (drop (call $write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8))) (br 0))))`),
      { memoryBytes: 64 * MIB },
    );
    const before = process.memoryUsage().rss;
    let peak = before;
    let received = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    try {
      const { result } = await start(pool, flood, {
        limits: limits({ timeoutMs: 700, stderrTailBytes: 8 }),
        onStderr: (chunk) => (received += chunk.length),
      }).finished;
      assert.deepEqual(result.outcome, { kind: 'timeout' });
      assert.deepEqual([...result.stderrTail], [0, 0, 0, 0, 0, 0, 0, 33]);
      assert.ok(received >= MIB, `only ${received} bytes of stderr arrived`);
    } finally {
      clearInterval(sampler);
    }
    assert.ok(peak - before < 256 * MIB, `RSS rose by ${Math.round((peak - before) / MIB)} MiB`);
  });

  test('a trap is reported with its message', async () => {
    const trap = await pool.compile(await wat(TRAP), { memoryBytes: 64 * MIB });
    const { result } = await runToEnd(pool, trap);
    assert.equal(result.outcome.kind, 'trap');
    assert.match((result.outcome as { message: string }).message, /unreachable/);
  });

  test('the exit code of proc_exit is reported', async () => {
    const exit7 = await pool.compile(
      await wat(`(module
        (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
        (memory (export "memory") 1)
        (func (export "_start") (call $exit (i32.const 7))))`),
      { memoryBytes: 64 * MIB },
    );
    const { result } = await runToEnd(pool, exit7);
    assert.deepEqual(result.outcome, { kind: 'exit', code: 7 });
  });

  test('stderr keeps only its last bytes', async () => {
    const { result, stderr } = await runToEnd(pool, echo, { limits: limits({ stderrTailBytes: 6 }) }, 'a\nb\nc\n');
    assert.equal(stderr, 'read 3 lines\n');
    assert.equal(text(result.stderrTail), 'lines\n');
  });

  test('kill ends a running guest with its reason, and a queued run without starting it', async () => {
    const small = new SandboxPool({ size: 1 });
    try {
      const compiled = await small.compile(await wat(SAY_GO_THEN_LOOP), { memoryBytes: 64 * MIB });
      const running = start(small, compiled);
      const queued = start(small, compiled);
      await until(() => running.stdoutSoFar() === 'go\n');
      queued.handle.kill('not needed');
      running.handle.kill('enough');
      const runningResult = (await running.finished).result;
      assert.deepEqual(runningResult.outcome, { kind: 'killed', reason: 'enough' });
      const queuedResult = (await queued.finished).result;
      assert.deepEqual(queuedResult.outcome, { kind: 'killed', reason: 'not needed' });
      assert.equal(queuedResult.durationMs, 0);
    } finally {
      await small.close();
    }
  });

  test('the pool keeps its size after its workers are killed, and runs again', async () => {
    const busy = await pool.compile(await wat(SAY_GO_THEN_LOOP), { memoryBytes: 64 * MIB });
    const runs = [start(pool, busy), start(pool, busy)];
    await until(() => runs.every((run) => run.stdoutSoFar() === 'go\n')); // both workers hold a guest
    const idsBefore = pool instanceof SandboxPool ? pool.workerThreadIds() : [];
    for (const run of runs) run.handle.kill('stop');
    for (const run of runs) assert.equal((await run.finished).result.outcome.kind, 'killed');
    assert.equal(pool.stats().workers, 2);
    if (pool instanceof SandboxPool) {
      const idsAfter = pool.workerThreadIds();
      assert.equal(idsAfter.filter((id) => idsBefore.includes(id)).length, 0, 'both workers were replaced');
    }
    const again = await Promise.all([runToEnd(pool, exit0), runToEnd(pool, echo, {}, 'x\n')]);
    assert.deepEqual(again[0].result.outcome, { kind: 'exit', code: 0 });
    assert.deepEqual(again[1].result.outcome, { kind: 'exit', code: 0 });
    assert.equal(again[1].stdout, '1:x\n');
  });

  test('a run must ask for the memory cap its module was compiled with', () => {
    assert.throws(
      () => pool.run(exit0, { args: [], env: [], preopens: [], limits: limits({ memoryBytes: 128 * MIB }) }),
      (error: unknown) => error instanceof SandboxError && error.code === SANDBOX_ERROR.memoryMismatch,
    );
  });

  test('closing the pool kills what runs, refuses new runs, and can be repeated', async () => {
    const closing = make(1);
    const compiled = await closing.compile(await wat(SAY_GO_THEN_LOOP), { memoryBytes: 64 * MIB });
    const running = start(closing, compiled);
    const queued = start(closing, compiled);
    await until(() => running.stdoutSoFar() === 'go\n');
    await closing.close();
    await closing.close();
    assert.equal((await running.finished).result.outcome.kind, 'killed');
    assert.equal((await queued.finished).result.outcome.kind, 'killed');
    if (closing instanceof SandboxPool) assert.equal(closing.size, 0);
    assert.throws(() => start(closing, compiled), (e: unknown) => e instanceof SandboxError && e.code === SANDBOX_ERROR.closed);
  });
});
