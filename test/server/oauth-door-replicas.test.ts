/**
 * Issue 28, point 4, across replicas: with OAuth at the door on two API replicas sharing PostgreSQL, one user
 * reaching an agent's endpoint through both at once gets one session (the store opens it under the user's lock),
 * which each replica then resumes; a user deleted through one replica is let in by neither.
 *
 * Real parts only: two platform servers in this process on the machine's PostgreSQL (a database of this run's own),
 * a real authorization server on loopback serving its keys, and the official v2 MCP client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { TestAuthServer } from '../mcp/oauth/auth-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { startTwoReplicas, type Api } from './helpers/harness.js';
import type { SubakoServer } from '../../src/server/index.js';

const AUDIENCE = 'https://tools.example.com/mcp';
let db: TestDatabase;
let idp: TestAuthServer;
const servers: SubakoServer[] = [];
const clients: Client[] = [];
let a: Api;
let b: Api;
let agentId: string;

before(async () => {
  idp = await new TestAuthServer({ jwt: { audience: AUDIENCE } }).start();
  db = await createTestDatabase();
  const oauthDoor = { issuer: idp.url, audience: AUDIENCE, jwksUrl: `${idp.url}/jwks`, scopes: [], userClaim: 'sub', unknownUsers: 'refuse' as const };
  ({ a, b } = await startTwoReplicas({ databaseUrl: db.url, oauthDoor }, servers));
  const agent = await a.call('POST', '/v1/agents', { name: 'no-tools' });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  agentId = agent.body.id;
  assert.equal((await a.call('POST', '/v1/users', { id: 'ada' })).status, 201);
});

after(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const server of servers.splice(0)) await server.close(5_000);
  await db?.drop();
  await idp?.close();
});

async function connect(api: Api, token: string): Promise<Client> {
  const client = new Client({ name: 'door-replicas', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  clients.push(client);
  await client.connect(new StreamableHTTPClientTransport(new URL(`/v1/agents/${agentId}/mcp`, api.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

describe('one user at the door of two replicas', () => {
  it('gets one session however many requests reach both at once, and a deleted user is refused by both', async () => {
    const token = await idp.mint({ sub: 'ada', aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 3600 });
    const connected = await Promise.all([a, b, a, b, a, b].map((api) => connect(api, token)));
    await Promise.all(connected.map((client) => client.listTools()));
    const sessions = (await b.call('GET', '/v1/users/ada/sessions')).body.items as { id: string; agent_id: string }[];
    assert.equal(sessions.length, 1, JSON.stringify(sessions));
    assert.equal(sessions[0].agent_id, agentId);

    assert.equal((await a.call('DELETE', '/v1/users/ada')).status, 204);
    for (const api of [a, b]) {
      const res = await fetch(new URL(`/v1/agents/${agentId}/mcp`, api.url), {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} }),
      });
      assert.equal(res.status, 403, api.url);
      assert.equal((await res.json()).error.code, 'unknown_user');
    }
  });
});
