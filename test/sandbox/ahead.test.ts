/**
 * Runs posted ahead: when every worker is busy, the next run is posted to one of them and starts the
 * moment that worker's current run ends. It must behave exactly like a queued run: its stdin and
 * deadline start with it, it can be killed before it starts (then it never runs), an idle worker takes
 * it back, and it survives the current run being stopped.
 */
import { ENTRY_COST_BYTES } from '../../src/wasi/index.js';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPool } from '../../src/sandbox/pool.js';
import { MIB, cGuest, delay, limits, runToEnd, start, until } from './helpers.js';

/** How many runs the pool has posted ahead right now (the mechanism under test, seen from inside). */
const postedAhead = (pool: SandboxPool): number => (pool as unknown as { ahead: Map<unknown, unknown> }).ahead.size;
/** Whether every run started so far is on a worker (none queued, none posted ahead). */
const allOnWorkers = (pool: SandboxPool): boolean =>
  postedAhead(pool) === 0 && (pool as unknown as { queue: unknown[] }).queue.length === 0;

describe('runs posted ahead to a busy worker', () => {
  test('start when the current run ends, with the stdin written meanwhile', async () => {
    const pool = new SandboxPool({ size: 1 });
    try {
      const echo = await pool.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
      const first = start(pool, echo, { stdin: Buffer.from('a\n') });
      await until(() => first.stdoutSoFar() === '1:a\n');
      const second = start(pool, echo, { stdin: Buffer.from('b1\n') });
      assert.equal(postedAhead(pool), 1);
      second.handle.writeStdin(Buffer.from('b2\n'));
      second.handle.closeStdin();
      await delay(50);
      first.handle.closeStdin();
      const [a, b] = await Promise.all([first.finished, second.finished]);
      assert.deepEqual(a.result.outcome, { kind: 'exit', code: 0 });
      assert.equal(a.stdout, '1:a\n');
      assert.deepEqual(b.result.outcome, { kind: 'exit', code: 0 });
      assert.equal(b.stdout, '1:b1\n2:b2\n');
      assert.equal(b.stderr, 'read 2 lines\n');
    } finally {
      await pool.close();
    }
  });

  test('time spent waiting for a worker counts against the deadline: a run that waits past it ends as timeout, never started', async () => {
    const pool = new SandboxPool({ size: 1 });
    try {
      const echo = await pool.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
      const first = start(pool, echo, { stdin: Buffer.from('a\n') });
      await until(() => first.stdoutSoFar() === '1:a\n');
      const second = start(pool, echo, {
        stdin: Buffer.from('b1\n'),
        limits: limits({ memoryBytes: echo.memoryBytes, timeoutMs: 200 }),
      });
      second.handle.closeStdin();
      const waited = await second.finished;
      assert.deepEqual(waited.result.outcome, { kind: 'timeout' });
      assert.equal(waited.stdout, '', 'the guest never ran');
      first.handle.closeStdin();
      const a = await first.finished;
      assert.deepEqual(a.result.outcome, { kind: 'exit', code: 0 });
    } finally {
      await pool.close();
    }
  });

  test('an idle worker takes the run back from the busy one and runs it at once', async () => {
    const pool = new SandboxPool({ size: 2 });
    try {
      const echo = await pool.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
      const sleeper = await pool.compile(cGuest('sleep-forever'), { memoryBytes: 64 * MIB });
      const held = start(pool, echo, { stdin: Buffer.from('h\n') });
      let sleeping = false;
      const asleep = start(pool, sleeper, { onStderr: () => (sleeping = true) });
      await until(() => held.stdoutSoFar() === '1:h\n' && sleeping && allOnWorkers(pool));
      const waiting = start(pool, echo, { stdin: Buffer.from('c\n') });
      waiting.handle.closeStdin();
      assert.equal(postedAhead(pool), 1);
      asleep.handle.kill('make room'); // its worker is replaced; the new one takes the run posted ahead
      const { result, stdout } = await waiting.finished;
      assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
      assert.equal(stdout, '1:c\n');
      assert.equal(held.stdoutSoFar(), '1:h\n');
      let heldEnded = false;
      void held.finished.then(() => (heldEnded = true));
      await delay(20);
      assert.equal(heldEnded, false, 'the run it was posted behind is still going');
      held.handle.closeStdin();
      assert.deepEqual((await held.finished).result.outcome, { kind: 'exit', code: 0 });
      assert.deepEqual((await asleep.finished).result.outcome, { kind: 'killed', reason: 'make room' });
    } finally {
      await pool.close();
    }
  });

  test('killed before it starts, it ends at once and never runs', async () => {
    const pool = new SandboxPool({ size: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'subako-ahead-'));
    try {
      const echo = await pool.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
      const command = await pool.compile(cGuest('command'), { memoryBytes: 64 * MIB });
      const first = start(pool, echo, { stdin: Buffer.from('a\n') });
      await until(() => first.stdoutSoFar() === '1:a\n');
      const writer = start(pool, command, { preopens: [{ guestPath: '/data', hostPath: dir, readOnly: false }] });
      writer.handle.closeStdin();
      assert.equal(postedAhead(pool), 1);
      writer.handle.kill('not wanted');
      const killed = await writer.finished;
      assert.deepEqual(killed.result.outcome, { kind: 'killed', reason: 'not wanted' });
      assert.equal(killed.stdout, '');
      first.handle.closeStdin();
      assert.deepEqual((await first.finished).result.outcome, { kind: 'exit', code: 0 });
      const after = await runToEnd(pool, echo, {}, 'next\n');
      assert.equal(after.stdout, '1:next\n');
      assert.equal(existsSync(join(dir, 'out.txt')), false, 'the killed run never ran');
    } finally {
      await pool.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('when the run ahead of it is stopped, the replacement worker runs it', async () => {
    const pool = new SandboxPool({ size: 1 });
    try {
      const echo = await pool.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
      const sleeper = await pool.compile(cGuest('sleep-forever'), { memoryBytes: 64 * MIB });
      let sleeping = false;
      const stuck = start(pool, sleeper, {
        limits: limits({ memoryBytes: sleeper.memoryBytes, timeoutMs: 1000 }),
        onStderr: () => (sleeping = true),
      });
      await until(() => sleeping);
      const next = start(pool, echo, { stdin: Buffer.from('after\n') });
      next.handle.closeStdin();
      assert.equal(postedAhead(pool), 1);
      assert.deepEqual((await stuck.finished).result.outcome, { kind: 'timeout' });
      const { result, stdout } = await next.finished;
      assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
      assert.equal(stdout, '1:after\n');
    } finally {
      await pool.close();
    }
  });

  test('bytes written to files are counted per run, also for runs started back to back', async () => {
    const pool = new SandboxPool({ size: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'subako-ahead-'));
    try {
      const echo = await pool.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
      const command = await pool.compile(cGuest('command'), { memoryBytes: 64 * MIB });
      const preopens = [{ guestPath: '/data', hostPath: dir, readOnly: false }];
      const writing = start(pool, command, { preopens });
      const reading = start(pool, echo, { stdin: Buffer.from('x\n') });
      const writingAgain = start(pool, command, { preopens });
      for (const run of [writing, reading, writingAgain]) run.handle.closeStdin();
      const [w1, r, w2] = await Promise.all([writing.finished, reading.finished, writingAgain.finished]);
      // The first run creates out.txt (an entry, charged ENTRY_COST_BYTES); the second overwrites it.
      assert.equal(w1.result.writtenBytes, ENTRY_COST_BYTES + 'written by the guest\n'.length);
      assert.equal(r.result.writtenBytes, 0);
      assert.equal(w2.result.writtenBytes, 'written by the guest\n'.length);
    } finally {
      await pool.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
