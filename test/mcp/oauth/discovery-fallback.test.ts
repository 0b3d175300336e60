/**
 * Discovery for a 2025-03-26 server, which publishes no protected resource metadata: its origin is the
 * authorization server — the metadata document at the origin's well-known location when there is one, else the
 * default endpoints `/authorize`, `/token` and `/register` there. A server that does publish resource metadata gets
 * no such fallback: an authorization server without metadata is then an error, as before.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { mcp } from '../../../src/mcp/index.js';
import { CredentialStore, LoginError, login } from '../../../src/mcp/oauth/index.js';
import { TestAuthServer, type AuthServerOptions } from './auth-server.js';
import { withProtectedServers, type ProtectedMcpServer, type ProtectedMcpServerOptions } from './protected-mcp-server.js';
import { followInBrowser, scratchHome } from './scratch-home.js';

const home = scratchHome('oauth-legacy');

function withServers(
  options: AuthServerOptions,
  serverOptions: ProtectedMcpServerOptions,
  body: (as: TestAuthServer, server: ProtectedMcpServer) => Promise<void>,
): Promise<void> {
  return withProtectedServers(options, body, serverOptions);
}

function loginTo(server: ProtectedMcpServer, name: string) {
  return login({ url: server.url, name, store: new CredentialStore(), timeoutMs: 10_000, onAuthorizationUrl: followInBrowser });
}

describe('discovery for a 2025-03-26 server (no protected resource metadata)', () => {
  test('the authorization server metadata at the server origin is used', async () => {
    await withServers({}, { authorizationAtOrigin: true }, async (as, server) => {
      const origin = new URL(server.url).origin;
      const result = await loginTo(server, 'legacy-metadata');
      assert.equal(new URL(result.authorizationServer).origin, origin);
      assert.equal(as.registrationRequests.length, 1);
      assert.equal(as.authorizationRequests.length, 1);
      const called = await mcp.call({ url: server.url, auth: mcp.oauth('legacy-metadata'), tool: 'whoami', arguments: {} });
      assert.equal(called.structuredContent?.clientId, [...as.clients.keys()][0]);
    });
  });

  test('without any metadata, the default endpoints /authorize, /token and /register at the origin are used', async () => {
    await withServers({ discovery: 'none' }, { authorizationAtOrigin: true }, async (as, server) => {
      const origin = new URL(server.url).origin;
      const result = await loginTo(server, 'legacy-defaults');
      assert.equal(result.authorizationServer, origin);
      assert.equal(result.client, 'registered');
      assert.equal(as.registrationRequests.length, 1, 'registered at /register');
      assert.equal(as.authorizationRequests.length, 1, 'authorized at /authorize');
      assert.deepEqual(
        as.tokenRequests.map((form) => form.get('grant_type')),
        ['authorization_code'],
        'exchanged at /token',
      );
      const called = await mcp.call({ url: server.url, auth: mcp.oauth('legacy-defaults'), tool: 'whoami', arguments: {} });
      assert.equal(called.structuredContent?.clientId, [...as.clients.keys()][0]);
    });
  });

  test('a server with resource metadata whose authorization server has none is still an error, not a fallback', async () => {
    await withServers({ discovery: 'none' }, {}, async (as, server) => {
      await assert.rejects(
        loginTo(server, 'no-as-metadata'),
        (err: unknown) => err instanceof LoginError && err.reason === 'discovery' && /no authorization server metadata/.test(err.message),
      );
      assert.equal(as.registrationRequests.length, 0);
    });
  });
  test('a server that does not ask for a token gets no fallback: nothing is registered anywhere', async () => {
    const seen: string[] = [];
    const open = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      if (req.method === 'POST' && req.url === '/mcp') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => open.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(open.address() as AddressInfo).port}/mcp`;
      await assert.rejects(
        login({ url, name: 'not-oauth', store: new CredentialStore(), timeoutMs: 10_000, onAuthorizationUrl: followInBrowser }),
        (err: unknown) => err instanceof LoginError && err.reason === 'discovery' && /may not use OAuth/.test(err.message),
      );
      assert.ok(!seen.some((line) => line.startsWith('POST /register') || line.startsWith('GET /authorize')), seen.join(', '));
    } finally {
      await new Promise<void>((resolve) => {
        open.close(() => resolve());
        open.closeAllConnections();
      });
    }
  });
});
