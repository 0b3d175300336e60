/**
 * Issue 28, point 1: end users as records. A user is an id the operator's application chooses (its form checked),
 * with optional display fields; it owns vaults; a session may be opened for it; what the session can use is the
 * agent's grants intersected with the vaults the session may use — its own user's, never another user's, even when
 * the agent is granted the origin their credential is for. Deleting a user deletes its vaults and ends its sessions.
 *
 * Real parts only: a `subako serve` child (a real sandbox running the ABI probe guest, whose `http` tool goes through
 * subako_http), an HTTPS server on loopback the guest is granted (its certificate from a CA of the test's own), and
 * the official v2 MCP client on the sessions' endpoints.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, spawnServe, tempDir, type ChildServer } from './helpers/harness.js';
import { startRecordingEgress, type RecordingEgress } from './helpers/recording-egress.js';

const TOKENS = { ada: 'tok-ada-0f3b9c', bob: 'tok-bob-7d21aa', carol: 'tok-carol-55e0c1', operator: 'tok-operator-91c4' } as const;

let server: ChildServer;
let egress: RecordingEgress;
let origin: string;
/** The authorization header of each request the HTTPS server got, in order. */
let seen: (string | undefined)[] = [];
let agentId: string;
const clients: Client[] = [];

interface Session { id: string; user_id: string | null; vault_ids: string[]; mcp: { capability_url: string } }

async function addUser(id: string, fields: Record<string, unknown> = {}): Promise<void> {
  const made = await server.call('POST', '/v1/users', { id, ...fields });
  assert.equal(made.status, 201, JSON.stringify(made.body));
}

/** A vault the user owns, holding a bearer credential for the granted origin. */
async function userVault(userId: string, token: string): Promise<string> {
  const vault = await server.call('POST', `/v1/users/${encodeURIComponent(userId)}/vaults`, { name: `${userId}'s` });
  assert.equal(vault.status, 201, JSON.stringify(vault.body));
  assert.equal(vault.body.user_id, userId);
  const credential = await server.call('POST', `/v1/vaults/${vault.body.id}/credentials`, { target: origin, payload: { auth_scheme: 'static_bearer', token } });
  assert.equal(credential.status, 201, JSON.stringify(credential.body));
  return vault.body.id;
}

async function openSession(body: Record<string, unknown>): Promise<Session> {
  const made = await server.call('POST', `/v1/agents/${agentId}/sessions`, body);
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return made.body;
}

async function connect(session: Session): Promise<Client> {
  const client = new Client({ name: 'users-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
  clients.push(client);
  return client;
}

/** One GET to the granted origin through the guest; answers the authorization header the server received. */
async function fetchThrough(client: Client): Promise<{ authorization: string | undefined; text: string }> {
  const before = seen.length;
  const result = await client.callTool({ name: 'http', arguments: { request: { url: `${origin}/whoami` } } });
  const text = (result.content as { text?: string }[]).map((c) => c.text ?? '').join('\n');
  return { authorization: seen.length > before ? seen.at(-1) : undefined, text };
}

before(async () => {
  egress = await startRecordingEgress('subako-users');
  ({ origin, seen } = egress);
  const { caFile } = egress;
  server = await spawnServe(tempDir(), undefined, ['--allow-private-destinations'], { env: { NODE_EXTRA_CA_CERTS: caFile } });
  assert.equal((await server.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
  const agent = await server.call('POST', '/v1/agents', {
    name: 'per-user', tools: [{ package: 'probe', egress: { allow: [new URL(origin).host], grants: [origin] } }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  agentId = agent.body.id;
});

after(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await egress?.close();
});

describe('a user is an id the application chooses, with optional display fields', () => {
  it('is created, read, listed by id, its fields replaced; an id taken is 409 user_exists', async () => {
    const made = await server.call('POST', '/v1/users', { id: 'auth0|6601', display_name: 'Grace', email: 'grace@example.com' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.deepEqual({ ...made.body, created_at: undefined, updated_at: undefined },
      { id: 'auth0|6601', display_name: 'Grace', email: 'grace@example.com', created_at: undefined, updated_at: undefined });
    const again = await server.call('POST', '/v1/users', { id: 'auth0|6601' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'user_exists');
    const got = await server.call('GET', `/v1/users/${encodeURIComponent('auth0|6601')}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.display_name, 'Grace');
    const replaced = await server.call('PUT', `/v1/users/${encodeURIComponent('auth0|6601')}`, { display_name: 'Grace H.' });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.equal(replaced.body.display_name, 'Grace H.');
    assert.equal(replaced.body.email, null, 'a field left out of the replacement is cleared');
    await addUser('0-first');
    const first = await server.call('GET', '/v1/users?limit=1');
    assert.equal(first.body.items[0].id, '0-first', 'listed by id');
    const second = await server.call('GET', `/v1/users?limit=1&after=${encodeURIComponent(first.body.next_cursor)}`);
    assert.equal(second.body.items[0].id, 'auth0|6601');
    assert.equal((await server.call('GET', '/v1/users/nobody')).status, 404);
  });

  it('refuses an id not of the form, with one line naming it (422 user.id); nothing is created', async () => {
    for (const id of ['', '../admin', 'a b', 'ada/x', '.hidden', '-flag', 'x'.repeat(129), 'é', 'a\nb']) {
      const made = await server.call('POST', '/v1/users', { id });
      assert.ok(made.status === 422 || made.status === 400, `${JSON.stringify(id)}: ${made.status} ${JSON.stringify(made.body)}`);
      if (made.status === 422 && id !== '' && id.length <= 128) {
        assert.equal(made.body.error.code, 'user.id');
        assert.match(made.body.error.message, /beginning with a letter or digit/);
      }
    }
    const all = await server.call('GET', '/v1/users?limit=200');
    assert.ok(all.body.items.every((u: { id: string }) => /^[A-Za-z0-9]/.test(u.id)), JSON.stringify(all.body.items));
  });

  it('is in the OpenAPI document the server serves', async () => {
    const doc = (await server.call('GET', '/v1/openapi.json')).body;
    for (const path of ['/v1/users', '/v1/users/{id}', '/v1/users/{id}/vaults', '/v1/users/{id}/sessions']) assert.ok(doc.paths[path], path);
    assert.ok(doc.paths['/v1/agents/{id}/sessions'].post.requestBody.content['application/json'].schema.properties.user_id);
  });
});

describe('a session for a user uses the agent\'s grants intersected with that user\'s vaults', () => {
  let adaVault: string;
  let bobVault: string;
  let operatorVault: string;

  before(async () => {
    await addUser('ada', { display_name: 'Ada' });
    await addUser('bob');
    adaVault = await userVault('ada', TOKENS.ada);
    bobVault = await userVault('bob', TOKENS.bob);
    const shared = await server.call('POST', '/v1/vaults', { name: 'operator' });
    operatorVault = shared.body.id;
    assert.equal(shared.body.user_id, null);
    await server.call('POST', `/v1/vaults/${operatorVault}/credentials`, { target: origin, payload: { auth_scheme: 'static_bearer', token: TOKENS.operator } });
  });

  it('two users of one agent each reach the granted origin with their own vault\'s credential', async () => {
    const ada = await openSession({ user_id: 'ada' });
    const bob = await openSession({ user_id: 'bob' });
    assert.equal(ada.user_id, 'ada');
    assert.deepEqual(ada.vault_ids, [], 'no vault named: the user\'s own, at each call');
    const [adaClient, bobClient] = [await connect(ada), await connect(bob)];
    assert.equal((await fetchThrough(adaClient)).authorization, `Bearer ${TOKENS.ada}`);
    assert.equal((await fetchThrough(bobClient)).authorization, `Bearer ${TOKENS.bob}`);
    assert.equal((await fetchThrough(adaClient)).authorization, `Bearer ${TOKENS.ada}`, 'and again, in the other order');
    // What the model saw carries no token.
    for (const call of (await server.call('GET', `/v1/sessions/${ada.id}/calls`)).body.items) {
      assert.doesNotMatch(JSON.stringify(call), new RegExp(`${TOKENS.ada}|${TOKENS.bob}`));
    }
  });

  it('a session for A can never use B\'s vault, even though the agent is granted its origin: naming it is refused (422 session.foreign_vault)', async () => {
    const refused = await server.call('POST', `/v1/agents/${agentId}/sessions`, { user_id: 'ada', vault_ids: [bobVault] });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'session.foreign_vault');
    assert.doesNotMatch(refused.body.error.message, /bob/, 'the owner is not named');
    const mixed = await server.call('POST', `/v1/agents/${agentId}/sessions`, { user_id: 'ada', vault_ids: [adaVault, bobVault] });
    assert.equal(mixed.status, 422);
    const noUser = await server.call('POST', `/v1/agents/${agentId}/sessions`, { vault_ids: [bobVault] });
    assert.equal(noUser.status, 422, 'a session of no user uses no user\'s vault');
    assert.equal(noUser.body.error.code, 'session.foreign_vault');
    const sessions = (await server.call('GET', '/v1/users/bob/sessions')).body.items as Session[];
    assert.ok(sessions.every((s) => s.user_id === 'bob'));
  });

  it('and an agent cannot take a remote server\'s credential from a user\'s vault (422 agent.user_vault)', async () => {
    const agent = await server.call('POST', '/v1/agents', {
      name: 'takes-bobs', mcp_servers: [{ name: 'up', url: `${origin}/mcp`, definitions: 'follow', credential: { vault_id: bobVault } }],
    });
    assert.equal(agent.status, 422, JSON.stringify(agent.body));
    assert.equal(agent.body.error.code, 'agent.user_vault');
  });

  it('the operator\'s vault, named, serves a session of no user; a user\'s session may name its own vault and the operator\'s', async () => {
    const operator = await connect(await openSession({ vault_ids: [operatorVault] }));
    assert.equal((await fetchThrough(operator)).authorization, `Bearer ${TOKENS.operator}`);
    const nothing = await fetchThrough(await connect(await openSession({})));
    assert.equal(nothing.authorization, undefined, 'a session of no user and no vault has no credential for the granted origin: nothing is sent');
    assert.match(nothing.text, /credential_unavailable/);
    const adaNamed = await connect(await openSession({ user_id: 'ada', vault_ids: [adaVault] }));
    assert.equal((await fetchThrough(adaNamed)).authorization, `Bearer ${TOKENS.ada}`);
  });

  it('a vault the user gains after its session opened counts at its next call', async () => {
    await addUser('carol');
    const carol = await connect(await openSession({ user_id: 'carol' }));
    const before = await fetchThrough(carol);
    assert.equal(before.authorization, undefined);
    assert.match(before.text, /credential_unavailable/);
    await userVault('carol', TOKENS.carol);
    assert.equal((await fetchThrough(carol)).authorization, `Bearer ${TOKENS.carol}`);
  });

  it('lists a user\'s vaults and sessions', async () => {
    const vaults = (await server.call('GET', '/v1/users/ada/vaults')).body.items as { id: string; user_id: string }[];
    assert.deepEqual(vaults.map((v) => v.id), [adaVault]);
    const sessions = (await server.call('GET', '/v1/users/ada/sessions')).body.items as Session[];
    assert.ok(sessions.length >= 2 && sessions.every((s) => s.user_id === 'ada'), JSON.stringify(sessions));
    assert.equal((await server.call('GET', '/v1/users/nobody/vaults')).status, 404);
    assert.equal((await server.call('POST', '/v1/users/nobody/vaults', { name: 'x' })).status, 404);
  });
});

describe('deleting a user deletes its vaults and ends its sessions', () => {
  it('its sessions are refused at once (REST and MCP), its vaults and credentials are gone; another user\'s session goes on', async () => {
    await addUser('dave');
    await addUser('erin');
    const daveVault = await userVault('dave', 'tok-dave-1');
    await userVault('erin', 'tok-erin-1');
    const dave = await openSession({ user_id: 'dave' });
    const erin = await openSession({ user_id: 'erin' });
    const daveClient = await connect(dave);
    const erinClient = await connect(erin);
    assert.equal((await fetchThrough(daveClient)).authorization, 'Bearer tok-dave-1');

    assert.equal((await server.call('DELETE', '/v1/users/dave')).status, 204);
    assert.equal((await server.call('GET', '/v1/users/dave')).status, 404);
    assert.equal((await server.call('GET', `/v1/sessions/${dave.id}`)).status, 404);
    assert.equal((await server.call('GET', `/v1/vaults/${daveVault}`)).status, 404);
    assert.equal((await server.call('GET', `/v1/vaults/${daveVault}/credentials`)).status, 404);
    const before = seen.length;
    await assert.rejects(daveClient.callTool({ name: 'http', arguments: { request: { url: `${origin}/whoami` } } }));
    assert.equal(seen.length, before, 'nothing reached the upstream for a deleted user\'s session');
    const raw = await fetch(dave.mcp.capability_url, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    assert.equal(raw.status, 404);
    assert.equal((await fetchThrough(erinClient)).authorization, 'Bearer tok-erin-1');
    const again = await server.call('POST', `/v1/agents/${agentId}/sessions`, { user_id: 'dave' });
    assert.equal(again.status, 422);
    assert.equal(again.body.error.code, 'session.unknown_user');
    assert.equal((await server.call('DELETE', '/v1/users/dave')).status, 404);
  });
});
