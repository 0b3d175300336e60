/**
 * Which worker a replica sends a call to (nats-choice.ts), as pure logic: the slots its own calls hold, turns
 * among equals, a worker that answered `busy`, was not there or fell silent passed over, and the workers no call
 * may go to.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BUSY_PASS_OVER_MS, WorkerChoice } from '../../src/platform/scale-out/nats-choice.js';
import { PROTOCOL } from '../../src/platform/scale-out/nats-calls.js';
import type { WorkerPresence } from '../../src/platform/scale-out/nats-fleet.js';

const worker = (bus: string, slots: number, extra: Partial<WorkerPresence> = {}): WorkerPresence => ({
  v: PROTOCOL, id: `name-${bus}`, bus, host: 'h', version: '0.1.0', slots, busy: 0, ...extra,
});

describe('choosing the worker for a call', () => {
  it('sends no more calls to a worker than its slots, the most free first, and none once all are held', () => {
    const choice = new WorkerChoice();
    const fleet = [worker('a', 1), worker('b', 3)];
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) {
      const chosen = choice.choose(fleet, 0);
      assert.ok(chosen, `a worker for call ${i}`);
      choice.sent(chosen.bus);
      sent.push(chosen.bus);
    }
    assert.deepEqual(sent.filter((b) => b === 'a').length, 1);
    assert.deepEqual(sent.filter((b) => b === 'b').length, 3);
    assert.equal(sent[0], 'b', 'the worker with the most free slots first');
    assert.equal(choice.choose(fleet, 0), null, 'every slot held');
    choice.ended('a');
    assert.equal(choice.choose(fleet, 0)?.bus, 'a', 'the slot freed is the one chosen');
  });

  it('takes turns among workers equally free', () => {
    const choice = new WorkerChoice();
    const fleet = [worker('a', 2), worker('b', 2), worker('c', 2)];
    const first = [0, 1, 2].map(() => choice.choose(fleet, 0)!.bus);
    assert.deepEqual(new Set(first).size, 3, `each worker in turn: ${first}`);
  });

  it('passes over a worker that answered busy for a moment, or until one of this replica\'s calls on it ends', () => {
    const choice = new WorkerChoice();
    const fleet = [worker('a', 2), worker('b', 2)];
    // A send answered busy holds no slot, and the worker is not chosen again at once: the next send goes elsewhere.
    choice.sent('a');
    choice.busy('a', 1_000);
    for (let i = 0; i < 3; i++) assert.equal(choice.choose(fleet, 1_000)?.bus, 'b', 'the busy worker is passed over');
    assert.equal(choice.choose([worker('a', 2)], 1_000), null);
    assert.equal(choice.nextChanceIn(1_000, 1_000), BUSY_PASS_OVER_MS, 'the wait is the pass-over\'s end');
    assert.equal(choice.choose([worker('a', 2)], 1_000 + BUSY_PASS_OVER_MS)?.bus, 'a');
    // A call of this replica's that the worker took ends: a slot is free there now, pass-over or not.
    choice.sent('a');
    choice.sent('a');
    choice.busy('a', 2_000);
    assert.equal(choice.choose([worker('a', 2)], 2_000), null);
    choice.ended('a');
    assert.equal(choice.choose([worker('a', 2)], 2_000)?.bus, 'a');
  });

  it('passes over a worker nobody listens for until its presence would lapse', () => {
    const choice = new WorkerChoice();
    const fleet = [worker('a', 2), worker('b', 2)];
    choice.gone('a', 0, 3_000);
    for (let i = 0; i < 4; i++) assert.equal(choice.choose(fleet, 10)?.bus, 'b');
    assert.equal(choice.nextChanceIn(10, 25), 25, 'a gone worker is no reason to wake sooner');
    assert.equal(choice.choose([worker('a', 2)], 3_000)?.bus, 'a');
  });

  it('passes over a worker that fell silent on a call until its presence would lapse, its slot given back, and ending a call there does not lift it', () => {
    const choice = new WorkerChoice();
    const fleet = [worker('a', 2), worker('b', 2)];
    choice.sent('a');
    choice.sent('a');
    choice.silent('a', 0, 3_000);
    for (let i = 0; i < 4; i++) assert.equal(choice.choose(fleet, 10)?.bus, 'b');
    // The other call still held there ends: a silent worker stays passed over (a busy one would not).
    choice.ended('a');
    assert.equal(choice.choose([worker('a', 2)], 10), null);
    assert.deepEqual(choice.passedOverNow(10), { busy: 0, gone: 0, silent: 1 });
    assert.equal(choice.nextChanceIn(10, 25), 25, 'a silent worker is no reason to wake sooner');
    assert.deepEqual(choice.passedOverNow(3_000), { busy: 0, gone: 0, silent: 0 });
    assert.equal(choice.choose([worker('a', 2)], 3_000)?.bus, 'a', 'its slots all free again');
  });

  it('counts the workers passed over now, by why', () => {
    const choice = new WorkerChoice();
    choice.busy('a', 0);
    choice.gone('b', 0, 3_000);
    choice.silent('c', 0, 3_000);
    choice.silent('d', 0, 3_000);
    assert.deepEqual(choice.passedOverNow(1), { busy: 1, gone: 1, silent: 2 });
    assert.deepEqual(choice.passedOverNow(BUSY_PASS_OVER_MS), { busy: 0, gone: 1, silent: 2 });
  });

  it('forgets a pass-over once it ended: workers that come and go leave nothing behind', () => {
    const choice = new WorkerChoice();
    for (let i = 0; i < 1_000; i++) choice.gone(`w${i}`, i * 10_000, 3_000);
    assert.equal(choice.passedOverCount, 1);
  });

  it('never chooses a worker of another protocol, without a bus id, or leaving', () => {
    const choice = new WorkerChoice();
    const fleet = [worker('old', 8, { v: PROTOCOL - 1 }), { ...worker('x', 8), bus: undefined }, worker('bye', 8, { leaving: true })];
    assert.equal(choice.choose(fleet, 0), null);
    assert.equal(choice.choose([...fleet, worker('ok', 1)], 0)?.bus, 'ok');
  });
});
