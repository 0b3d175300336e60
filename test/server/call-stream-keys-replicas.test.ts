/**
 * Trust boundaries, finding 4, across replicas: a key revoked through one replica ends the live call streams it
 * opened on every replica sharing the database, within about a second, each with a last `event: end`; calls
 * made after the revocation never reach them.
 *
 * Real parts only: two platform servers in this process sharing the machine's PostgreSQL (a database of this
 * run's own), a v2 McpServer upstream on loopback whose tool runs in the replica (a remote MCP tool needs no
 * worker, and calls made on a replica are streamed by that replica without NATS).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { makeApi, type Api, startReplica } from './helpers/harness.js';
import { openSse, type SseEvent, type SseStream } from './helpers/sse.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import type { SubakoServer } from '../../src/server/index.js';

/** Far less than the 15 s heartbeat, far more than the 1 s check. */
const CEILING_MS = 8_000;

let upstream: { url: string; stop(): Promise<void> };
let db: TestDatabase;
const servers: SubakoServer[] = [];
const opened: SseStream[] = [];
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
  const started = await startReplica({ databaseUrl: db.url });
  servers.push(started.server);
  return started;
}

async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${CEILING_MS} ms`)), CEILING_MS); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
async function stream(api: Api, key: string): Promise<SseStream> {
  const sse = await openSse(`${api.url}/v1/calls/stream?session=${sessionId}`, { authorization: `Bearer ${key}` });
  opened.push(sse);
  assert.equal(sse.status, 200);
  return sse;
}
const next = (sse: SseStream): Promise<SseEvent> => within(sse.next(), 'the next event');
async function callEvent(sse: SseStream): Promise<{ id: string; outcome: string }> {
  const event = await next(sse);
  assert.equal(event.event, 'call', JSON.stringify(event));
  return JSON.parse(event.data);
}
const say = async (api: Api, words: string): Promise<string> => {
  const answer = await api.call('POST', `/v1/sessions/${sessionId}/calls`, { tool, arguments: { words } });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.call.id as string;
};
async function endsRevoked(sse: SseStream): Promise<void> {
  const end = await within(sse.next(), 'the end of the revoked key\'s stream');
  assert.equal(end.event, 'end', JSON.stringify(end));
  assert.equal(JSON.parse(end.data).reason, 'key_revoked');
  await within(sse.ended, 'the connection closing');
  await assert.rejects(sse.next(), /ended/);
}
async function readKey(): Promise<{ id: string; key: string }> {
  const made = await a.call('POST', '/v1/keys', { name: 'watcher', scope: 'read' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return { id: made.body.id, key: made.body.key };
}

before(async () => {
  upstream = await serveMcpServer(echo);
  db = await createTestDatabase();
  const first = await replica();
  assert.ok(first.apiKey);
  const second = await replica();
  a = makeApi(first.server.url, first.apiKey);
  b = makeApi(second.server.url, first.apiKey);
  const agent = await a.call('POST', '/v1/agents', { name: 'stream-keys', mcp_servers: [{ name: 'echo', url: upstream.url, default_policy: 'allow' }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  sessionId = (await a.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id;
  const tools = await a.call('GET', `/v1/sessions/${sessionId}/tools`);
  tool = tools.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith('say'));
  assert.ok(tool, JSON.stringify(tools.body));
});
after(async () => {
  for (const sse of opened) sse.close();
  for (const server of servers.splice(0)) await server.close(5_000);
  await db.drop();
  await upstream.stop();
});

describe('a stream follows its key across replicas', () => {
  it('a key revoked through replica B ends its stream on replica A, which hears no call made after', async () => {
    const reader = await readKey();
    const watched = await stream(a, reader.key);
    const admin = await stream(a, a.apiKey);
    const earlier = await say(a, 'before');
    for (const sse of [watched, admin]) assert.deepEqual([(await callEvent(sse)).id, (await callEvent(sse)).id], [earlier, earlier]);
    assert.equal((await b.call('DELETE', `/v1/keys/${reader.id}`)).status, 200);
    await endsRevoked(watched);
    const later = await say(a, 'after');
    assert.deepEqual([(await callEvent(admin)).id, (await callEvent(admin)).id], [later, later], 'the call was streamed, to the admin only');
    admin.close();
  });

  it('a key revoked through A ends its streams on A and on B', async () => {
    const reader = await readKey();
    const [onA, onB] = [await stream(a, reader.key), await stream(b, reader.key)];
    assert.equal((await a.call('DELETE', `/v1/keys/${reader.id}`)).status, 200);
    await Promise.all([endsRevoked(onA), endsRevoked(onB)]);
    assert.equal((await openSse(`${b.url}/v1/calls/stream`, { authorization: `Bearer ${reader.key}` })).status, 401);
  });
});
