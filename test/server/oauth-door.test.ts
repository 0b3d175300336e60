/**
 * Issue 28, point 4: OAuth at the door. With the `oauth*` settings, the MCP endpoints of agents and sessions are
 * protected resources (RFC 9728) of an external authorization server: a standard MCP client that is refused finds
 * the resource metadata through the 401's `resource_metadata`, signs in with the authorization server, and comes
 * back with a JWT access token; the token's subject is the platform user, and the agent's endpoint opens (or
 * resumes) that user's session. A token for another audience, expired, from another issuer, unsigned or signed
 * with a shared secret is refused; capability URLs and API keys keep working; no token reaches a log or an error.
 *
 * Real parts only: a real `subako serve` child with the door on, a real authorization server on loopback
 * (test/mcp/oauth/auth-server.ts, with JWTs signed by a key it serves as a JWK set), and the official v2 MCP
 * client, whose own OAuth support does the sign-in (the "browser" follows the authorization redirect).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { until } from '../helpers/eventually.js';
import { startModernServer } from '../mcp/helpers/servers.js';
import { TestAuthServer } from '../mcp/oauth/auth-server.js';
import { spawnServe, tempDir, type ChildServer } from './helpers/harness.js';

const AUDIENCE = 'https://tools.example.com/mcp';
const SCOPE = 'tools:call';

let idp: TestAuthServer;
let server: ChildServer;
let agentId: string;
const clients: Client[] = [];
const children: ChildServer[] = [];

const doorFlags = (extra: string[] = []): string[] => [
  '--access-log', '--oauth-issuer', idp.url, '--oauth-audience', AUDIENCE, '--oauth-jwks-url', `${idp.url}/jwks`, '--oauth-scope', SCOPE, ...extra,
];

before(async () => {
  idp = await new TestAuthServer({ jwt: { audience: AUDIENCE } }).start();
  // The access log is at info; under the test runner the server would be silent otherwise.
  server = await spawnServe(tempDir(), undefined, doorFlags(), { env: { SUBAKO_LOG_LEVEL: 'info' } });
  children.push(server);
  agentId = server.agentId!;
  for (const id of ['ada', 'bob']) assert.equal((await server.call('POST', '/v1/users', { id })).status, 201);
});

after(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const child of children) {
    child.child.kill('SIGTERM');
    await child.exited;
  }
  await idp?.close();
});

const agentUrl = (base = server.url, id = agentId): string => `${base}/v1/agents/${id}/mcp`;

/** An OAuth client as an MCP host keeps one: registered dynamically, tokens in memory; the authorization URL kept for the "browser". */
function memoryProvider(): OAuthClientProvider & { authorizationUrl?: URL; accessToken(): string } {
  let info: Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
  let tokens: Awaited<ReturnType<OAuthClientProvider['tokens']>>;
  let verifier = '';
  const provider = {
    authorizationUrl: undefined as URL | undefined,
    redirectUrl: 'http://127.0.0.1:1/callback',
    clientMetadata: {
      client_name: 'door test host', redirect_uris: ['http://127.0.0.1:1/callback'], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none',
    },
    clientInformation: () => info,
    saveClientInformation: (saved: typeof info) => { info = saved; },
    tokens: () => tokens,
    saveTokens: (saved: typeof tokens) => { tokens = saved; },
    redirectToAuthorization: (url: URL) => { provider.authorizationUrl = url; },
    saveCodeVerifier: (saved: string) => { verifier = saved; },
    codeVerifier: () => verifier,
    accessToken: () => tokens!.access_token,
  };
  return provider;
}

const newClient = (): Client => {
  const client = new Client({ name: 'door-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  clients.push(client);
  return client;
};

/**
 * A person signs in through a standard MCP client: refused at first, the client discovers the authorization server
 * from the endpoint's challenge and sends the person there; the person approves (the "browser" follows the redirect
 * back with a code); the client trades the code for a token and connects again.
 */
async function signIn(url: string, subject: string): Promise<{ client: Client; token: string }> {
  idp.subject = subject;
  const provider = memoryProvider();
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await assert.rejects(newClient().connect(first), (err: unknown) => err instanceof UnauthorizedError);
  assert.ok(provider.authorizationUrl, 'the client was sent to the authorization server');
  assert.equal(provider.authorizationUrl.origin, idp.url);
  const approved = await fetch(provider.authorizationUrl, { redirect: 'manual' });
  assert.equal(approved.status, 302);
  await first.finishAuth(new URL(approved.headers.get('location')!).searchParams);
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return { client, token: provider.accessToken() };
}

/** A client that sends this bearer token as it is (no OAuth of its own). */
async function connectWith(url: string, token: string): Promise<Client> {
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

const greet = async (client: Client, name: string): Promise<string> => {
  const result = await client.callTool({ name: 'greet', arguments: { name } });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  return JSON.stringify(result.content);
};

const discover = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} });
const post = (url: string, token?: string): Promise<Response> => fetch(url, {
  method: 'POST', body: discover,
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
});

async function userSessions(userId: string): Promise<{ id: string; agent_id: string; user_id: string }[]> {
  const listed = await server.call('GET', `/v1/users/${userId}/sessions`);
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  return listed.body.items;
}

const inAnHour = (): number => Math.floor(Date.now() / 1000) + 3600;
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('the door as a protected resource', () => {
  it('a request without a token gets 401 whose challenge names the resource metadata and the scope; the metadata document names the authorization server', async () => {
    const res = await post(agentUrl());
    assert.equal(res.status, 401);
    const metadataUrl = `${server.url}/.well-known/oauth-protected-resource/v1/agents/${agentId}/mcp`;
    assert.equal(res.headers.get('www-authenticate'), `Bearer realm="subako", resource_metadata="${metadataUrl}", scope="${SCOPE}"`);
    assert.ok(server.stdout().includes(`OAuth at the door: agents' MCP endpoints (${server.url}/v1/agents/<agent id>/mcp) take access tokens from ${idp.url} for ${AUDIENCE}`));
    const metadata = await fetch(metadataUrl);
    assert.equal(metadata.status, 200);
    assert.deepEqual(await metadata.json(), {
      resource: agentUrl(), authorization_servers: [idp.url], scopes_supported: [SCOPE], bearer_methods_supported: ['header'], resource_name: 'subako MCP endpoint',
    });
    // A session's endpoint is a protected resource too, with its own document.
    const session = (await server.call('POST', `/v1/agents/${agentId}/sessions`, {})).body;
    const sessionRes = await post(`${server.url}/v1/sessions/${session.id}/mcp`);
    assert.equal(sessionRes.status, 401);
    assert.match(sessionRes.headers.get('www-authenticate') ?? '', new RegExp(`resource_metadata="${server.url}/\\.well-known/oauth-protected-resource/v1/sessions/${session.id}/mcp"`));
    const sessionMetadata = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/v1/sessions/${session.id}/mcp`)).json();
    assert.equal(sessionMetadata.resource, `${server.url}/v1/sessions/${session.id}/mcp`);
    // The other discovery paths still say there is no authorization server here.
    assert.equal((await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()).error.code, 'no_oauth');
  });
});

describe('an agent endpoint reached with an access token from the identity provider', () => {
  it('a standard MCP client signs in and calls a tool in its user\'s session, opened for that user with that agent', async () => {
    const { client, token } = await signIn(agentUrl(), 'ada');
    assert.match(await greet(client, 'Ada'), /Hello, Ada!/);
    const sessions = await userSessions('ada');
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].agent_id, agentId);
    assert.equal(sessions[0].user_id, 'ada');
    // The token the client holds is the identity provider's JWT, for this deployment's audience.
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
    assert.equal(claims.aud, AUDIENCE);
    assert.equal(claims.sub, 'ada');
  });

  it('the same user signing in again resumes that session; another user gets a session of their own', async () => {
    const before = await userSessions('ada');
    const again = await signIn(agentUrl(), 'ada');
    await greet(again.client, 'Ada again');
    assert.deepEqual((await userSessions('ada')).map((s) => s.id), before.map((s) => s.id), 'resumed, not opened anew');
    const calls = (await server.call('GET', `/v1/sessions/${before[0].id}/calls`)).body.items;
    assert.equal(calls.length, 2, 'both sign-ins called in the one session');

    const bob = await signIn(agentUrl(), 'bob');
    await greet(bob.client, 'Bob');
    const bobs = await userSessions('bob');
    assert.equal(bobs.length, 1);
    assert.notEqual(bobs[0].id, before[0].id);
  });

  it('the session\'s own endpoint takes its user\'s access token, and refuses another user\'s', async () => {
    const [session] = await userSessions('ada');
    const sessionUrl = `${server.url}/v1/sessions/${session.id}/mcp`;
    const ada = await idp.mint({ sub: 'ada', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE });
    await greet(await connectWith(sessionUrl, ada), 'by session');
    const bob = await idp.mint({ sub: 'bob', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE });
    const refused = await post(sessionUrl, bob);
    assert.equal(refused.status, 403);
    assert.equal((await refused.json()).error.code, 'not_your_session');
  });
});

describe('tokens the door refuses', () => {
  const refusals: { name: string; token: () => Promise<string>; status: number; description: RegExp }[] = [
    { name: 'a token for another audience', status: 401, description: new RegExp(`its audience must be ${AUDIENCE}`),
      token: () => idp.mint({ sub: 'ada', aud: 'https://elsewhere.example.com', exp: inAnHour(), scope: SCOPE }) },
    { name: 'an expired token', status: 401, description: /expired/,
      token: () => idp.mint({ sub: 'ada', aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) - 600, scope: SCOPE }) },
    { name: 'a token from another issuer (signed with a key the issuer shares, to show the issuer itself is checked)', status: 401, description: /not issued by/,
      token: () => idp.mint({ iss: 'https://other-idp.example.com', sub: 'ada', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE }) },
    { name: 'an unsigned token (alg none)', status: 401, description: /not signed with an accepted algorithm|not a signed JWT/,
      token: async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: idp.url, sub: 'ada', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE })}.` },
    { name: 'a token signed with a shared secret (HS256)', status: 401, description: /not signed with an accepted algorithm/,
      token: async () => {
        const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iss: idp.url, sub: 'ada', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE })}`;
        return `${unsigned}.${createHmac('sha256', 'guessable').update(unsigned).digest('base64url')}`;
      } },
    { name: 'a token whose signature was tampered with', status: 401, description: /signature/,
      token: async () => {
        const [header, , signature] = (await idp.mint({ sub: 'ada', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE })).split('.');
        return `${header}.${b64({ iss: idp.url, sub: 'bob', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE })}.${signature}`;
      } },
    { name: 'a token without the scope the deployment requires', status: 403, description: new RegExp(`lacks the scope ${SCOPE}`),
      token: () => idp.mint({ sub: 'ada', aud: AUDIENCE, exp: inAnHour(), scope: 'profile' }) },
    { name: 'a token whose subject is not a user id here', status: 401, description: /sub claim is not a user id here/,
      token: () => idp.mint({ sub: 'not a user id', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE }) },
  ];
  for (const refusal of refusals) {
    it(`${refusal.name} is refused with a challenge that says why, and the token appears in no answer`, async () => {
      const token = await refusal.token();
      const res = await post(agentUrl(), token);
      const text = await res.text();
      assert.equal(res.status, refusal.status, text);
      const challenge = res.headers.get('www-authenticate') ?? '';
      assert.match(challenge, new RegExp(`error="${refusal.status === 403 ? 'insufficient_scope' : 'invalid_token'}"`));
      assert.match(challenge, /resource_metadata="/);
      assert.match(challenge, refusal.description);
      assert.match(JSON.parse(text).error.message, refusal.description);
      for (const part of token.split('.').filter((p) => p.length > 8)) {
        assert.ok(!text.includes(part) && !challenge.includes(part), 'no part of the token in the answer');
      }
    });
  }

  it('the official client with a token for another audience fails to connect, and no session is opened', async () => {
    const sessionsBefore = await userSessions('ada');
    const token = await idp.mint({ sub: 'ada', aud: 'https://elsewhere.example.com', exp: inAnHour(), scope: SCOPE });
    await assert.rejects(connectWith(agentUrl(), token), /401|nauthorized/);
    assert.deepEqual(await userSessions('ada'), sessionsBefore);
  });

  it('a user not known here is refused when the deployment says refuse', async () => {
    const res = await post(agentUrl(), await idp.mint({ sub: 'carol', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE }));
    assert.equal(res.status, 403);
    const body = await res.json();
    assert.equal(body.error.code, 'unknown_user');
    assert.match(body.error.message, /carol is not a user here.*POST \/v1\/users.*oauthUnknownUsers/);
    assert.equal((await server.call('GET', '/v1/users/carol')).status, 404);
  });
});

describe('what the door leaves as it was', () => {
  it('capability URLs and session tokens from the API keep working, and so do API keys', async () => {
    const made = await server.call('POST', `/v1/agents/${agentId}/sessions`, {});
    assert.equal(made.status, 201);
    const capability = newClient();
    await capability.connect(new StreamableHTTPClientTransport(new URL(made.body.mcp.capability_url)));
    assert.match(await greet(capability, 'by URL'), /Hello, by URL!/);
    await greet(await connectWith(`${server.url}/v1/sessions/${made.body.id}/mcp`, made.body.token), 'by session token');
    // An API key is no access token: the agent's endpoint takes only the door's.
    assert.equal((await post(agentUrl(), server.apiKey)).status, 401);
    assert.equal((await server.call('GET', '/v1/agents')).status, 200);
  });

  it('the access token never reaches an upstream MCP server the agent uses (no token passthrough)', async () => {
    const upstream = await startModernServer();
    try {
      const agent = await server.call('POST', '/v1/agents', { name: 'with-upstream', mcp_servers: [{ name: 'up', url: upstream.url }] });
      assert.equal(agent.status, 201, JSON.stringify(agent.body));
      const token = await idp.mint({ sub: 'ada', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE });
      const client = await connectWith(agentUrl(server.url, agent.body.id), token);
      const whoami = (await client.listTools()).tools.map((t) => t.name).find((name) => name.endsWith('whoami'));
      assert.ok(whoami);
      const result = await client.callTool({ name: whoami, arguments: {} });
      assert.deepEqual(result.content, [{ type: 'text', text: '(none)' }], 'the upstream saw no authorization at all');
      assert.ok(upstream.stats.calls >= 1);
      for (const seen of upstream.stats.authorizations) assert.ok(!seen.includes(token.split('.')[1]), 'the access token reached the upstream');
    } finally {
      await upstream.stop();
    }
  });

  it('no token the identity provider issued appears in the server\'s output', async () => {
    // The log is written as it comes: waited for until the door's requests are in it.
    await until('the access log names the door\'s requests', () => server.stderr().includes('"route":"/v1/agents/{id}/mcp"'), 15_000);
    const output = server.stdout() + server.stderr();
    assert.ok(idp.issuedSecrets.length > 5);
    for (const secret of idp.issuedSecrets) {
      for (const part of secret.split('.').filter((p) => p.length > 8)) assert.ok(!output.includes(part), 'a token (or part of one) in the log');
    }
  });
});

describe('a deployment that creates the users it does not know', () => {
  it('opens a session for a user its identity provider knows and it did not, creating the user', async () => {
    const creating = await spawnServe(tempDir(), undefined, doorFlags(['--oauth-unknown-users', 'create']));
    children.push(creating);
    assert.equal((await creating.call('GET', '/v1/users/dora')).status, 404);
    const client = await connectWith(agentUrl(creating.url, creating.agentId!), await idp.mint({ sub: 'dora', aud: AUDIENCE, exp: inAnHour(), scope: SCOPE }));
    await greet(client, 'Dora');
    assert.equal((await creating.call('GET', '/v1/users/dora')).status, 200);
    assert.equal((await creating.call('GET', '/v1/users/dora/sessions')).body.items.length, 1);
  });

  it('a door set half-way does not start, and says what is missing', async () => {
    await assert.rejects(spawnServe(tempDir(), undefined, ['--oauth-issuer', idp.url]), /oauthAudience and oauthJwksUrl not/);
  });
});
