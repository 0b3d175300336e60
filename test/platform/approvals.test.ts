/**
 * The pure parts of approvals (platform/approvals.ts): what an approval is bound to of the arguments (their
 * canonical JSON, so a client's key order does not matter but every value does), and which request
 * capabilities let the endpoint ask a client's person (mcp/'s `elicitsForms`), and what a held call's ending,
 * as the store keeps it, means for the call on whichever replica reads it, and a call held as its session goes
 * (on a real SQLite store). The flows themselves run against real
 * clients in test/server/approvals.test.ts, and across replicas in test/server/approvals-replicas.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import { argumentsDigest, canonicalJson } from '../../src/platform/index.js';
import { elicitsForms } from '../../src/mcp/index.js';
import { Approvals, verdictOf } from '../../src/platform/calls/approvals.js';

describe('an approval is bound to the canonical JSON of the arguments', () => {
  it('object keys are sorted at every depth', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
    assert.equal(argumentsDigest({ path: '/x', recursive: true }), argumentsDigest({ recursive: true, path: '/x' }));
  });

  it('every value counts: array order, types, strings and nesting change the digest', () => {
    const base = argumentsDigest({ paths: ['/a', '/b'], n: 1 });
    for (const other of [{ paths: ['/b', '/a'], n: 1 }, { paths: ['/a', '/b'], n: '1' }, { paths: ['/a', '/b'] }, { paths: ['/a', '/b'], n: 1, extra: false }, { paths: [['/a', '/b']], n: 1 }]) {
      assert.notEqual(argumentsDigest(other), base, JSON.stringify(other));
    }
  });

  it('agrees with JSON.stringify on what JSON carries (strings escaped, undefined members dropped)', () => {
    assert.equal(canonicalJson({ s: 'a"\n\u2028', u: undefined, list: [undefined, 1.5, -0, true] }), '{"list":[null,1.5,0,true],"s":"a\\"\\n\u2028"}');
    assert.equal(canonicalJson({ k: 'v' }), JSON.stringify({ k: 'v' }));
  });
});

describe('which clients are asked through elicitation', () => {
  it('a client that declared form elicitation (or elicitation with no modes, which means form)', () => {
    assert.equal(elicitsForms({ elicitation: {} }), true);
    assert.equal(elicitsForms({ elicitation: { form: {} } }), true);
    assert.equal(elicitsForms({ elicitation: { form: {}, url: {} } }), true);
  });

  it('not one that declared only URL elicitation, or none', () => {
    assert.equal(elicitsForms({ elicitation: { url: {} } }), false);
    assert.equal(elicitsForms({}), false);
    assert.equal(elicitsForms({ sampling: {} }), false);
    assert.equal(elicitsForms(undefined), false);
    assert.equal(elicitsForms({ elicitation: true }), false);
  });
});

describe('a held call\'s ending means the same for it on every replica, whoever wrote it', () => {
  const at = '2026-12-01T00:00:00.000Z';
  it('approved, it runs, and its record names the deciding key', () => {
    assert.deepEqual(verdictOf('apr_1', { decision: 'approved', decidedBy: 'key_1', decidedAt: at, reason: null }), {
      run: true, approval: { id: 'apr_1', asked: 'api', decision: 'approved', decidedBy: 'key_1', decidedAt: at },
    });
  });

  it('denied or expired, it ends denied, saying which', () => {
    const denied = verdictOf('apr_1', { decision: 'denied', decidedBy: 'key_1', decidedAt: at, reason: 'denied through the API' });
    assert.deepEqual(denied, {
      run: false, ending: 'denied', message: 'a person denied this call (approval apr_1)',
      approval: { id: 'apr_1', asked: 'api', decision: 'denied', decidedBy: 'key_1', decidedAt: at, reason: 'denied through the API' },
    });
    const expired = verdictOf('apr_1', { decision: 'expired', decidedBy: null, decidedAt: at, reason: 'nobody decided within 1000 ms' });
    assert.equal(expired.run, false);
    assert.equal(!expired.run && expired.ending, 'denied');
    assert.equal(!expired.run && expired.message, 'a person did not approve it: nobody decided within 1000 ms');
  });

  it('stopped because its caller went away, it is cancelled; for any other reason (session deleted, shutdown) it is stopped', () => {
    const ends = ['its caller went away', 'its session was deleted', 'the server shut down'].map((reason) => {
      const verdict = verdictOf('apr_1', { decision: 'stopped', decidedBy: null, decidedAt: at, reason });
      return verdict.run ? null : [verdict.ending, verdict.message, verdict.approval.reason];
    });
    assert.deepEqual(ends, [
      ['cancelled', 'its caller went away while it waited for approval', 'its caller went away'],
      ['stopped', 'its session was deleted while it waited for approval', 'its session was deleted'],
      ['stopped', 'the server shut down while it waited for approval', 'the server shut down'],
    ]);
  });
});

describe('a call held while its session is being deleted', () => {
  it('ends stopped, as any call of a deleted session does, rather than failing on the store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'subako-approvals-'));
    const store = new SqliteStore(join(dir, 'subako.db'));
    const approvals = new Approvals({ store, key: randomBytes(32), windowMs: 5_000 });
    try {
      const plan = await approvals.gate('operator').plan('ses_gone', 'files__delete', { path: '/x' }, { callId: 'call_1', secrets: [] });
      assert.equal(plan.kind, 'hold');
      const verdict = await (plan as Extract<typeof plan, { kind: 'hold' }>).decided;
      assert.equal(verdict.run, false);
      assert.equal((verdict as { ending: string }).ending, 'stopped');
      assert.match((verdict as { message: string }).message, /session was deleted/);
    } finally {
      approvals.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
