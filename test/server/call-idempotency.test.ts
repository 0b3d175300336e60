/**
 * Issue 25, point 3: a retried call with the same idempotency key is answered the first call's outcome instead of
 * running again — through REST (the Idempotency-Key header) and a session's MCP endpoint (`_meta`
 * "io.subako/idempotency-key") alike, on SQLite and on PostgreSQL. The tool is a real remote MCP server that
 * counts its runs, so "ran once" is counted where it happens, not inferred from our own answers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Secret } from '../../src/common/index.js';
import { startServer } from '../../src/app.js';
import type { SubakoServer } from '../../src/server/index.js';
import { IDEMPOTENCY_META_KEY, REPLAYED_META_KEY } from '../../src/platform/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { TEST_KEY, makeApi, tempDir, type Api } from './helpers/harness.js';
import { serveCountingUpstream, type CountingUpstream } from './helpers/counting-upstream.js';

interface Session { id: string; mcp: { capability_url: string } }

function idempotencySuite(title: string, database: () => Promise<TestDatabase | null>): void {
  describe(title, () => {
    let upstream: CountingUpstream;
    let db: TestDatabase | null = null;
    let server: SubakoServer;
    let api: Api;
    let agentId: string;
    const clients: Client[] = [];

    before(async () => {
      upstream = await serveCountingUpstream();
      db = await database();
      const started = await startServer({
        dataDir: tempDir(), port: 0, workers: 2, examplesDir: null, env: { ...process.env, ...TEST_KEY },
        ...(db ? { database: new Secret(db.url) } : {}),
      });
      server = started.server;
      api = makeApi(server.url, started.firstStart!.apiKey);
      const agent = await api.call('POST', '/v1/agents', { name: 'ledger-agent', mcp_servers: [{ name: 'ledger', url: upstream.url, default_policy: 'allow' }] });
      assert.equal(agent.status, 201, JSON.stringify(agent.body));
      agentId = agent.body.id;
    });
    after(async () => {
      for (const client of clients) await client.close().catch(() => undefined);
      await server?.close(5_000);
      await upstream?.stop();
      await db?.drop();
    });

    async function newSession(): Promise<{ session: Session; tools: Record<'charge' | 'hold', string> }> {
      const session = await api.call('POST', `/v1/agents/${agentId}/sessions`, {});
      assert.equal(session.status, 201, JSON.stringify(session.body));
      const listed = await api.call('GET', `/v1/sessions/${session.body.id}/tools`);
      const named = (tool: string) => listed.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith(tool));
      assert.ok(named('charge') && named('hold'), JSON.stringify(listed.body));
      return { session: session.body, tools: { charge: named('charge'), hold: named('hold') } };
    }
    const call = (sessionId: string, tool: string, args: Record<string, unknown>, key?: string) =>
      api.call('POST', `/v1/sessions/${sessionId}/calls`, { tool, arguments: args }, key === undefined ? {} : { 'idempotency-key': key });
    const charges = (amount: number) => upstream.count('charge', (args) => args.amount === amount);

    async function mcpClient(session: Session): Promise<Client> {
      const client = new Client({ name: 'idempotency-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
      clients.push(client);
      return client;
    }

    it('REST: a retry with the same key is answered the first call\'s outcome, and the tool runs once', async () => {
      const { session, tools } = await newSession();
      const first = await call(session.id, tools.charge, { amount: 11 }, 'order-11');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(first.body.call.outcome, 'ok');
      assert.equal(first.body.replayed, undefined);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const again = await call(session.id, tools.charge, { amount: 11 }, 'order-11');
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(again.body.replayed, true);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.body.call.id, first.body.call.id, 'the first call\'s record');
      assert.deepEqual(again.body.result, first.body.result, 'the first call\'s result, as it was');
      assert.equal(charges(11), 1, 'the tool ran once');
      // Without a key, the same call is a new call.
      const unkeyed = await call(session.id, tools.charge, { amount: 11 });
      assert.notEqual(unkeyed.body.call.id, first.body.call.id);
      assert.equal(charges(11), 2);
      const log = await api.call('GET', `/v1/sessions/${session.id}/calls`);
      assert.equal(log.body.items.length, 2, 'a replay leaves no record of its own');
      // What the key keeps is sealed (the result may hold what the call log redacts), and the request only as a keyed hash.
      const kept = await server.platform.store.getCallKey(session.id, 'order-11');
      assert.equal(kept?.callId, first.body.call.id);
      assert.match(kept!.result!, /^subako-sealed:v1:/);
      assert.doesNotMatch(kept!.result!, /charged/);
      assert.match(kept!.requestHash, /^[0-9a-f]{64}$/);
    });

    it('REST: the same key with other arguments or another tool is refused, and nothing runs', async () => {
      const { session, tools } = await newSession();
      assert.equal((await call(session.id, tools.charge, { amount: 21 }, 'order-21')).status, 200);
      const other = await call(session.id, tools.charge, { amount: 22 }, 'order-21');
      assert.equal(other.status, 422, JSON.stringify(other.body));
      assert.equal(other.body.error.code, 'idempotency_key_reused');
      assert.match(other.body.error.message, /"order-21" was already used in this session for a call with another tool or other arguments; a retry must send the same tool/);
      const otherTool = await call(session.id, tools.hold, { id: 'x' }, 'order-21');
      assert.equal(otherTool.status, 422, JSON.stringify(otherTool.body));
      assert.equal(charges(22), 0);
      assert.equal(upstream.count('hold', (args) => args.id === 'x'), 0);
      // The arguments compare as JSON values: the order of their keys does not matter.
      const reordered = await api.call('POST', `/v1/sessions/${session.id}/calls`, { arguments: { amount: 21 }, tool: tools.charge }, { 'idempotency-key': 'order-21' });
      assert.equal(reordered.body.replayed, true);
    });

    it('REST: a key that is not 1-255 visible ASCII characters is refused before anything runs', async () => {
      const { session, tools } = await newSession();
      for (const key of ['has space', 'x'.repeat(256)]) {
        const refused = await call(session.id, tools.charge, { amount: 31 }, key);
        assert.equal(refused.status, 400, JSON.stringify(refused.body));
        assert.equal(refused.body.error.code, 'bad_idempotency_key');
        assert.match(refused.body.error.message, /^the Idempotency-Key header .*; send 1-255 visible ASCII characters/);
      }
      assert.equal(charges(31), 0);
    });

    it('a key is one session\'s: the same key in another session is another call', async () => {
      const one = await newSession();
      const two = await newSession();
      const a = await call(one.session.id, one.tools.charge, { amount: 41 }, 'shared-key');
      const b = await call(two.session.id, two.tools.charge, { amount: 41 }, 'shared-key');
      assert.equal(b.body.replayed, undefined);
      assert.notEqual(a.body.call.id, b.body.call.id);
      assert.equal(charges(41), 2);
    });

    it('a retry while the first call runs waits for it and gets its outcome; the tool runs once', async () => {
      const { session, tools } = await newSession();
      const first = call(session.id, tools.hold, { id: 'w1' }, 'hold-w1');
      await upstream.held(1);
      const retry = call(session.id, tools.hold, { id: 'w1' }, 'hold-w1');
      const mcp = await mcpClient(session);
      const retryMcp = mcp.callTool({ name: tools.hold, arguments: { id: 'w1' }, _meta: { [IDEMPOTENCY_META_KEY]: 'hold-w1' } });
      // Both retries are in: the first is still held (nothing answered yet); then it finishes.
      upstream.release();
      const [a, b, c] = await Promise.all([first, retry, retryMcp]);
      assert.equal(a.status, 200, JSON.stringify(a.body));
      assert.equal(b.status, 200, JSON.stringify(b.body));
      assert.equal(b.body.replayed, true);
      assert.equal(b.body.call.id, a.body.call.id);
      assert.deepEqual(c.content, a.body.result.content);
      assert.equal(c._meta?.[REPLAYED_META_KEY], a.body.call.id);
      assert.equal(upstream.count('hold', (args) => args.id === 'w1'), 1);
    });

    it('MCP: a retry with the same _meta key is answered the first outcome, naming the call it replays; REST and MCP share a session\'s keys', async () => {
      const { session, tools } = await newSession();
      const client = await mcpClient(session);
      const meta = { [IDEMPOTENCY_META_KEY]: 'mcp-51' };
      const first = await client.callTool({ name: tools.charge, arguments: { amount: 51 }, _meta: meta });
      assert.equal(first.isError, undefined);
      assert.equal(first._meta?.[REPLAYED_META_KEY], undefined);
      const again = await client.callTool({ name: tools.charge, arguments: { amount: 51 }, _meta: meta });
      assert.deepEqual(again.content, first.content);
      const log = await api.call('GET', `/v1/sessions/${session.id}/calls`);
      assert.equal(log.body.items.length, 1);
      assert.equal(log.body.items[0].via, 'mcp');
      assert.equal(again._meta?.[REPLAYED_META_KEY], log.body.items[0].id);
      // The same key through REST: the same call.
      const rest = await call(session.id, tools.charge, { amount: 51 }, 'mcp-51');
      assert.equal(rest.body.replayed, true);
      assert.equal(rest.body.call.id, log.body.items[0].id);
      assert.equal(charges(51), 1);
    });

    it('MCP: the same key with other arguments, or a key that is not a string, is a JSON-RPC invalid-params error; nothing runs', async () => {
      const { session, tools } = await newSession();
      const client = await mcpClient(session);
      await client.callTool({ name: tools.charge, arguments: { amount: 61 }, _meta: { [IDEMPOTENCY_META_KEY]: 'mcp-61' } });
      await assert.rejects(client.callTool({ name: tools.charge, arguments: { amount: 62 }, _meta: { [IDEMPOTENCY_META_KEY]: 'mcp-61' } }),
        (err: { code?: number; message?: string }) => err.code === -32602 && /already used in this session for a call with another tool or other arguments/.test(err.message ?? ''));
      await assert.rejects(client.callTool({ name: tools.charge, arguments: { amount: 63 }, _meta: { [IDEMPOTENCY_META_KEY]: 63 } }),
        (err: { code?: number; message?: string }) => err.code === -32602 && /_meta\["io\.subako\/idempotency-key"\] is number, not a string/.test(err.message ?? ''));
      assert.equal(charges(62) + charges(63), 0);
    });

    it('a first call that did not run its tool leaves the key free: the retry runs', async () => {
      const { session, tools } = await newSession();
      // The remote tool's schema refuses the arguments before anything is sent (outcome invalid_arguments).
      const refused = await call(session.id, tools.charge, { amount: 'seventy' }, 'order-71');
      assert.equal(refused.status, 200, JSON.stringify(refused.body));
      assert.equal(refused.body.call.outcome, 'invalid_arguments');
      const again = await call(session.id, tools.charge, { amount: 'seventy' }, 'order-71');
      assert.equal(again.body.replayed, undefined, 'not a replay: the first call never ran its tool');
      assert.notEqual(again.body.call.id, refused.body.call.id);
    });
  });
}

idempotencySuite('idempotency keys of calls, SQLite', async () => null);
idempotencySuite('idempotency keys of calls, PostgreSQL', () => createTestDatabase());
