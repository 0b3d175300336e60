/**
 * Issue 25, point 3: a call whose outcome is unknown says so. A `subako serve` replica is killed (SIGKILL) while a
 * call with an idempotency key runs on it: nobody can know whether the tool finished. The other replica marks the
 * call `unknown` once the dead one's lease lapsed, with what to do; a retry with the same key, through the other
 * replica, is answered that `unknown` outcome — it never runs the tool a second time behind the caller's back.
 *
 * Real processes (`node bin/subako.js serve`, two replicas on a PostgreSQL database of this run's own on the
 * machine's server) and a real remote MCP server counting its runs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { serveCountingUpstream, type CountingUpstream } from '../server/helpers/counting-upstream.js';

describe('a replica killed mid-call: the outcome is unknown, said so, and a retry does not run the tool again', () => {
  let db: TestDatabase;
  let upstream: CountingUpstream;
  const replicas: ChildServer[] = [];

  before(async () => {
    db = await createTestDatabase();
    upstream = await serveCountingUpstream();
    const args = ['--database', db.url, '--instance-lease-ms', '1000'];
    replicas.push(await spawnServe(tempDir(), undefined, args));
    replicas.push(await spawnServe(tempDir(), replicas[0].apiKey, args));
  });
  after(async () => {
    upstream?.release();
    for (const replica of replicas) {
      if (replica.child.exitCode === null && replica.child.signalCode === null) {
        replica.child.kill('SIGTERM');
        await replica.exited;
      }
    }
    await upstream?.stop();
    await db?.drop();
  });

  it('the other replica marks the call unknown after the lease; a keyed retry is answered unknown, with what to do', async () => {
    const [a, b] = replicas;
    const agent = await a.call('POST', '/v1/agents', { name: 'ledger-agent', mcp_servers: [{ name: 'ledger', url: upstream.url, default_policy: 'allow' }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await a.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
    const hold = ((await a.call('GET', `/v1/sessions/${session.id}/tools`)).body.items as { name: string }[]).map((t) => t.name).find((n) => n.endsWith('hold'))!;
    const keyed = (api: ChildServer) => api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: hold, arguments: { id: 'u-1' } }, { 'idempotency-key': 'unknown-1' });

    const lost = keyed(a).catch((err: unknown) => err);
    await upstream.held(1);
    a.child.kill('SIGKILL');
    await a.exited;
    assert.ok(await lost instanceof Error, 'its caller lost the answer with the replica');

    // Meanwhile a retry through B waits for the first call (it is still `running`) and then gets its outcome.
    const retry = await keyed(b);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.body.replayed, true);
    assert.equal(retry.body.call.outcome, 'unknown');
    assert.equal(retry.body.call.crash.reason, 'interrupted');
    assert.equal(retry.body.result.isError, true);
    assert.match(retry.body.result.content[0].text,
      /^The outcome of the call to .*hold is unknown: the server running the call stopped .* Check what it would have changed before calling it again/);
    // Asked again, the same answer; the tool ran once.
    const again = await keyed(b);
    assert.equal(again.body.call.id, retry.body.call.id);
    assert.equal(again.body.call.outcome, 'unknown');
    assert.equal(upstream.count('hold'), 1);
    const log = (await b.call('GET', `/v1/sessions/${session.id}/calls`)).body.items as { outcome: string }[];
    assert.deepEqual(log.map((c) => c.outcome), ['unknown'], 'one record, unknown');
  });
});
