/**
 * Issue 28, point 2, across replicas: a user's connection made through one replica is used by every replica; when its
 * access token is due, the calls racing on two replicas refresh it exactly once (the store's lock on PostgreSQL, the
 * record read again inside it — the authorization server rotates refresh tokens, so a second refresh would also be
 * refused); a refresh that no longer works asks the user to connect again instead of failing; and a disconnect
 * through one replica takes effect on the other at the next call.
 *
 * Real parts only: two platform servers in this process on the machine's PostgreSQL (a database of this run's own),
 * the test authorization server and an official v2 SDK MCP server it protects on loopback, the official v2 client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { Client } from '@modelcontextprotocol/client';
import { TestAuthServer } from '../mcp/oauth/auth-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../mcp/oauth/protected-mcp-server.js';
import { startTwoReplicas, type Api } from './helpers/harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { connectedAgent, consentWithoutPerson, linkIn, mcpClient, textOf, userSession, type UserSession } from './helpers/connections.js';
import type { SubakoServer } from '../../src/server/index.js';

let db: TestDatabase;
const servers: SubakoServer[] = [];
let a: Api;
let b: Api;
let auth: TestAuthServer;
let upstream: ProtectedMcpServer;
let session: UserSession;
const clients: Client[] = [];

/** The same path on the other replica: a session's endpoint URL names the replica that made it. */
const onReplica = (api: Api, url: string): string => new URL(new URL(url).pathname, api.url).href;
const refreshGrants = (): number => auth.tokenRequests.filter((form) => form.get('grant_type') === 'refresh_token').length;

/** Makes the stored access token due (as time passing would), in the shared database. */
async function expireStoredToken(): Promise<void> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const changed = await client.query("UPDATE credentials SET expires_at = '2000-01-01T00:00:00.000Z' WHERE display_name = 'connection:up'");
    assert.equal(changed.rowCount, 1);
  } finally {
    await client.end();
  }
}

before(async () => {
  db = await createTestDatabase();
  auth = await new TestAuthServer().start();
  upstream = await startProtectedMcpServer(auth, { openListing: true });
  ({ a, b } = await startTwoReplicas({ databaseUrl: db.url }, servers));
  const agentId = await connectedAgent(a, upstream.url);
  session = await userSession(a, agentId, 'erin');
});

after(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const server of servers.splice(0)) await server.close(5_000);
  await upstream?.close();
  await auth?.close();
  await db?.drop();
});

describe('a user\'s connection on two replicas', () => {
  let onA: Client;
  let onB: Client;

  it('is made through one replica and used by both', async () => {
    onA = await mcpClient(session.url);
    onB = await mcpClient(onReplica(b, session.url));
    clients.push(onA, onB);
    const first = await onB.callTool({ name: 'me', arguments: {} });
    assert.equal(first.isError, true, 'not connected yet');
    const consent = await consentWithoutPerson(linkIn(textOf(first)));
    assert.equal(consent.status, 200, consent.page);
    for (const client of [onA, onB]) assert.deepEqual((await client.callTool({ name: 'me', arguments: {} })).structuredContent, { subject: 'auto' });
  });

  it('is refreshed exactly once when calls on both replicas find its token due at the same moment', async () => {
    await expireStoredToken();
    const before = refreshGrants();
    const seenBefore = upstream.seen.length;
    const results = await Promise.all([onA, onB, onA, onB, onA, onB].map((client) => client.callTool({ name: 'me', arguments: {} })));
    for (const result of results) assert.deepEqual(result.structuredContent, { subject: 'auto' }, JSON.stringify(result));
    assert.equal(refreshGrants() - before, 1, 'one refresh for six calls on two replicas');
    const tokens = new Set(upstream.seen.slice(seenBefore).map((s) => s.token));
    assert.equal(tokens.size, 1, 'every call carried the one refreshed token');
    const listed = await b.call('GET', '/v1/users/erin/connections');
    assert.equal(listed.body.items[0].status, 'connected');
    assert.ok(Date.parse(listed.body.items[0].expires_at) > Date.now(), 'the new expiry is stored');
  });

  it('asks the user to connect again when the token is due and its refresh no longer works, instead of failing', async () => {
    await expireStoredToken();
    auth.failRefresh = true;
    let link: string;
    try {
      const result = await onA.callTool({ name: 'me', arguments: {} });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /not connected \(or its authorization ran out\)/);
      link = linkIn(textOf(result));
    } finally {
      auth.failRefresh = false;
    }
    // Connecting again replaces the connection: one, working, with new tokens.
    const grantsBefore = auth.tokenRequests.filter((form) => form.get('grant_type') === 'authorization_code').length;
    assert.equal((await consentWithoutPerson(link)).status, 200);
    assert.equal(auth.tokenRequests.filter((form) => form.get('grant_type') === 'authorization_code').length, grantsBefore + 1);
    assert.deepEqual((await onB.callTool({ name: 'me', arguments: {} })).structuredContent, { subject: 'auto' });
    assert.equal((await a.call('GET', '/v1/users/erin/connections')).body.items.length, 1);
  });

  it('is ended through one replica and asked for again on the other at the next call', async () => {
    const ended = await b.call('DELETE', '/v1/users/erin/connections/up');
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.equal(ended.body.revoked, true);
    const result = await onA.callTool({ name: 'me', arguments: {} });
    assert.equal(result.isError, true);
    linkIn(textOf(result));
    assert.deepEqual((await a.call('GET', '/v1/users/erin/connections')).body.items, []);
    assert.equal((await a.call('DELETE', '/v1/users/erin/connections/up')).status, 404);
  });

  it('is revoked at the authorization server when its user is deleted', async () => {
    const result = await onB.callTool({ name: 'me', arguments: {} });
    assert.equal((await consentWithoutPerson(linkIn(textOf(result)))).status, 200);
    assert.deepEqual((await onA.callTool({ name: 'me', arguments: {} })).structuredContent, { subject: 'auto' });
    const token = upstream.seen.at(-1)!.token;
    assert.notEqual(auth.introspect(token), undefined);
    const revocations = auth.revocationRequests.length;
    assert.equal((await b.call('DELETE', '/v1/users/erin')).status, 204);
    assert.equal(auth.revocationRequests.length, revocations + 2, 'its refresh and access tokens');
    assert.equal(auth.introspect(token), undefined);
  });
});
