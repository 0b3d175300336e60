/**
 * Issue 16, the live call stream across replicas: with NATS, `GET /v1/calls/stream` on any replica hears the
 * calls every replica records, each event once (not echoed back, not relayed twice), in the view the calls API
 * answers; and each replica's /metrics still count only the calls it ran.
 *
 * Real parts only: two platform servers in this process sharing the machine's PostgreSQL (a database of this
 * run's own) and the machine's NATS (subjects and bucket named for this run), a v2 McpServer upstream on loopback
 * whose tool runs in the replica (a remote MCP tool needs no worker).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/server';
import { Objm } from '@nats-io/obj';
import * as z from 'zod';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { makeApi, type Api, startReplica } from './helpers/harness.js';
import { openSse, type SseStream } from './helpers/sse.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { connectShared, runName, SHARED_NATS_URL } from '../helpers/nats.js';
import { natsSubjects } from '../../src/platform/index.js';
import type { SubakoServer } from '../../src/server/index.js';

const prefix = runName('stream');
let upstream: { url: string; stop(): Promise<void> };
let db: TestDatabase;
const servers: SubakoServer[] = [];
let a: Api;
let b: Api;
let sessionId: string;
let tool: string;

function echo(): McpServer {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  server.registerTool('say', { description: 'says', inputSchema: z.object({ words: z.string() }) }, async ({ words }) => ({
    content: [{ type: 'text', text: `said ${words}` }],
  }));
  return server;
}

async function replica(): Promise<{ server: SubakoServer; apiKey: string | null }> {
  const started = await startReplica({ databaseUrl: db.url, nats: { url: SHARED_NATS_URL, prefix } });
  servers.push(started.server);
  return started;
}

const stream = (api: Api) => openSse(`${api.url}/v1/calls/stream?session_id=${sessionId}`, { authorization: `Bearer ${api.apiKey}` });
/** The next event, which must be a call's; a stream that hears nothing for 10 s fails the test rather than hanging it. */
const callEvent = async (sse: SseStream) => {
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('no event within 10 s')), 10_000); });
  const event = await Promise.race([sse.next(), silence]).finally(() => clearTimeout(timer));
  assert.equal(event.event, 'call', JSON.stringify(event));
  return JSON.parse(event.data) as { id: string; outcome: string; model: unknown[] };
};
const say = async (api: Api, words: string) => {
  const answer = await api.call('POST', `/v1/sessions/${sessionId}/calls`, { tool, arguments: { words } });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.call.outcome, 'ok');
  return answer.body.call.id as string;
};
/** The `subako_calls_total` count for the tool in a replica's /metrics (0 when it has none). */
const counted = async (api: Api): Promise<number> => {
  const text = await (await fetch(`${api.url}/metrics`, { headers: { authorization: `Bearer ${api.apiKey}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith('subako_calls_total{') && l.includes(`tool="${tool}"`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
};

before(async () => {
  upstream = await serveMcpServer(echo);
  db = await createTestDatabase();
  const first = await replica();
  assert.ok(first.apiKey);
  const second = await replica();
  a = makeApi(first.server.url, first.apiKey);
  b = makeApi(second.server.url, first.apiKey);
  const agent = await a.call('POST', '/v1/agents', { name: 'stream-replicas', mcp_servers: [{ name: 'echo', url: upstream.url, default_policy: 'allow' }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  sessionId = (await a.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id;
  const tools = await a.call('GET', `/v1/sessions/${sessionId}/tools`);
  tool = tools.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith('say'));
  assert.ok(tool, JSON.stringify(tools.body));
});
after(async () => {
  for (const server of servers.splice(0)) await server.close(5_000);
  const bus = await connectShared();
  await (await new Objm(bus).open(natsSubjects(prefix).packagesBucket)).destroy().catch(() => undefined);
  await bus.close();
  await db.drop();
  await upstream.stop();
});

describe('the call stream with several replicas and NATS', () => {
  it('a stream on B hears a call made on A, each event once, as the calls API shows it; and A hears B\'s', async () => {
    const [onA, onB] = [await stream(a), await stream(b)];
    try {
      const ended = new Map<SseStream, unknown>();
      const first = await say(a, 'one');
      for (const sse of [onA, onB]) {
        const started = await callEvent(sse);
        const finished = await callEvent(sse);
        assert.deepEqual([started.id, started.outcome, finished.id, finished.outcome], [first, 'running', first, 'ok']);
        ended.set(sse, finished);
      }
      // Relayed whole: what B streamed of A's call is the record either replica answers for it.
      assert.deepEqual(ended.get(onB), (await b.call('GET', `/v1/calls/${first}`)).body);
      assert.deepEqual(ended.get(onB), ended.get(onA));

      // The next events on both are B's call: nothing of A's came twice (echoed back, or relayed on again).
      const second = await say(b, 'two');
      for (const sse of [onA, onB]) {
        const next = [await callEvent(sse), await callEvent(sse)];
        assert.deepEqual(next.map((e) => [e.id, e.outcome]), [[second, 'running'], [second, 'ok']]);
      }
    } finally {
      onA.close();
      onB.close();
    }
    // Each replica counts the calls it ran, not those it heard of.
    assert.equal(await counted(a), 1);
    assert.equal(await counted(b), 1);
  });
});
