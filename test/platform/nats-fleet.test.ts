/**
 * The fleet's presence, pure: what a receiver takes of the presences it hears (the lapse, one process's
 * sequence, a clean leave), what a presence may say, and what a replica concludes — the figures, and the one
 * line that says why no call could be sent.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PROTOCOL } from '../../src/platform/scale-out/nats-calls.js';
import { MAX_CLOCK_SKEW_MS } from '../../src/platform/scale-out/nats-envelope.js';
import { fleetSummary, noWorkerReason, readReplicaPresence, readWorkerPresence, type WorkerPresence } from '../../src/platform/scale-out/nats-fleet.js';
import { PRESENCE_LAPSE_MS, PresenceTable } from '../../src/platform/scale-out/nats-presence.js';

const worker = (id: string, extra: Partial<WorkerPresence> = {}): WorkerPresence =>
  ({ v: PROTOCOL, id, host: 'node-1', version: '1.2.3', slots: 4, busy: 1, ...extra });

describe('a presence table', () => {
  it('holds a sender from its presence until the lapse, and no longer', () => {
    const table = new PresenceTable<WorkerPresence>();
    assert.equal(table.heard('p1', 1, 10_000, worker('w1'), 1_000), 'taken');
    assert.deepEqual(table.current(1_000 + PRESENCE_LAPSE_MS - 1).map((w) => w.id), ['w1']);
    assert.equal(table.heardAt('w1', 1_000 + PRESENCE_LAPSE_MS - 1), 1_000);
    assert.deepEqual(table.current(1_000 + PRESENCE_LAPSE_MS), []);
    assert.equal(table.heardAt('w1', 1_000 + PRESENCE_LAPSE_MS), undefined);
  });

  it('takes from one process only a number above the last it took: a presence sent again is a replay', () => {
    const table = new PresenceTable<WorkerPresence>();
    assert.equal(table.heard('p1', 5, 10_000, worker('w1'), 1_000), 'taken');
    assert.equal(table.heard('p1', 5, 10_000, worker('w1'), 5_000), 'replayed');
    assert.equal(table.heard('p1', 4, 10_000, worker('w1'), 5_000), 'replayed');
    // The replay did not make the sender look alive: it lapsed from its last presence taken.
    assert.deepEqual(table.current(1_000 + PRESENCE_LAPSE_MS), []);
    assert.equal(table.heard('p1', 6, 10_000, worker('w1'), 5_000), 'taken');
    // A process that restarted is another process: it counts from 1 again.
    assert.equal(table.heard('p2', 1, 10_000, worker('w1'), 5_001), 'taken');
  });

  it('forgets a sender at once when it says it is leaving', () => {
    const table = new PresenceTable<WorkerPresence>();
    table.heard('p1', 1, 10_000, worker('w1'), 1_000);
    table.heard('p2', 1, 10_000, worker('w2'), 1_000);
    table.heard('p1', 2, 10_000, { ...worker('w1'), leaving: true }, 1_001);
    assert.deepEqual(table.current(1_002).map((w) => w.id), ['w2']);
  });

  it('keeps each process\'s sequence only until its presences could no longer be taken anyway', () => {
    const table = new PresenceTable<WorkerPresence>();
    for (let p = 0; p < 50; p++) table.heard(`p${p}`, 1, 2_000, worker(`w${p}`), 1_000);
    assert.equal(table.remembered, 50);
    table.current(2_000 + MAX_CLOCK_SKEW_MS + 1);
    assert.equal(table.remembered, 0);
  });

  it('a touch (a call from a replica not heard yet) makes it live until the lapse', () => {
    const table = new PresenceTable<{ id: string }>();
    table.touch({ id: 'rep_1' }, 1_000);
    assert.equal(table.heardAt('rep_1', 1_500), 1_000);
    assert.equal(table.heardAt('rep_1', 1_000 + PRESENCE_LAPSE_MS), undefined);
  });
});

describe('what a presence may say', () => {
  it('a worker\'s: its protocol, a plain name and host, a version, and bounded counts; nothing else is kept', () => {
    assert.deepEqual(readWorkerPresence({ ...worker('node-1:42'), extra: 'dropped' }), worker('node-1:42'));
    assert.equal(readWorkerPresence({ ...worker('w'), busy: 9 })?.busy, 4, 'busy is at most its slots');
    for (const bad of [
      null, 'w', {}, { ...worker('w'), id: 'a b' }, { ...worker('w'), id: 'x'.repeat(129) }, { ...worker('w'), host: 'a/b' },
      { ...worker('w'), version: '' }, { ...worker('w'), slots: -1 }, { ...worker('w'), slots: 1e9 }, { ...worker('w'), slots: 1.5 },
      { ...worker('w'), v: 'three' }, { ...worker('w'), busy: undefined },
    ]) assert.equal(readWorkerPresence(bad), null, JSON.stringify(bad));
  });

  it('a replica\'s: its protocol and its bus id', () => {
    assert.deepEqual(readReplicaPresence({ v: PROTOCOL, id: 'rep_abc' }), { v: PROTOCOL, id: 'rep_abc' });
    assert.deepEqual(readReplicaPresence({ v: PROTOCOL, id: 'rep_abc', leaving: true }), { v: PROTOCOL, id: 'rep_abc', leaving: true });
    for (const bad of [null, {}, { v: PROTOCOL }, { v: PROTOCOL, id: 'rep.abc' }, { v: PROTOCOL, id: 'r'.repeat(65) }]) {
      assert.equal(readReplicaPresence(bad), null, JSON.stringify(bad));
    }
  });
});

describe('what a replica concludes of the fleet', () => {
  it('counts the workers of its protocol, their slots and busy ones; workers of another protocol apart', () => {
    assert.deepEqual(fleetSummary([worker('a'), worker('b', { slots: 2, busy: 2 }), worker('c', { v: PROTOCOL - 1 })]), { workers: 2, slots: 6, busy: 3, otherProtocol: 1 });
    assert.deepEqual(fleetSummary([]), { workers: 0, slots: 0, busy: 0, otherProtocol: 0 });
  });

  it('with no worker running, says so, where workers announce themselves, and what to start', () => {
    const reason = noWorkerReason([], 'prod.fleet.workers', '1.2.3');
    assert.match(reason!, /^no worker is running: none has announced itself on prod\.fleet\.workers in the last 3 s; start `subako worker`/);
  });

  it('with only workers of another protocol, names both releases and says to run the same on all', () => {
    const reason = noWorkerReason([worker('a', { v: PROTOCOL - 1, version: '0.9.0' })], 'prod.fleet.workers', '1.2.3');
    assert.match(reason!, new RegExp(`this replica is subako 1\\.2\\.3 \\(protocol ${PROTOCOL}\\), the 1 worker\\(s\\) running are subako 0\\.9\\.0 \\(protocol ${PROTOCOL - 1}\\)`));
  });

  it('with one worker of its protocol live, has nothing to say, busy or not', () => {
    assert.equal(noWorkerReason([worker('a', { busy: 4 }), worker('b', { v: PROTOCOL + 1 })], 'p.fleet.workers', '1'), null);
  });
});
