/**
 * Issue 25, point 3, the fault: PostgreSQL goes down while a call runs (an instance of the test's own, never the
 * machine's). The tool finishes; its caller gets the outcome at once (end_pending), not "503, retry"; the call's
 * end is kept and written once the database is back, so its record does not stay `running`. While it is down a
 * retry runs nothing (503: it cannot even be authenticated, nor recorded); once it is back an idempotent retry, on
 * this replica and on another, through REST and MCP, is answered that one outcome — and the tool, a real remote
 * MCP server counting its runs, ran once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Secret, createLogger } from '../../src/common/index.js';
import { startServer } from '../../src/app.js';
import type { SubakoServer } from '../../src/server/index.js';
import { IDEMPOTENCY_META_KEY, REPLAYED_META_KEY } from '../../src/platform/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { startPostgresInstance, type PostgresInstance } from '../helpers/postgres-instance.js';
import { TEST_KEY, makeApi, tempDir, type Api } from '../server/helpers/harness.js';
import { serveCountingUpstream, type CountingUpstream } from '../server/helpers/counting-upstream.js';
import { eventually } from '../helpers/eventually.js';

describe('PostgreSQL down mid-call: one outcome, kept until it lands, and an idempotent retry answered it', () => {
  let pg: PostgresInstance;
  let db: TestDatabase;
  let upstream: CountingUpstream;
  const servers: SubakoServer[] = [];
  const clients: Client[] = [];
  let api: Api;
  const logLines: string[] = [];

  before(async () => {
    pg = await startPostgresInstance();
    db = await createTestDatabase(pg.port);
    upstream = await serveCountingUpstream();
    const started = await startServer({
      dataDir: tempDir(), port: 0, workers: 2, examplesDir: null, env: { ...process.env, ...TEST_KEY }, database: new Secret(db.url),
      logger: createLogger({ level: 'info', destination: { write: (line: string) => void logLines.push(line) } }),
    });
    servers.push(started.server);
    api = makeApi(started.server.url, started.firstStart!.apiKey);
  });
  after(async () => {
    upstream?.release();
    for (const client of clients) await client.close().catch(() => undefined);
    for (const server of servers) await server.close(5_000).catch(() => undefined);
    await upstream?.stop();
    pg?.destroy();
  });

  it('the caller gets the outcome, the record lands once the database is back, a retry never runs the tool again', async () => {
    const agent = await api.call('POST', '/v1/agents', { name: 'ledger-agent', mcp_servers: [{ name: 'ledger', url: upstream.url, default_policy: 'allow' }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await api.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
    const tools = (await api.call('GET', `/v1/sessions/${session.id}/tools`)).body.items.map((t: { name: string }) => t.name) as string[];
    const hold = tools.find((n) => n.endsWith('hold'))!;
    const charge = tools.find((n) => n.endsWith('charge'))!;
    const client = new Client({ name: 'outage-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    clients.push(client);
    const keyed = () => api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: hold, arguments: { id: 'o-1' } }, { 'idempotency-key': 'outage-1' });

    const first = keyed();
    await upstream.held(1);
    pg.stop();
    upstream.release();

    // The tool ran: its caller is told its outcome, and that the record follows.
    const answered = await first;
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(answered.body.call.outcome, 'ok');
    assert.equal(answered.body.end_pending, true);
    assert.match(answered.body.result.content[0].text, /^held o-1 done/);
    const callId = answered.body.call.id as string;

    // While the database is down nothing new can be recorded, so nothing runs: a retry (which cannot even be
    // authenticated) and a new call are answered 503, and the tool is not run again.
    const retryDown = await keyed();
    assert.equal(retryDown.status, 503, JSON.stringify(retryDown.body));
    assert.equal(retryDown.body.error.code, 'store_unavailable');
    await assert.rejects(client.callTool({ name: hold, arguments: { id: 'o-1' }, _meta: { [IDEMPOTENCY_META_KEY]: 'outage-1' } }));
    const refused = await api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: charge, arguments: { amount: 5 } }, { 'idempotency-key': 'outage-2' });
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'store_unavailable');
    assert.equal(upstream.count('charge'), 0, 'nothing ran while nothing could be recorded');
    assert.equal(upstream.count('hold'), 1);
    assert.ok(logLines.some((line) => /call ends are kept in memory and written once it is back/.test(line)), logLines.join('\n'));

    pg.start();
    // The held end lands by itself: the record is the outcome the caller got, once.
    // The database restarting answers 503 meanwhile.
    const landed = await eventually('the call\'s end lands', () => api.call('GET', `/v1/calls/${callId}`), (a) => a.status === 200 && a.body.outcome !== 'running', { everyMs: 100 });
    assert.equal(landed.body.outcome, 'ok');
    assert.deepEqual(landed.body.model, answered.body.call.model);
    assert.equal(landed.body.lease_lapsed, undefined, 'the lease held (the outage was shorter than it)');
    assert.ok(logLines.some((line) => /the database is back: the 1 call ends held meanwhile are written/.test(line)), logLines.join('\n'));

    // After: a retry is answered from the store, on this replica and on another one; the key refused once is free.
    const retryUp = await keyed();
    assert.equal(retryUp.body.replayed, true);
    assert.equal(retryUp.body.call.id, callId);
    const retryMcp = await client.callTool({ name: hold, arguments: { id: 'o-1' }, _meta: { [IDEMPOTENCY_META_KEY]: 'outage-1' } });
    assert.equal(retryMcp._meta?.[REPLAYED_META_KEY], callId);
    assert.deepEqual(retryMcp.content, answered.body.result.content);
    const second = await startServer({
      dataDir: tempDir(), port: 0, workers: 2, examplesDir: null, env: { ...process.env, ...TEST_KEY }, database: new Secret(db.url),
    });
    servers.push(second.server);
    const other = makeApi(second.server.url, api.apiKey);
    const retryOther = await other.call('POST', `/v1/sessions/${session.id}/calls`, { tool: hold, arguments: { id: 'o-1' } }, { 'idempotency-key': 'outage-1' });
    assert.equal(retryOther.status, 200, JSON.stringify(retryOther.body));
    assert.equal(retryOther.body.replayed, true);
    assert.equal(retryOther.body.call.id, callId);
    assert.equal(retryOther.body.call.outcome, 'ok');
    assert.deepEqual(retryOther.body.result, answered.body.result);
    const afterRefusal = await api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: charge, arguments: { amount: 5 } }, { 'idempotency-key': 'outage-2' });
    assert.equal(afterRefusal.status, 200, JSON.stringify(afterRefusal.body));
    assert.equal(afterRefusal.body.replayed, undefined);

    assert.equal(upstream.count('hold', (args) => args.id === 'o-1'), 1, 'the tool ran once, however many retries');
    const log = (await api.call('GET', `/v1/sessions/${session.id}/calls`)).body.items as { id: string; outcome: string }[];
    assert.deepEqual(log.map((c) => [c.id === callId, c.outcome]), [[true, 'ok'], [false, 'ok']], 'one record per call that ran, none left running');
  });
});
