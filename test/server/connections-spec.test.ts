/**
 * Issue 28, points 2 and 6, at the edges: an agent's `connections` are checked when it is published (each refusal
 * names the connection, what was wrong and what is accepted), shown with its spec, and documented in the OpenAPI
 * document with the routes around them; a consent link that was altered is refused with a page that says so; and
 * the command line lists a user's connections (never a token) and disconnects one, revoking it.
 *
 * Real parts only: `subako serve` as a child process, the CLI as a child process, the test authorization server
 * and an official v2 SDK MCP server it protects on loopback, the official v2 client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestAuthServer } from '../mcp/oauth/auth-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../mcp/oauth/protected-mcp-server.js';
import type { ChildServer } from './helpers/harness.js';
import { jsonOf, runCli, serveForCli, stopServe } from '../cli/helpers/run-cli.js';
import { connectedAgent, consentWithoutPerson, linkIn, mcpClient, textOf, userSession } from './helpers/connections.js';

let server: ChildServer;
let admin: NodeJS.ProcessEnv;
let auth: TestAuthServer;
let upstream: ProtectedMcpServer;

before(async () => {
  auth = await new TestAuthServer().start();
  upstream = await startProtectedMcpServer(auth, { openListing: true });
  ({ server, admin } = await serveForCli());
});

after(async () => {
  if (server) await stopServe(server);
  await upstream?.close();
  await auth?.close();
});

const servers = () => [{ name: 'up', url: upstream.url, definitions: 'follow' }];

async function refused(connections: unknown[], extra: Record<string, unknown> = {}): Promise<string[]> {
  const made = await server.call('POST', '/v1/agents', { name: 'bad', mcp_servers: servers(), connections, ...extra });
  assert.equal(made.status, 422, JSON.stringify(made.body));
  // One problem is the error itself; several are listed.
  const problems = (made.body.error.problems ?? [made.body.error]) as { code: string; message: string }[];
  assert.ok(problems.every((p) => p.code === 'agent.connection'), JSON.stringify(problems));
  return problems.map((p) => p.message);
}

describe('an agent\'s connections', () => {
  it('are refused, each problem named, when they cannot work', async () => {
    assert.match((await refused([{ name: 'x' }]))[0], /^connections\[0\]: name either mcp_server .* or origin and issuer/);
    assert.match((await refused([{ name: 'x', mcp_server: 'up', origin: 'https://api.example.com', issuer: 'https://id.example.com' }]))[0], /not both and not neither/);
    assert.match((await refused([{ name: 'x', mcp_server: 'nope' }]))[0], /mcp_server "nope" is not one of this agent's mcp_servers \(up\)/);
    assert.match((await refused([{ name: 'x', mcp_server: 'up' }, { name: 'x', mcp_server: 'up' }])).join('\n'), /connections\[1\]: the name x is used by another connection[\s\S]*already has a connection/);
    assert.match((await refused([{ name: 'x', mcp_server: 'up', scopes: ['a b'] }]))[0], /connections\[0\]\.scopes\[0\]: "a b" is not a scope/);
    assert.match((await refused([{ name: 'x', origin: 'https://api.example.com/v1', issuer: 'https://id.example.com' }]))[0], /must be an origin: https:\/\/host\[:port\] with no path/);
    assert.match((await refused([{ name: 'x', origin: 'https://api.example.com', issuer: 'http://id.example.com' }]))[0], /issuer "http:\/\/id.example.com" must be the OAuth provider's issuer: an https URL/);
    const vault = await server.call('POST', '/v1/vaults', { name: 'operator' });
    const withCredential = await server.call('POST', '/v1/agents', {
      name: 'both', mcp_servers: [{ ...servers()[0], credential: { vault_id: vault.body.id } }], connections: [{ name: 'x', mcp_server: 'up' }],
    });
    assert.equal(withCredential.status, 422);
    assert.match(withCredential.body.error.message, /has an operator credential .* either that or each user's own connection/);
    const unknownField = await server.call('POST', '/v1/agents', { name: 'bad', connections: [{ name: 'x', mcp_server: 'up', token: 'no' }] });
    assert.equal(unknownField.status, 400, 'a field the API does not know is refused');
    assert.match(JSON.stringify(unknownField.body), /token/);
  });

  it('are published and shown with the spec: a remote server\'s and an egress origin\'s', async () => {
    const made = await server.call('POST', '/v1/agents', {
      name: 'good', mcp_servers: servers(),
      connections: [
        { name: 'up', mcp_server: 'up', scopes: ['tools:call'] },
        { name: 'crm', origin: 'https://crm.example.com', issuer: 'https://id.example.com/tenant', client_id: 'subako-crm' },
      ],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const shown = await server.call('GET', `/v1/agents/${made.body.id}`);
    assert.deepEqual(shown.body.spec.connections, [
      { name: 'up', mcp_server: 'up', origin: null, issuer: null, scopes: ['tools:call'], client_id: null },
      { name: 'crm', mcp_server: null, origin: 'https://crm.example.com', issuer: 'https://id.example.com/tenant', scopes: [], client_id: 'subako-crm' },
    ]);
  });

  it('are documented in the OpenAPI document', async () => {
    const doc = (await server.call('GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, { operationId: string }>> };
    assert.equal(doc.paths['/v1/users/{id}/connections'].get.operationId, 'listUserConnections');
    assert.equal(doc.paths['/v1/users/{id}/connections/{connection}'].delete.operationId, 'deleteUserConnection');
    assert.equal(doc.paths['/v1/connect/{link}'].get.operationId, 'openConsentLink');
    assert.equal(doc.paths['/v1/connections/callback'].get.operationId, 'finishConnection');
  });
});

describe('consent links and the command line', () => {
  it('refuses an altered link with a page saying so, and an unknown user\'s connections with 404', async () => {
    const agentId = await connectedAgent(server, upstream.url);
    const session = await userSession(server, agentId, 'fay');
    const client = await mcpClient(session.url);
    try {
      const link = linkIn(textOf(await client.callTool({ name: 'me', arguments: {} })));
      const last = link.at(-1) === 'A' ? 'B' : 'A';
      const altered = await fetch(`${link.slice(0, -1)}${last}`, { redirect: 'manual' });
      assert.equal(altered.status, 400);
      assert.match(await altered.text(), /not one this server made/);
      assert.equal((await server.call('GET', '/v1/users/nobody/connections')).status, 404);
    } finally {
      await client.close();
    }
  });

  it('tells a session of no user that the tool needs a user\'s own account, with no link', async () => {
    const agentId = await connectedAgent(server, upstream.url);
    const session = await server.call('POST', `/v1/agents/${agentId}/sessions`, {});
    const client = await mcpClient(session.body.mcp.capability_url);
    try {
      const result = await client.callTool({ name: 'me', arguments: {} });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /acts with an end user's own up account, and this session acts for no user; open the session for a user \(user_id\)/);
      assert.doesNotMatch(textOf(result), /\/v1\/connect\//);
    } finally {
      await client.close();
    }
  });

  it('lists a user\'s connections with subako users connections and ends one with subako users disconnect', async () => {
    const agentId = await connectedAgent(server, upstream.url);
    const session = await userSession(server, agentId, 'gus');
    const client = await mcpClient(session.url);
    try {
      const consent = await consentWithoutPerson(linkIn(textOf(await client.callTool({ name: 'me', arguments: {} }))));
      assert.equal(consent.status, 200, consent.page);
      assert.deepEqual((await client.callTool({ name: 'me', arguments: {} })).structuredContent, { subject: 'auto' });

      const table = await runCli(['users', 'connections', 'gus'], admin);
      assert.equal(table.status, 0, table.stderr);
      assert.match(table.stdout, /^ID\s+NAME\s+STATE\s+SCOPES\s+FOR\s+EXPIRES/m);
      assert.match(table.stdout, /\bup\s+connected\s+tools:call\s+http:\/\/127\.0\.0\.1:\d+\/mcp\b/);
      const listed = jsonOf(await runCli(['users', 'connections', 'gus', '--json'], admin)) as { name: string; status: string }[];
      assert.deepEqual(listed.map((c) => [c.name, c.status]), [['up', 'connected']]);

      const ended = await runCli(['users', 'disconnect', 'gus', 'up'], admin);
      assert.equal(ended.status, 0, ended.stderr);
      assert.match(ended.stdout, /^disconnected up for user gus: revoked at the authorization server$/m);
      const again = await runCli(['users', 'disconnect', 'gus', 'up'], admin);
      assert.notEqual(again.status, 0);
      assert.match(again.stderr, /connection up of user gus was not found/);
      assert.equal((await client.callTool({ name: 'me', arguments: {} })).isError, true, 'asked to connect again');

      const everything = [table.stdout, JSON.stringify(listed), ended.stdout, server.stdout(), server.stderr(), consent.page].join('\n');
      for (const secret of auth.issuedSecrets) assert.ok(!everything.includes(secret), 'a token or code was shown');
    } finally {
      await client.close();
    }
  });
});
