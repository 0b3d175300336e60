import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SealError } from '../../src/common/index.js';
import {
  natsSubjects, notRunOutcome, sealCredentials, unsealCredentials, volumeFromWire, volumeOnWire,
} from '../../src/platform/nats-calls.js';

const key = randomBytes(32);
const credentials = [{ origin: 'https://api.example.com', headers: { authorization: 'Bearer tok-9d8e7f6a5b' } }];

describe('a call\'s credentials on the bus', () => {
  it('are sealed: the sealed text holds no credential value and opens back to the credentials', () => {
    const sealed = sealCredentials(credentials, 'call-1', key);
    assert.ok(!sealed.includes('tok-9d8e7f6a5b') && !sealed.includes('api.example.com'));
    assert.deepEqual(unsealCredentials(sealed, 'call-1', key), credentials);
  });

  it('sealed for one call, they open for no other call (the call id is bound as additional data)', () => {
    const sealed = sealCredentials(credentials, 'call-1', key);
    assert.throws(() => unsealCredentials(sealed, 'call-2', key), (err: unknown) => err instanceof SealError && err.reason === 'tampered');
  });

  it('open with no other key', () => {
    const sealed = sealCredentials(credentials, 'call-1', key);
    assert.throws(() => unsealCredentials(sealed, 'call-1', randomBytes(32)), SealError);
  });
});

describe('volume paths on the bus', () => {
  const root = '/srv/replica/volumes';

  it('travel relative to the volumes root and land under the worker\'s own root', () => {
    const rel = volumeOnWire(root, join(root, 'sessions', 'ses_1', 'tmp'));
    assert.equal(rel, 'sessions/ses_1/tmp');
    assert.equal(volumeFromWire('/mnt/shared/volumes', rel), '/mnt/shared/volumes/sessions/ses_1/tmp');
  });

  it('a directory outside the root is not sent', () => {
    assert.throws(() => volumeOnWire(root, '/etc'));
    assert.throws(() => volumeOnWire(root, root));
  });

  it('a path off the wire that would leave the worker\'s root is refused', () => {
    for (const rel of ['../etc', 'sessions/../../etc', '/etc', '', 'a//b', './a', 42, null]) {
      assert.equal(volumeFromWire('/mnt/shared/volumes', rel), null, JSON.stringify(rel));
    }
  });
});

describe('subjects and the buckets', () => {
  it('are named by the deployment\'s prefix', () => {
    assert.deepEqual(natsSubjects('run_1'), { calls: 'run_1.calls', cancel: 'run_1.cancel', packagesBucket: 'run_1_packages', skillsBucket: 'run_1_skills', events: 'run_1.events' });
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
