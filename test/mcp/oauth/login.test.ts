import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { McpAuthError, McpServerError } from '../../../src/mcp/errors.js';
import { mcp, REDACTED } from '../../../src/mcp/index.js';
import { CredentialStore, LoginError, accessTokenFor, login } from '../../../src/mcp/oauth/index.js';
import { TestAuthServer, type AuthServerOptions } from './auth-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer, type ProtectedMcpServerOptions } from './protected-mcp-server.js';

/** The test's browser: follows the authorization URL to the server, then its redirect to the loopback. */
async function followInBrowser(authorizationUrl: string): Promise<number> {
  const atServer = await fetch(authorizationUrl, { redirect: 'manual' });
  await atServer.body?.cancel();
  const location = atServer.headers.get('location');
  assert.equal(atServer.status, 302, 'the authorization endpoint redirects back');
  const back = await fetch(location!);
  await back.text();
  return back.status;
}

interface Setup {
  authServer: TestAuthServer;
  mcpServer: ProtectedMcpServer;
  store: CredentialStore;
  close(): Promise<void>;
}

let home: string;

before(async () => {
  home = await mkdtemp(join(tmpdir(), 'subako-oauth-'));
  // The default store and sealing key live under SUBAKO_HOME; the key is a generated 0600 key file.
  process.env.SUBAKO_HOME = home;
  delete process.env.SUBAKO_SECRET_KEY;
});

after(async () => {
  await mcp.close();
  await rm(home, { recursive: true, force: true });
});

async function setup(options: AuthServerOptions = {}, serverOptions: ProtectedMcpServerOptions = {}): Promise<Setup> {
  const authServer = await new TestAuthServer(options).start();
  const mcpServer = await startProtectedMcpServer(authServer, serverOptions);
  return {
    authServer,
    mcpServer,
    store: new CredentialStore(),
    close: async () => {
      await mcp.close();
      await mcpServer.close();
      await authServer.close();
    },
  };
}

async function loginAs(s: Setup, name: string, extra: Partial<Parameters<typeof login>[0]> = {}) {
  let browserStatus: number | undefined;
  const result = await login({
    url: s.mcpServer.url,
    name,
    store: s.store,
    timeoutMs: 10_000,
    onAuthorizationUrl: async (url) => {
      browserStatus = await followInBrowser(url);
    },
    ...extra,
  });
  return { result, browserStatus };
}

describe('login: the OAuth 2.1 flow of the MCP authorization spec', () => {
  test('discovers from the 401, registers a client, authorizes with PKCE S256, state and resource, and stores the tokens', async () => {
    const s = await setup();
    try {
      const { result, browserStatus } = await loginAs(s, 'main');
      assert.equal(browserStatus, 200, 'the loopback listener accepted the redirect');
      assert.equal(result.registeredClient, true);
      assert.equal(result.authorizationServer, s.authServer.url);
      assert.equal(result.resource, s.mcpServer.url);
      assert.equal(s.authServer.clients.size, 1, 'one dynamic client registration');

      const [authorize] = s.authServer.authorizationRequests;
      assert.equal(authorize!.get('code_challenge_method'), 'S256');
      assert.ok((authorize!.get('state') ?? '').length >= 32, 'a random state of at least 128 bits');
      assert.equal(authorize!.get('resource'), s.mcpServer.url, 'the resource parameter on the authorization request');
      assert.match(authorize!.get('redirect_uri')!, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      assert.equal(authorize!.get('scope'), 'tools:read tools:call', 'the scopes the server advertises');
      const [exchange] = s.authServer.tokenRequests;
      assert.equal(exchange!.get('grant_type'), 'authorization_code');
      assert.equal(exchange!.get('resource'), s.mcpServer.url, 'the resource parameter on the token request');
      assert.ok(exchange!.get('code_verifier'), 'the PKCE verifier');

      const stored = await s.store.get('main');
      assert.ok(stored && s.authServer.accessTokens.has(stored.tokens.accessToken));
      assert.deepEqual(await s.store.names(), ['main']);
    } finally {
      await s.close();
    }
  });

  test('the stored credential reaches the protected server through mcp.oauth(name)', async () => {
    const s = await setup();
    try {
      await loginAs(s, 'through-toolbox');
      const toolbox = await mcp.tools({ url: s.mcpServer.url, auth: mcp.oauth('through-toolbox') });
      const result = await mcp.call({ url: s.mcpServer.url, auth: mcp.oauth('through-toolbox'), tool: 'whoami', arguments: {} });
      assert.deepEqual(Object.keys(toolbox), ['whoami']);
      assert.equal(result.structuredContent?.clientId, [...s.authServer.clients.keys()][0]);
      assert.ok(s.mcpServer.authorizedRequests >= 2);
    } finally {
      await s.close();
    }
  });

  test('the credentials file holds no token, code or client id in plain text and has mode 0600', async () => {
    const s = await setup();
    try {
      await loginAs(s, 'sealed');
      await s.store.accessToken('sealed', { forceRefresh: true }); // a rotation written back too
      const text = await readFile(s.store.path, 'utf8');
      assert.ok(s.authServer.issuedSecrets.length >= 5);
      for (const secret of s.authServer.issuedSecrets) assert.ok(!text.includes(secret), 'an issued token or code is in the file');
      for (const clientId of s.authServer.clients.keys()) assert.ok(!text.includes(clientId));
      assert.ok(!text.includes('refresh'), 'not even the field names are readable');
      assert.equal((await stat(s.store.path)).mode & 0o777, 0o600);
      assert.equal((await stat(join(home, 'secret.key'))).mode & 0o777, 0o600);
    } finally {
      await s.close();
    }
  });

  test('a second login under the same name reuses the registered client instead of registering again', async () => {
    const s = await setup();
    try {
      await loginAs(s, 'again');
      const { result } = await loginAs(s, 'again');
      assert.equal(result.registeredClient, false);
      assert.equal(s.authServer.clients.size, 1);
    } finally {
      await s.close();
    }
  });

  test('the resource metadata named by the 401 challenge is used when the well-known location has none', async () => {
    const s = await setup({}, { metadata: 'challenge-only' });
    try {
      const wellKnown = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', s.mcpServer.url));
      await wellKnown.body?.cancel();
      assert.equal(wellKnown.status, 401, 'nothing at the well-known location');
      const { result } = await loginAs(s, 'challenged');
      assert.equal(result.resource, s.mcpServer.url);
      assert.equal(s.authServer.authorizationRequests[0]!.get('scope'), 'tools:read tools:call');
    } finally {
      await s.close();
    }
  });

  test('an authorization server with only OpenID Connect discovery works too', async () => {
    const s = await setup({ discovery: 'oidc' });
    try {
      const { result } = await loginAs(s, 'oidc');
      assert.equal(result.authorizationServer, s.authServer.url);
      assert.ok(await s.store.get('oidc'));
    } finally {
      await s.close();
    }
  });

  test('a refused authorization is a LoginError and stores nothing', async () => {
    const s = await setup();
    s.authServer.denyAuthorization = true;
    try {
      await assert.rejects(loginAs(s, 'denied'), (err: unknown) => {
        assert.ok(err instanceof LoginError);
        assert.equal(err.reason, 'authorization');
        assert.match(err.message, /access_denied/);
        return true;
      });
      assert.equal(await s.store.get('denied'), undefined);
    } finally {
      await s.close();
    }
  });

  test('an authorization server without dynamic client registration is a LoginError naming it', async () => {
    const s = await setup({ registration: false });
    try {
      await assert.rejects(loginAs(s, 'no-dcr'), (err: unknown) => err instanceof LoginError && err.reason === 'registration');
    } finally {
      await s.close();
    }
  });

  test('a redirect that never comes times out as a LoginError', async () => {
    const s = await setup();
    try {
      await assert.rejects(
        login({ url: s.mcpServer.url, name: 'late', store: s.store, timeoutMs: 200, onAuthorizationUrl: () => undefined }),
        (err: unknown) => err instanceof LoginError && err.reason === 'authorization',
      );
    } finally {
      await s.close();
    }
  });
});

describe('refresh: accessTokenFor keeps tokens fresh', () => {
  test('a token still valid beyond a minute is used as is', async () => {
    const s = await setup();
    try {
      await loginAs(s, 'fresh');
      const stored = await s.store.get('fresh');
      const token = await s.store.accessToken('fresh');
      assert.equal(token.reveal(), stored!.tokens.accessToken);
      assert.equal(String(token), REDACTED);
      assert.equal(s.authServer.tokenRequests.length, 1, 'no refresh request');
    } finally {
      await s.close();
    }
  });

  test('a token within a minute of expiry is refreshed and the rotated refresh token is written back', async () => {
    const s = await setup();
    try {
      await loginAs(s, 'rotating');
      const before = (await s.store.get('rotating'))!;
      const later = new CredentialStore({ now: () => before.tokens.expiresAt! - 30_000 });
      const token = await later.accessToken('rotating');
      const afterRefresh = (await s.store.get('rotating'))!;

      assert.notEqual(token.reveal(), before.tokens.accessToken);
      assert.equal(afterRefresh.tokens.accessToken, token.reveal());
      assert.notEqual(afterRefresh.tokens.refreshToken, before.tokens.refreshToken, 'the rotated refresh token is stored');
      assert.ok(s.authServer.spentRefreshTokens.has(before.tokens.refreshToken!));
      assert.ok(s.authServer.refreshTokens.has(afterRefresh.tokens.refreshToken!));
      const refresh = s.authServer.tokenRequests.at(-1)!;
      assert.equal(refresh.get('grant_type'), 'refresh_token');
      assert.equal(refresh.get('resource'), s.mcpServer.url, 'the resource parameter on the refresh');

      // The new refresh token works for the next refresh: the write-back was the right one.
      const evenLater = new CredentialStore({ now: () => afterRefresh.tokens.expiresAt! });
      assert.ok(s.authServer.introspect((await evenLater.accessToken('rotating')).reveal()));
    } finally {
      await s.close();
    }
  });

  test('concurrent callers share one refresh (a rotated refresh token is never spent twice)', async () => {
    const s = await setup();
    try {
      await loginAs(s, 'shared');
      const expiresAt = (await s.store.get('shared'))!.tokens.expiresAt!;
      const later = new CredentialStore({ now: () => expiresAt });
      const tokens = await Promise.all([later.accessToken('shared'), later.accessToken('shared'), later.accessToken('shared')]);
      assert.equal(new Set(tokens.map((t) => t.reveal())).size, 1);
      assert.equal(s.authServer.tokenRequests.filter((r) => r.get('grant_type') === 'refresh_token').length, 1);
    } finally {
      await s.close();
    }
  });

  test('a refused refresh of an expired token is McpAuthError, also through mcp.oauth(name)', async () => {
    // Access tokens that expire as they are issued: every use needs a refresh, and none is still valid.
    const s = await setup({ accessTokenTtlSeconds: 0 });
    try {
      await loginAs(s, 'doomed');
      s.authServer.failRefresh = true;
      await assert.rejects(accessTokenFor('doomed'), (err: unknown) => {
        assert.ok(err instanceof McpAuthError);
        assert.equal(err.reason, 'expired');
        assert.equal(err.credential, 'doomed');
        assert.match(err.message, /invalid_grant/);
        assert.match(err.message, /subako mcp login/);
        return true;
      });
      await assert.rejects(mcp.call({ url: s.mcpServer.url, auth: mcp.oauth('doomed'), tool: 'whoami' }), McpAuthError);
    } finally {
      await s.close();
    }
  });

  test('an unreachable authorization server during a refresh is a retryable McpServerError', async () => {
    // Expired as issued: without a token still valid to fall back on, the unreachable server is the answer.
    const s = await setup({ accessTokenTtlSeconds: 0 });
    await loginAs(s, 'unreachable');
    await s.close();
    await assert.rejects(accessTokenFor('unreachable'), (err: unknown) => err instanceof McpServerError && err.reason === 'transport');
  });

  test('a credential that was never stored is McpAuthError (missing)', async () => {
    await assert.rejects(accessTokenFor('never-made'), (err: unknown) => err instanceof McpAuthError && err.reason === 'missing');
    await assert.rejects(mcp.tools({ url: 'http://127.0.0.1:9/mcp', auth: mcp.oauth('never-made') }), McpAuthError);
  });
});
