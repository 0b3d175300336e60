/**
 * The sealed envelope's IVs (nats-envelope.ts): taken from the thread's pool of random bytes (common/random-pool.ts),
 * which one call into the CSPRNG fills for many messages, each byte handed out once. A repeated IV under one key would break AES-GCM, so every IV of thousands of messages — across
 * several refills of the block — must differ, and each message must still open.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openEnvelope, sealEnvelope } from '../../src/platform/scale-out/nats-envelope.js';

describe('the envelope\'s IVs', () => {
  it('are never the same twice, across refills of their pool, and every message opens', () => {
    const key = randomBytes(32);
    const subject = 'run.calls';
    const ivs = new Set<string>();
    const count = 5_000;
    for (let i = 0; i < count; i++) {
      const sealed = Buffer.from(sealEnvelope(key, subject, { k: 'call', c: `call-${i}`, n: 0, e: Date.now() + 60_000 }, { i }));
      const headLength = sealed.readUInt16BE(1);
      ivs.add(sealed.subarray(3 + headLength, 3 + headLength + 12).toString('hex'));
      const opened = openEnvelope<{ i: number }>(key, subject, sealed, ['call']);
      assert.ok(opened.ok && opened.body.i === i, `message ${i} opens as itself`);
    }
    assert.equal(ivs.size, count);
  });
});
