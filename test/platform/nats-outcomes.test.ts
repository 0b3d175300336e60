/**
 * The outcomes bucket (scale-out/nats-outcomes.ts) on the machine's NATS, in a bucket of this run's own: a durable
 * call's course is written and read back under its key, sealed — the bucket's bytes hold nothing of the outcome in the
 * clear, another key does not open it, an entry copied under another durable key does not open either — and a key
 * never written reads as none.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm } from '@nats-io/obj';
import { NatsOutcomes, isDurableKey } from '../../src/platform/scale-out/nats-outcomes.js';
import { natsSubjects } from '../../src/platform/scale-out/index.js';
import { durableKeyOf } from '../../src/platform/tasks/durable-key.js';
import { connectShared, removeBuckets, runName } from '../helpers/nats.js';

const prefix = runName('outcomes');
const key = Buffer.alloc(32, 3);
let nc: NatsConnection;

before(async () => { nc = await connectShared(); });
after(async () => {
  await nc?.close();
  await removeBuckets(prefix);
});

describe('the outcomes bucket', () => {
  it('keeps a durable call\'s course under its key, sealed', async () => {
    const outcomes = await NatsOutcomes.open(nc, prefix, key);
    const durable = durableKeyOf('tsk_example');
    assert.ok(isDurableKey(durable));
    assert.ok(!durable.includes('tsk_example'));
    assert.equal(await outcomes.read(durable), null, 'nothing written yet');
    await outcomes.write(durable, { state: 'running', worker: 'w1' });
    assert.deepEqual(await outcomes.read(durable), { state: 'running', worker: 'w1' });
    const outcome = { status: 'ok', model: [{ type: 'text', text: 'the secret answer' }], durationMs: 5 } as never;
    await outcomes.write(durable, { state: 'done', outcome });
    assert.deepEqual(await outcomes.read(durable), { state: 'done', outcome });

    const bucket = await new Objm(nc).open(natsSubjects(prefix).outcomesBucket);
    const raw = Buffer.from((await bucket.getBlob(durable))!).toString('utf8');
    assert.ok(!raw.includes('secret answer'), 'sealed in the bucket');
    await assert.rejects((await NatsOutcomes.open(nc, prefix, Buffer.alloc(32, 4))).read(durable), 'another key does not open it');
    const moved = durableKeyOf('tsk_other');
    await bucket.putBlob({ name: moved }, Buffer.from(raw));
    await assert.rejects(outcomes.read(moved), 'an entry copied under another key does not open');
    assert.equal(await outcomes.read('not-a-key'), null);
  });
});
