import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { natsSubjects, notRunOutcome, volumeFromWire, volumeOnWire, workerCallLimits } from '../../src/platform/scale-out/nats-calls.js';
import { DEFAULT_CALL_LIMITS } from '../../src/config.js';

const SESSION = `ses_${'a'.repeat(28)}`;
const AGENT = `agt_${'b'.repeat(28)}`;

describe('volume paths on the bus', () => {
  const root = '/srv/replica/volumes';

  it('travel relative to the volumes root and land under the worker\'s own root, each kind in its one shape', () => {
    const rel = volumeOnWire(root, join(root, 'sessions', SESSION, 'tmp'));
    assert.equal(rel, `sessions/${SESSION}/tmp`);
    assert.equal(volumeFromWire('/mnt/shared/volumes', 'tmp', rel), `/mnt/shared/volumes/sessions/${SESSION}/tmp`);
    assert.equal(volumeFromWire('/mnt/shared/volumes', 'data', `agents/${AGENT}/data`), `/mnt/shared/volumes/agents/${AGENT}/data`);
    assert.equal(volumeFromWire('/mnt/shared/volumes', 'skills', `.skills/sets/${'c'.repeat(64)}`), `/mnt/shared/volumes/.skills/sets/${'c'.repeat(64)}`);
  });

  it('a directory outside the root is not sent', () => {
    assert.throws(() => volumeOnWire(root, '/etc'));
    assert.throws(() => volumeOnWire(root, root));
  });

  it('a path off the wire that is not exactly a session\'s tmp, an agent\'s data or a skill set is refused', () => {
    const refused: [Parameters<typeof volumeFromWire>[1], unknown][] = [
      ['tmp', 'sessions'], ['tmp', `sessions/${SESSION}`], ['tmp', `sessions/${SESSION}/tmp/..`], ['tmp', `agents/${AGENT}/data`],
      ['tmp', '../etc'], ['tmp', `sessions/../../etc/tmp`], ['tmp', '/etc'], ['tmp', ''], ['tmp', 'a//b'], ['tmp', 42], ['tmp', null],
      ['data', 'agents'], ['data', `sessions/${SESSION}/tmp`], ['data', `agents/${AGENT}/data/x`],
      ['skills', '.skills'], ['skills', '.skills/sets'], ['skills', `.skills/sets/${'c'.repeat(63)}`], ['skills', `sessions/${SESSION}/tmp`],
    ];
    for (const [kind, rel] of refused) assert.equal(volumeFromWire('/mnt/shared/volumes', kind, rel), null, `${kind} ${JSON.stringify(rel)}`);
  });
});

describe('what a worker takes of a call\'s limits', () => {
  it('the deadline, cut to its own; nothing else', () => {
    const own = { ...DEFAULT_CALL_LIMITS, callTimeoutMs: 5_000 };
    assert.deepEqual(workerCallLimits(own, 60_000), { callTimeoutMs: 5_000 });
    assert.deepEqual(workerCallLimits(own, 1_234.7), { callTimeoutMs: 1_234 });
    assert.deepEqual(workerCallLimits(own, 0), { callTimeoutMs: 1 });
  });
});

describe('subjects and the buckets', () => {
  it('are named by the deployment\'s prefix', () => {
    assert.deepEqual(natsSubjects('run_1'), { calls: 'run_1.calls', packagesBucket: 'run_1_packages', skillsBucket: 'run_1_skills', busBucket: 'run_1_bus', events: 'run_1.events', listings: 'run_1.listings',
      workerPresence: 'run_1.fleet.workers', replicaPresence: 'run_1.fleet.replicas', outcomesBucket: 'run_1_outcomes',
    });
  });

  it('a prefix that is not one subject token is refused', () => {
    for (const prefix of ['', 'a.b', 'a b', '>', '*', 'x'.repeat(65)]) assert.throws(() => natsSubjects(prefix), JSON.stringify(prefix));
  });
});

describe('a call that did not run', () => {
  it('is a crash with the reason given and what the model reads says why', () => {
    const outcome = notRunOutcome('unavailable', 'no worker was free', 12);
    assert.equal(outcome.status, 'crash');
    assert.equal(outcome.crash?.reason, 'unavailable');
    assert.ok(JSON.stringify(outcome.model).includes('no worker was free'));
  });
});
