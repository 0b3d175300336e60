/**
 * A vault's OAuth credential is refreshed by the one refresh-token grant subako has (mcp/oauth's
 * `refreshTokens`, on the SDK's `refreshAuthorization`), against real token endpoints on loopback: the shared
 * OAuth test server (client authentication, rotation) and small endpoints that answer one way each. What the
 * hand-written grant did not do shows here: a token answer is read as RFC 6749 §5.1 has it (an `expires_in`
 * sent as a string still sets the expiry; no `token_type`, no token), an RFC 6749 §5.2 error is told apart from
 * a server that failed, and an answer that is too large or a token that cannot go into a header is refused.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/common/index.js';
import { ValidationError } from '../../src/errors.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import { VaultService, type CredentialPayload } from '../../src/platform/vaults.js';
import { SteppedClock } from '../helpers/clock.js';
import { TestAuthServer } from '../mcp/oauth/auth-server.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A vault service on a fresh SQLite store, whose warnings are kept as the JSON lines pino writes. */
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'subako-vault-refresh-'));
  dirs.push(dir);
  const store = new SqliteStore(join(dir, 'subako.db'));
  const lines: string[] = [];
  const log = createLogger({ level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
  const clock = new SteppedClock();
  return { store, clock, lines, vaults: new VaultService(store, randomBytes(32), clock, log) };
}

/** An OAuth credential whose access token expires in ten seconds: due for a refresh at once. */
function dueSoon(refresh: NonNullable<Extract<CredentialPayload, { auth_scheme: 'oauth' }>['refresh']>): CredentialPayload {
  return { auth_scheme: 'oauth', access_token: 'at-initial', expires_at: new Date(Date.now() + 10_000).toISOString(), refresh };
}

/** A token endpoint on loopback that answers every request with `answer`, and counts them. */
async function endpoint(answer: (res: ServerResponse) => void) {
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

describe('a vault credential refreshed at a real authorization server', () => {
  it('authenticates a confidential client (HTTP Basic, then in the form), and presents the rotated refresh token next time', async () => {
    const auth = await new TestAuthServer({ accessTokenTtlSeconds: 3600 }).start();
    const { store, clock, vaults } = setup();
    try {
      auth.preRegister('vault-basic', 'secret-basic-1');
      auth.preRegister('vault-post', 'secret-post-1');
      auth.refreshTokens.set('rt-basic-seed', { clientId: 'vault-basic', resource: 'https://api.example.com' });
      auth.refreshTokens.set('rt-post-seed', { clientId: 'vault-post', resource: 'https://api.example.com' });
      const vault = await vaults.createVault('v');
      const basic = await vaults.addCredential(vault.id, {
        target: 'https://api.example.com',
        payload: dueSoon({ token_endpoint: `${auth.url}/token`, client_id: 'vault-basic', client_secret: 'secret-basic-1', refresh_token: 'rt-basic-seed', token_endpoint_auth: 'client_secret_basic' }),
      });
      const opened = await vaults.credentialFor(vault.id, basic.id, 'https://api.example.com/');
      const first = opened!.headers.authorization.replace(/^Bearer /, '');
      assert.ok(auth.introspect(first), 'the access token the server issued');
      assert.deepEqual(auth.clientAuthentications, ['basic']);
      assert.ok(auth.spentRefreshTokens.has('rt-basic-seed'));

      // An hour later the token is due again: the rotated refresh token is the one presented (the seed is spent).
      clock.advance(3600_000);
      const again = await vaults.credentialFor(vault.id, basic.id, 'https://api.example.com/');
      assert.notEqual(again!.headers.authorization, opened!.headers.authorization);
      assert.equal(auth.tokenRequests.length, 2);
      assert.notEqual(auth.tokenRequests[1].get('refresh_token'), 'rt-basic-seed');
      assert.ok(auth.issuedSecrets.includes(auth.tokenRequests[1].get('refresh_token')!), 'the rotated refresh token the server issued');

      const post = await vaults.addCredential(vault.id, {
        target: 'https://api.example.com/mcp',
        payload: dueSoon({ token_endpoint: `${auth.url}/token`, client_id: 'vault-post', client_secret: 'secret-post-1', refresh_token: 'rt-post-seed', token_endpoint_auth: 'client_secret_post' }),
      });
      await vaults.credentialFor(vault.id, post.id, 'https://api.example.com/mcp');
      assert.equal(auth.clientAuthentications.at(-1), 'post');
      assert.equal(auth.tokenRequests.at(-1)!.get('client_secret'), 'secret-post-1');
    } finally {
      await auth.close();
      await store.close();
    }
  });

  it('reads the token answer as RFC 6749 §5.1 has it: an expires_in sent as a string still sets the expiry', async () => {
    const server = await endpoint((res) => json(res, 200, { access_token: 'at-stringy', token_type: 'Bearer', expires_in: '3600', refresh_token: 'rt-next' }));
    const { store, vaults } = setup();
    try {
      const vault = await vaults.createVault('v');
      await vaults.addCredential(vault.id, { target: 'https://api.example.com', payload: dueSoon({ token_endpoint: server.url, client_id: 'c', refresh_token: 'rt-1' }) });
      const [opened] = await vaults.openAll([vault.id]);
      assert.equal(opened.headers.authorization, 'Bearer at-stringy');
      const [view] = (await vaults.listCredentials(vault.id, { limit: 1 })).items;
      assert.ok(view.expires_at !== null, 'the expiry was kept, so the token is refreshed again before it dies');
      assert.ok(Math.abs(Date.parse(view.expires_at) - (Date.now() + 3600_000)) < 600_000, view.expires_at);
      await vaults.openAll([vault.id]);
      assert.equal(server.requests(), 1, 'fresh for an hour: not refreshed again');
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('a token answer without token_type (RFC 6749 §5.1 requires it) is no usable answer: the credential is left out', async () => {
    const server = await endpoint((res) => json(res, 200, { access_token: 'at-typeless', expires_in: 3600 }));
    const { store, vaults, lines } = setup();
    try {
      const vault = await vaults.createVault('v');
      await vaults.addCredential(vault.id, { target: 'https://api.example.com', payload: dueSoon({ token_endpoint: server.url, client_id: 'c', refresh_token: 'rt-1' }) });
      assert.deepEqual(await vaults.openAll([vault.id]), []);
      assert.match(lines.join(''), /oauth_refresh_failed/);
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('tells a refusal (invalid_grant) from a server that failed (temporarily_unavailable), repeating neither secrets nor what the server wrote', async () => {
    const refreshToken = `rt-${randomBytes(12).toString('hex')}`;
    const clientSecret = `cs-${randomBytes(12).toString('hex')}`;
    let answer = { status: 503, error: 'temporarily_unavailable' };
    // The server's description echoes what it was sent: none of it may reach a log line.
    const server = await endpoint((res) => json(res, answer.status, { error: answer.error, error_description: `echo ${refreshToken} ${clientSecret} said-by-server` }));
    const { store, vaults, lines } = setup();
    try {
      const vault = await vaults.createVault('v');
      await vaults.addCredential(vault.id, {
        target: 'https://api.example.com',
        payload: dueSoon({ token_endpoint: server.url, client_id: 'c', client_secret: clientSecret, refresh_token: refreshToken, token_endpoint_auth: 'client_secret_post' }),
      });
      assert.deepEqual(await vaults.openAll([vault.id]), []);
      const failed = lines.join('');
      assert.doesNotMatch(failed, /refused/, 'a server that failed did not refuse the refresh token');
      assert.match(failed, /\(temporarily_unavailable\); the next use tries again/);

      answer = { status: 400, error: 'invalid_grant' };
      lines.length = 0;
      assert.deepEqual(await vaults.openAll([vault.id]), []);
      const refused = lines.join('');
      assert.match(refused, /refused to refresh the access token \(invalid_grant\): store the credential again/);

      for (const text of [refused, failed]) {
        for (const secret of [refreshToken, clientSecret, 'said-by-server', 'at-initial']) assert.ok(!text.includes(secret), `${secret} in ${text}`);
      }
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('an answer larger than any token answer is refused, not read into memory', async () => {
    const server = await endpoint((res) => json(res, 200, { access_token: 'at-huge', token_type: 'Bearer', padding: 'x'.repeat(2 * 1024 * 1024) }));
    const { store, vaults, lines } = setup();
    try {
      const vault = await vaults.createVault('v');
      await vaults.addCredential(vault.id, { target: 'https://api.example.com', payload: dueSoon({ token_endpoint: server.url, client_id: 'c', refresh_token: 'rt-1' }) });
      assert.deepEqual(await vaults.openAll([vault.id]), []);
      assert.match(lines.join(''), /sent no usable answer/);
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('an access token that cannot go into a header as it is (a line break in it) is refused, never handed to a call', async () => {
    const server = await endpoint((res) => json(res, 200, { access_token: 'at-good\r\nx-injected: yes', token_type: 'Bearer', expires_in: 3600 }));
    const { store, vaults } = setup();
    try {
      const vault = await vaults.createVault('v');
      await vaults.addCredential(vault.id, { target: 'https://api.example.com', payload: dueSoon({ token_endpoint: server.url, client_id: 'c', refresh_token: 'rt-1' }) });
      assert.deepEqual(await vaults.openAll([vault.id]), []);
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('client_secret_basic without a client secret is refused when the credential is added', async () => {
    const { store, vaults } = setup();
    try {
      const vault = await vaults.createVault('v');
      await assert.rejects(
        vaults.addCredential(vault.id, {
          target: 'https://api.example.com',
          payload: dueSoon({ token_endpoint: 'https://auth.example.com/token', client_id: 'c', refresh_token: 'rt-1', token_endpoint_auth: 'client_secret_basic' }),
        }),
        (err: unknown) => err instanceof ValidationError && /client_secret is needed/.test(err.message),
      );
    } finally {
      await store.close();
    }
  });
});
