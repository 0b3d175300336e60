/**
 * Issue 27, point 8, across replicas: a session's client listens through replica B while replica A sees the session's
 * tools change (its refresh finds the upstream's tools changed, the upstream having said nothing): the change reaches
 * the client on B through NATS (a sealed `listing` message). A message on the listings subject that is not sealed with
 * the deployment's key reaches no listener, and B counts it dropped (`subako_bus_dropped_total`).
 *
 * Real parts only: two platform servers in this process on the machine's PostgreSQL (a database of this run's own)
 * and NATS (subjects of this run's own), a v2 upstream on loopback, and the official v2 client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { makeApi, startReplica, type Api } from './helpers/harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { SHARED_NATS_URL, removeBuckets, runName } from '../helpers/nats.js';
import { until } from '../helpers/eventually.js';
import { serveNotes, type Notes } from './helpers/notes-upstream.js';
import { natsSubjects } from '../../src/platform/scale-out/nats-calls.js';
import type { SubakoServer } from '../../src/server/index.js';

let db: TestDatabase;
let notes: Notes;
let outsider: NatsConnection;
const prefix = runName('listen');
const servers: SubakoServer[] = [];
let a: Api;
let b: Api;

/** The same path on the other replica: a session's endpoint URL names the replica that made it. */
const onReplica = (api: Api, url: string): URL => new URL(new URL(url).pathname, api.url);

async function connected(url: URL): Promise<{ client: Client; heard: string[] }> {
  const client = new Client({ name: 'listen-replicas', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  const heard: string[] = [];
  client.setNotificationHandler('notifications/tools/list_changed', (n) => void heard.push(n.method));
  client.setNotificationHandler('notifications/resources/updated', (n) => void heard.push(`${n.method} ${String((n.params as { uri?: unknown }).uri)}`));
  await client.connect(new StreamableHTTPClientTransport(url));
  return { client, heard };
}

async function droppedOnB(): Promise<number> {
  const answer = await fetch(`${b.url}/metrics`, { headers: { authorization: `Bearer ${b.apiKey}` } });
  const text = await answer.text();
  let total = 0;
  for (const match of text.matchAll(/^subako_bus_dropped_total\{reason="(malformed|unauthentic)"\} (\d+)/gm)) total += Number(match[2]);
  return total;
}

before(async () => {
  db = await createTestDatabase();
  notes = await serveNotes();
  const first = await startReplica({ databaseUrl: db.url, nats: { url: SHARED_NATS_URL, prefix } });
  servers.push(first.server);
  const second = await startReplica({ databaseUrl: db.url, nats: { url: SHARED_NATS_URL, prefix } });
  servers.push(second.server);
  a = makeApi(first.server.url, first.apiKey!);
  b = makeApi(second.server.url, first.apiKey!);
  outsider = await connect({ servers: SHARED_NATS_URL, name: 'listen-replicas-outsider' });
});

after(async () => {
  for (const server of servers.splice(0)) await server.close(5_000);
  await outsider?.close();
  await notes?.stop();
  await removeBuckets(prefix).catch(() => undefined);
  await db?.drop();
});

describe('a session listened to through one replica', () => {
  it('hears a tools change seen through the other', async () => {
    const agent = await a.call('POST', '/v1/agents', { name: 'listen-replicas', mcp_servers: [{ name: 'notes', url: notes.url, default_policy: 'allow', definitions: 'follow' }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = await a.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    assert.equal(session.status, 201, JSON.stringify(session.body));
    const url = session.body.mcp.capability_url as string;
    const onA = await connected(onReplica(a, url));
    const onB = await connected(onReplica(b, url));
    try {
      assert.deepEqual((await onA.client.listTools()).tools.map((t) => t.name), ['jot'], 'A serves the session');
      await onB.client.listen({ toolsListChanged: true });
      // The upstream changes its tools and says nothing; A's next build of the session's toolbox finds it.
      notes.tools = ['jot', 'tag'];
      servers[0].platform.toolboxes.evict(session.body.id);
      assert.deepEqual((await onA.client.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name), ['jot', 'tag']);
      await until('the change reached the client listening through B', () => onB.heard.length === 1);
      assert.deepEqual(onB.heard, ['notifications/tools/list_changed']);
      assert.deepEqual((await onB.client.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name), ['jot', 'tag'], 'B dropped its cached toolbox too');
    } finally {
      notes.tools = ['jot'];
      await onA.client.close();
      await onB.client.close();
    }
  });

  it('hears nothing of a message not sealed with the deployment\'s key, which B counts dropped', async () => {
    const agent = await a.call('POST', '/v1/agents', { name: 'listen-replicas-forged', mcp_servers: [{ name: 'notes', url: notes.url, default_policy: 'allow', definitions: 'follow' }] });
    const session = await a.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    const onB = await connected(onReplica(b, session.body.mcp.capability_url as string));
    try {
      await onB.client.listen({ toolsListChanged: true, resourceSubscriptions: ['notes://a'] });
      const before = await droppedOnB();
      const forged = { v: 1, origin: 'outsider', sessionId: session.body.id, from: 'session', change: { kind: 'resource', uri: 'notes://a' } };
      outsider.publish(natsSubjects(prefix).listings, new TextEncoder().encode(JSON.stringify(forged)));
      await outsider.flush();
      await until('B counted the forged message dropped', async () => (await droppedOnB()) > before);
      // A real change after it arrives; the forged one never did.
      notes.bus.publish({ kind: 'resource_updated', uri: 'notes://a' });
      await until('the real update arrived', () => onB.heard.length >= 1);
      assert.deepEqual(onB.heard, ['notifications/resources/updated notes://a']);
    } finally {
      await onB.client.close();
    }
  });
});
