import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GATE_STOPPED, WorkGate } from '../../src/function/work-gate.js';

/** A task that runs until `finish()` is called, recording when it started. */
function held(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { task: async () => { log.push(name); await done; return name; }, finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the work gate', () => {
  test('runs at most its size at once, the others in the order they came', async () => {
    const gate = new WorkGate(2);
    const log: string[] = [];
    const tasks = ['a', 'b', 'c', 'd'].map((name) => held(log, name));
    const results = tasks.map((t) => gate.run(t.task));
    await tick();
    assert.deepEqual(log, ['a', 'b']);
    assert.equal(gate.busy, 2);
    tasks[1].finish();
    await tick();
    assert.deepEqual(log, ['a', 'b', 'c']);
    tasks[0].finish();
    tasks[2].finish();
    tasks[3].finish();
    assert.deepEqual(await Promise.all(results), ['a', 'b', 'c', 'd']);
    assert.equal(gate.busy, 0);
  });

  test('a waiter whose signal aborts leaves the queue and never runs', async () => {
    const gate = new WorkGate(1);
    const log: string[] = [];
    const first = held(log, 'first');
    const running = gate.run(first.task);
    const stop = new AbortController();
    const waiting = gate.run(held(log, 'never').task, stop.signal);
    const next = held(log, 'next');
    const after = gate.run(next.task);
    stop.abort();
    assert.equal(await waiting, GATE_STOPPED);
    first.finish();
    await running;
    await tick();
    assert.deepEqual(log, ['first', 'next']);
    next.finish();
    assert.equal(await after, 'next');
  });

  test('a task that throws gives its place back', async () => {
    const gate = new WorkGate(1);
    await assert.rejects(gate.run(async () => { throw new Error('boom'); }), /boom/);
    assert.equal(await gate.run(async () => 'ok'), 'ok');
    assert.equal(gate.busy, 0);
  });
});
