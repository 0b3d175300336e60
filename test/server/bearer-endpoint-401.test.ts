/**
 * Issue 13, point 9: the bearer endpoint (`/v1/sessions/{id}/mcp` with `Authorization: Bearer <session token>`)
 * answers a missing or wrong token with 401 and a `WWW-Authenticate: Bearer` challenge that names no
 * `resource_metadata` (RFC 9728 §5.1), so nothing points a client at an OAuth flow; the OAuth discovery paths
 * a client probes answer 404 with a JSON error saying there is none. The official v2 client is run through a
 * spy proxy that records every request it makes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport, type OAuthClientProvider } from '@modelcontextprotocol/client';
import { startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
let spy: Server;
let spyUrl: string;
/** Every request that passed the spy: method, path, status. */
const seen: { method: string; path: string; status: number }[] = [];

before(async () => {
  s = await startInProcess();
  const target = new URL(s.url);
  spy = createServer((req, res) => {
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      seen.push({ method: req.method ?? '?', path: (req.url ?? '').split('?')[0], status: answer.statusCode ?? 0 });
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => spy.listen(0, '127.0.0.1', r));
  spyUrl = `http://127.0.0.1:${(spy.address() as AddressInfo).port}`;
});
after(async () => {
  spy.closeAllConnections();
  spy.close();
  await s.close();
});

async function newSession(): Promise<{ id: string; token: string; url: string }> {
  const session = (await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {})).body;
  return { id: session.id, token: session.token, url: `${spyUrl}/v1/sessions/${session.id}/mcp` };
}

const discover = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} });
const post = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: discover });

describe('the bearer endpoint without a usable token', () => {
  it('a request without a token gets 401 and "WWW-Authenticate: Bearer realm" with no resource_metadata', async () => {
    const session = await newSession();
    const res = await post(session.url);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="subako"');
    const body = await res.json();
    assert.equal(body.error.code, 'unauthorized');
    assert.match(body.error.message, /Bearer <session token>.*no OAuth flow/);
  });

  it('a wrong token gets 401 with error="invalid_token" and a description, still no resource_metadata', async () => {
    const session = await newSession();
    const other = await newSession();
    for (const token of ['not-a-token', other.token]) {
      const res = await post(session.url, { authorization: `Bearer ${token}` });
      assert.equal(res.status, 401);
      const challenge = res.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /^Bearer realm="subako", error="invalid_token", error_description="[^"]*no OAuth flow is available"$/);
      assert.doesNotMatch(challenge, /resource_metadata/);
    }
  });

  it('an API route names the challenge too (every 401 does)', async () => {
    const res = await fetch(`${s.url}/v1/packages`, { headers: { authorization: 'Bearer wrong' } });
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="subako", error="invalid_token"/);
  });

  it('the OAuth discovery documents and /register answer 404 with a JSON error that says there is no OAuth', async () => {
    const session = await newSession();
    const paths = [
      '/.well-known/oauth-protected-resource',
      `/.well-known/oauth-protected-resource/v1/sessions/${session.id}/mcp`,
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
    ];
    for (const path of paths) {
      const res = await fetch(`${s.url}${path}`);
      assert.equal(res.status, 404, path);
      const body = await res.json();
      assert.equal(body.error.code, 'no_oauth', path);
      assert.match(body.error.message, /no OAuth authorization server.*Authorization: Bearer/);
    }
    const register = await fetch(`${s.url}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['http://127.0.0.1/cb'] }) });
    assert.equal(register.status, 404);
    assert.equal((await register.json()).error.code, 'no_oauth');
    // Not a blanket answer: an unrelated unknown path keeps the plain not_found.
    assert.equal((await (await fetch(`${s.url}/nowhere`)).json()).error.code, 'not_found');
  });
});

describe('the official v2 client against the bearer endpoint', () => {
  it('with the session token it connects and lists tools (through the spy)', async () => {
    const session = await newSession();
    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.url), { requestInit: { headers: { authorization: `Bearer ${session.token}` } } }));
    try {
      assert.ok((await client.listTools()).tools.length > 0);
    } finally {
      await client.close();
    }
  });

  it('without a token it fails with a 401 and never looks for OAuth: no request reaches a discovery path or /register', async () => {
    const session = await newSession();
    const start = seen.length;
    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(session.url))), /401/);
    const requests = seen.slice(start);
    assert.ok(requests.length > 0 && requests.every((r) => r.path === `/v1/sessions/${session.id}/mcp` && r.status === 401), JSON.stringify(requests));
  });

  it('a client that insists on OAuth (an auth provider, as mcp-remote has) is told at every step that there is none', async () => {
    const session = await newSession();
    const start = seen.length;
    const provider: OAuthClientProvider = {
      redirectUrl: 'http://127.0.0.1:1/callback',
      clientMetadata: { client_name: 'insists', redirect_uris: ['http://127.0.0.1:1/callback'] },
      clientInformation: () => undefined,
      saveClientInformation: () => undefined,
      tokens: () => undefined,
      saveTokens: () => undefined,
      redirectToAuthorization: () => { throw new Error('no authorization was expected'); },
      saveCodeVerifier: () => undefined,
      codeVerifier: () => 'unused',
    };
    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    const error = await client.connect(new StreamableHTTPClientTransport(new URL(session.url), { authProvider: provider })).then(
      () => assert.fail('connected without a token'),
      (err: unknown) => err as Error,
    );
    // The SDK's 2025-03-26 fallback registers at the origin's /register whatever the challenge says; the
    // answer it reports is ours, naming the token to bring.
    assert.match(String(error.message), /no OAuth authorization server[\s\S]*Authorization: Bearer/);
    const requests = seen.slice(start);
    const probes = requests.filter((r) => r.path !== `/v1/sessions/${session.id}/mcp`);
    assert.ok(probes.length > 0, JSON.stringify(requests));
    for (const probe of probes) assert.equal(probe.status, 404, JSON.stringify(probe));
  });
});
