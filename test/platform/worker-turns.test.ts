/**
 * Whose turn it is at the next free worker (worker-turns.ts), on its own: agents with nothing running first,
 * in the order they came; then the others round-robin, the one served going to the back.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkerTurns } from '../../src/platform/calls/worker-turns.js';

/** The order `next()` would give, served one after the other with `running` calls each after its turn. */
function round(turns: WorkerTurns<string>, times: number): string[] {
  const order: string[] = [];
  for (let i = 0; i < times; i++) {
    const agent = turns.next();
    if (agent === undefined) break;
    order.push(agent);
    turns.served(agent);
  }
  return order;
}

describe('worker turns', () => {
  it('an agent with nothing running goes before every agent with calls running, whenever it came', () => {
    const turns = new WorkerTurns<string>();
    turns.wait('busy1', 2);
    turns.wait('busy2', 1);
    turns.wait('idle1', 0);
    turns.wait('idle2', 0);
    assert.deepEqual(round(turns, 6), ['idle1', 'idle2', 'busy1', 'busy2', 'idle1', 'idle2']);
  });

  it('agents with calls running take turns; waiting again keeps an agent\'s place', () => {
    const turns = new WorkerTurns<string>();
    for (const agent of ['a', 'b', 'c']) turns.wait(agent, 1);
    assert.equal(turns.next(), 'a');
    turns.served('a');
    turns.wait('b', 3);
    assert.deepEqual(round(turns, 4), ['b', 'c', 'a', 'b']);
  });

  it('an agent whose running calls all ended moves ahead of the busy ones; one that starts running moves behind them', () => {
    const turns = new WorkerTurns<string>();
    turns.wait('a', 1);
    turns.wait('b', 1);
    turns.wait('b', 0);
    assert.equal(turns.next(), 'b');
    turns.update('b', 1);
    assert.equal(turns.next(), 'a');
    turns.update('stranger', 0);
    assert.equal(turns.size, 2, 'update() does not enlist an agent that is not waiting');
  });

  it('drop() takes an agent out of the turns; none left: next() is undefined', () => {
    const turns = new WorkerTurns<string>();
    turns.wait('a', 0);
    turns.wait('b', 2);
    turns.drop('a');
    turns.drop('b');
    turns.drop('never');
    assert.equal(turns.next(), undefined);
    assert.equal(turns.size, 0);
  });
});
