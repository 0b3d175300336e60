/**
 * Issue 28, point 1, across replicas: deleting a user through one replica ends the user's sessions on every
 * replica at once — a session opened through A, served to an MCP client through B, is refused by B as soon as the
 * user is deleted through A — and a session cannot be opened for a user that another replica is deleting (the
 * user's lock in the store: a session is added only while its user exists).
 *
 * Real parts only: two platform servers in this process on the machine's PostgreSQL (a database of this run's own),
 * each with its own data directory, and the official v2 MCP client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startTwoReplicas, type Api } from './helpers/harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import type { SubakoServer } from '../../src/server/index.js';

let db: TestDatabase;
const servers: SubakoServer[] = [];
let a: Api;
let b: Api;
let agentId: string;

/** The same path on the other replica: a session's endpoint URL names the replica that made it. */
const onReplica = (api: Api, url: string): URL => new URL(new URL(url).pathname, api.url);

before(async () => {
  db = await createTestDatabase();
  ({ a, b } = await startTwoReplicas({ databaseUrl: db.url }, servers));
  const agent = await a.call('POST', '/v1/agents', { name: 'no-tools' });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  agentId = agent.body.id;
});

after(async () => {
  for (const server of servers.splice(0)) await server.close(5_000);
  await db?.drop();
});

describe('a user deleted through one replica', () => {
  it('has its sessions refused through the other at once, REST and MCP; another user\'s session there goes on', async () => {
    for (const id of ['ada', 'bob']) assert.equal((await a.call('POST', '/v1/users', { id })).status, 201);
    const vault = await a.call('POST', '/v1/users/ada/vaults', { name: 'ada' });
    assert.equal(vault.status, 201);
    const ada = (await a.call('POST', `/v1/agents/${agentId}/sessions`, { user_id: 'ada' })).body as { id: string; mcp: { capability_url: string } };
    const bob = (await a.call('POST', `/v1/agents/${agentId}/sessions`, { user_id: 'bob' })).body as { id: string; mcp: { capability_url: string } };
    const client = new Client({ name: 'users-replicas', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(onReplica(b, ada.mcp.capability_url)));
    const bobClient = new Client({ name: 'users-replicas', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await bobClient.connect(new StreamableHTTPClientTransport(onReplica(b, bob.mcp.capability_url)));
    try {
      assert.deepEqual((await client.listTools()).tools, [], 'served through B before the deletion');
      assert.equal((await b.call('GET', '/v1/users/ada/sessions')).body.items.length, 1);

      assert.equal((await a.call('DELETE', '/v1/users/ada')).status, 204);
      assert.equal((await b.call('GET', `/v1/sessions/${ada.id}`)).status, 404);
      assert.equal((await b.call('GET', '/v1/users/ada')).status, 404);
      assert.equal((await b.call('GET', `/v1/vaults/${vault.body.id}`)).status, 404);
      await assert.rejects(client.ping(), 'the client is refused through B');
      const raw = await fetch(onReplica(b, ada.mcp.capability_url), {
        method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      assert.equal(raw.status, 404);
      assert.deepEqual((await bobClient.listTools()).tools, [], 'bob\'s session through B goes on');
    } finally {
      await client.close().catch(() => undefined);
      await bobClient.close().catch(() => undefined);
    }
  });

  it('leaves no session behind when sessions are opened for it through the other replica while it is deleted', async () => {
    assert.equal((await a.call('POST', '/v1/users', { id: 'carol' })).status, 201);
    // Sessions opened through B race the deletion through A: each is either refused (the user was gone) or made before
    // the deletion and removed with it; none outlives the user.
    const opened = Array.from({ length: 8 }, () => b.call('POST', `/v1/agents/${agentId}/sessions`, { user_id: 'carol' }));
    const deleted = a.call('DELETE', '/v1/users/carol');
    const answers = await Promise.all(opened);
    assert.equal((await deleted).status, 204);
    for (const answer of answers) {
      if (answer.status === 201) assert.equal((await b.call('GET', `/v1/sessions/${answer.body.id}`)).status, 404, 'a session made before the deletion went with it');
      else {
        assert.equal(answer.status, 422, JSON.stringify(answer.body));
        assert.equal(answer.body.error.code, 'session.unknown_user');
      }
    }
    assert.equal((await a.call('GET', '/v1/users/carol/sessions')).status, 404);
  });
});
