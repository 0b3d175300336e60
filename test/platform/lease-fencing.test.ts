/**
 * Issue 25, point 3, lease fencing: a live replica whose lease lapses (it loses its database for longer than the
 * lease, while another replica still reaches it) has its running call marked `unknown` by the other. The call then
 * finishes; its end, held until the database is reachable again, is written against the lease it began under: the
 * real outcome is kept, not lost, and the record says the lease lapsed and what the other replica had marked. An
 * idempotent retry is answered that real outcome; the tool ran once.
 *
 * Real parts: a PostgreSQL of the test's own, reached by replica A through a TCP proxy the test cuts (a partition
 * between A and its database) and by replica B directly; a remote MCP server that counts its runs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, createLogger } from '../../src/common/index.js';
import { startServer } from '../../src/app.js';
import type { SubakoServer } from '../../src/server/index.js';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../helpers/postgres.js';
import { startPostgresInstance, type PostgresInstance } from '../helpers/postgres-instance.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { TEST_KEY, makeApi, tempDir, type Api } from '../server/helpers/harness.js';
import { serveCountingUpstream, type CountingUpstream } from '../server/helpers/counting-upstream.js';
import { eventually } from '../helpers/eventually.js';

/** The shortest lease a replica takes: the other marks a partitioned one's calls within seconds. */
const LEASE_MS = 1_000;

describe('a lease that lapses on a live replica does not lose a real outcome', () => {
  let pg: PostgresInstance;
  let db: TestDatabase;
  let proxy: TcpProxy;
  let upstream: CountingUpstream;
  const servers: SubakoServer[] = [];
  let a: Api;
  let b: Api;
  const logOfA: string[] = [];

  before(async () => {
    pg = await startPostgresInstance();
    db = await createTestDatabase(pg.port);
    proxy = await startTcpProxy(pg.port);
    upstream = await serveCountingUpstream();
    const replica = (url: string, lines?: string[]) => startServer({
      dataDir: tempDir(), port: 0, workers: 2, examplesDir: null, env: { ...process.env, ...TEST_KEY }, database: new Secret(url),
      instanceLeaseMs: LEASE_MS, ...(lines ? { logger: createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } }) } : {}),
    });
    const first = await replica(postgresUrl(db.name, proxy.port), logOfA);
    servers.push(first.server);
    a = makeApi(first.server.url, first.firstStart!.apiKey);
    const second = await replica(db.url);
    servers.push(second.server);
    b = makeApi(second.server.url, a.apiKey);
  });
  after(async () => {
    upstream?.release();
    proxy?.restore();
    for (const server of servers) await server.close(5_000).catch(() => undefined);
    await proxy?.close();
    await upstream?.stop();
    pg?.destroy();
  });

  /** Asks `api` for the call until `done` holds of its record, for a generous while. */
  async function untilRecord(api: Api, callId: string, done: (call: any) => boolean): Promise<any> {
    const answer = await eventually(`call ${callId}'s record changes`, () => api.call('GET', `/v1/calls/${callId}`), (a) => a.status === 200 && done(a.body), { everyMs: 100 });
    return answer.body;
  }

  it('the other replica marks the call unknown meanwhile; the real outcome lands over it, the lapse noted; a retry gets it', async () => {
    const agent = await a.call('POST', '/v1/agents', { name: 'ledger-agent', mcp_servers: [{ name: 'ledger', url: upstream.url, default_policy: 'allow' }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await a.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
    const hold = ((await a.call('GET', `/v1/sessions/${session.id}/tools`)).body.items as { name: string }[]).map((t) => t.name).find((n) => n.endsWith('hold'))!;
    const keyed = (api: Api) => api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: hold, arguments: { id: 'f-1' } }, { 'idempotency-key': 'fence-1' });

    const first = keyed(a);
    await upstream.held(1);
    const running = (await b.call('GET', `/v1/sessions/${session.id}/calls`)).body.items[0];
    assert.equal(running.outcome, 'running');

    // A loses its database; its lease lapses; B, which still reaches it, marks A's running call unknown.
    proxy.cut();
    const marked = await untilRecord(b, running.id, (call) => call.outcome !== 'running');
    assert.equal(marked.outcome, 'unknown');
    assert.equal(marked.crash.reason, 'interrupted');
    assert.match(marked.crash.message, /whether the tool ran to its end is unknown\. Check what it would have changed before calling it again/);

    // The call finishes on A: its caller gets the real outcome at once; the end waits for the database.
    upstream.release();
    const answered = await first;
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(answered.body.call.id, running.id);
    assert.equal(answered.body.call.outcome, 'ok');
    assert.equal(answered.body.end_pending, true);

    // A reaches its database again: the end lands over the mark, fenced — the outcome kept, the lapse noted.
    proxy.restore();
    const landed = await untilRecord(b, running.id, (call) => call.outcome !== 'unknown');
    assert.equal(landed.outcome, 'ok');
    assert.deepEqual(landed.model, answered.body.call.model);
    assert.equal(landed.lease_lapsed.marked_as.outcome, 'unknown');
    assert.equal(landed.lease_lapsed.marked_as.crash.reason, 'interrupted');
    assert.match(landed.lease_lapsed.note, /lease of the server running this call lapsed while it ran .* another server marked the call unknown meanwhile/);
    const lines = () => logOfA.join('\n');
    assert.match(lines(), /was written after this server's lease had lapsed/);
    const relapsed = Date.now() + 30_000;
    while (!/this process's lease had lapsed .* is taken afresh/.test(lines()) && Date.now() < relapsed) await new Promise((r) => setTimeout(r, 100));
    assert.match(lines(), /this process's lease had lapsed .* is taken afresh/);

    // A retry with the key, on either replica, is answered the real outcome; the tool ran once.
    for (const api of [b, a]) {
      const retry = await keyed(api);
      assert.equal(retry.status, 200, JSON.stringify(retry.body));
      assert.equal(retry.body.replayed, true);
      assert.equal(retry.body.call.outcome, 'ok');
      assert.ok(retry.body.call.lease_lapsed, 'the record as the log has it, lapse noted');
      assert.deepEqual(retry.body.result, answered.body.result);
    }
    assert.equal(upstream.count('hold'), 1);
    // And A, with a lease again, goes on: its new calls are not marked by anyone.
    const next = await a.call('POST', `/v1/sessions/${session.id}/calls`, { tool: hold, arguments: { id: 'f-2' } });
    assert.equal(next.body.call.outcome, 'ok');
    assert.equal(next.body.call.lease_lapsed, undefined);
  });
});
