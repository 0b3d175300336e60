/**
 * Logging in as a machine: the client-credentials grant (extension io.modelcontextprotocol/oauth-client-credentials)
 * against the loopback authorization server, with a client secret (sent as the server advertises: HTTP Basic, or in
 * the form) or a private key signing `private_key_jwt` assertions (verified there with jose). No person, no browser;
 * the credential reaches the protected MCP server like any other, and with no refresh token the grant runs again
 * when the token expires. A wrong secret is a clear error that never repeats it.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { mcp } from '../../../src/mcp/index.js';
import { CredentialStore, LoginError, login, type LoginOptions } from '../../../src/mcp/oauth/index.js';
import { TestAuthServer, type AuthServerOptions } from './auth-server.js';
import { withProtectedServers, type ProtectedMcpServer } from './protected-mcp-server.js';
import { scratchHome } from './scratch-home.js';

const SECRET_CLIENT = 'machine-with-secret-5a1c';
const SECRET = 'machine-secret-9f83c2e1d7b4a6';
const KEY_CLIENT = 'machine-with-key-e27d';
const RSA_CLIENT = 'machine-with-rsa-key-40b9';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = (key: KeyObject): string => key.export({ type: 'pkcs8', format: 'pem' }).toString();

const home = scratchHome('oauth-machine');

function withServers(
  options: AuthServerOptions,
  body: (as: TestAuthServer, server: ProtectedMcpServer, store: CredentialStore) => Promise<void>,
): Promise<void> {
  return withProtectedServers({ clientCredentials: true, ...options }, (authServer, server) => {
    authServer.preRegister(SECRET_CLIENT, SECRET, []);
    authServer.preRegisterKey(KEY_CLIENT, ec.publicKey);
    authServer.preRegisterKey(RSA_CLIENT, rsa.publicKey);
    return body(authServer, server, new CredentialStore());
  });
}

function machineLogin(server: ProtectedMcpServer, store: CredentialStore, name: string, clientCredentials: LoginOptions['clientCredentials']) {
  return login({ url: server.url, name, store, clientCredentials });
}

const grantsOf = (as: TestAuthServer): string[] => as.tokenRequests.map((form) => form.get('grant_type') ?? '');

describe('login with the client-credentials grant', () => {
  test('a client secret gets a token with no browser, sent as client_secret_basic; the credential reaches the server', async () => {
    await withServers({}, async (as, server, store) => {
      const result = await machineLogin(server, store, 'machine', { clientId: SECRET_CLIENT, clientSecret: SECRET });
      assert.equal(result.client, 'client-credentials');
      assert.equal(result.authorizationServer, as.url);
      assert.deepEqual(grantsOf(as), ['client_credentials']);
      assert.deepEqual(as.clientAuthentications, ['basic']);
      assert.equal(as.tokenRequests[0]!.get('resource'), server.url, 'the RFC 8707 resource is sent');
      assert.equal(as.authorizationRequests.length, 0, 'no person was asked');
      assert.equal(as.registrationRequests.length, 0);

      const called = await mcp.call({ url: server.url, auth: mcp.oauth('machine'), tool: 'whoami', arguments: {} });
      assert.equal(called.structuredContent?.clientId, SECRET_CLIENT);
      const file = await readFile(join(home.path, 'credentials.json'), 'utf8');
      assert.ok(!file.includes(SECRET) && !file.includes(SECRET_CLIENT), 'the secret and client id are sealed');
    });
  });

  test('where the server takes only client_secret_post, the secret goes in the form', async () => {
    await withServers({ tokenEndpointAuthMethods: ['client_secret_post'] }, async (as, server, store) => {
      await machineLogin(server, store, 'machine-post', { clientId: SECRET_CLIENT, clientSecret: SECRET });
      assert.deepEqual(as.clientAuthentications, ['post']);
      assert.equal(as.tokenRequests[0]!.get('client_secret'), SECRET);
    });
  });

  test('a private key signs a private_key_jwt assertion (ES256, and RS256) the server verifies; no secret is sent', async () => {
    await withServers({ tokenEndpointAuthMethods: ['private_key_jwt'] }, async (as, server, store) => {
      await machineLogin(server, store, 'machine-ec', { clientId: KEY_CLIENT, privateKey: { pem: pem(ec.privateKey), algorithm: 'ES256' } });
      await machineLogin(server, store, 'machine-rsa', { clientId: RSA_CLIENT, privateKey: { pem: pem(rsa.privateKey), algorithm: 'RS256' } });
      assert.deepEqual(as.clientAuthentications, ['private_key_jwt', 'private_key_jwt']);
      assert.equal(as.tokenRequests[0]!.get('client_assertion_type'), 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      assert.equal(as.tokenRequests[0]!.get('client_secret'), null);
      const called = await mcp.call({ url: server.url, auth: mcp.oauth('machine-rsa'), tool: 'whoami', arguments: {} });
      assert.equal(called.structuredContent?.clientId, RSA_CLIENT);
      const file = await readFile(join(home.path, 'credentials.json'), 'utf8');
      assert.ok(!file.includes('PRIVATE KEY'), 'the private key is sealed');
    });
  });

  test('with no refresh token, an expiring token is replaced by running the grant again (the key signs anew)', async () => {
    await withServers({ tokenEndpointAuthMethods: ['private_key_jwt'] }, async (as, server, store) => {
      await machineLogin(server, store, 'machine-renew', { clientId: KEY_CLIENT, privateKey: { pem: pem(ec.privateKey) } });
      const first = (await store.get('machine-renew'))!.tokens.accessToken;
      assert.equal((await store.get('machine-renew'))!.tokens.refreshToken, undefined);
      const later = new CredentialStore({ now: () => Date.now() + 2 * 3600_000 });
      const renewed = await later.accessToken('machine-renew');
      assert.notEqual(renewed.reveal(), first);
      assert.deepEqual(grantsOf(as), ['client_credentials', 'client_credentials']);
      assert.equal((await store.get('machine-renew'))!.tokens.accessToken, renewed.reveal(), 'the new token is stored');
      // A server that refused the token: a forced renewal runs the grant once more.
      await later.accessToken('machine-renew', { forceRefresh: true });
      assert.equal(grantsOf(as).length, 3);
      const called = await mcp.call({ url: server.url, auth: mcp.oauth('machine-renew'), tool: 'whoami', arguments: {} });
      assert.equal(called.structuredContent?.clientId, KEY_CLIENT);
    });
  });

  test('a wrong secret is a LoginError naming invalid_client; nothing is stored and the secret is never repeated', async () => {
    await withServers({}, async (_as, server, store) => {
      const wrong = 'not-the-secret-61c0aa';
      await assert.rejects(machineLogin(server, store, 'machine-wrong', { clientId: SECRET_CLIENT, clientSecret: wrong }), (err: unknown) => {
        assert.ok(err instanceof LoginError && err.reason === 'token', String(err));
        assert.match(err.message, /refused the client credentials \(invalid_client\)/);
        assert.ok(!err.message.includes(wrong) && !JSON.stringify(err).includes(wrong));
        return true;
      });
      assert.equal(await store.get('machine-wrong'), undefined);
    });
  });

  test('refused before anything is sent: a key that does not fit its algorithm, a non-key, both a secret and a key', async () => {
    await withServers({}, async (as, server, store) => {
      const cases: Array<[LoginOptions['clientCredentials'], RegExp]> = [
        [{ clientId: KEY_CLIENT, privateKey: { pem: pem(rsa.privateKey), algorithm: 'ES256' } }, /ES256 signs with an EC P-256 key.*rsa/],
        [{ clientId: KEY_CLIENT, privateKey: { pem: 'not a key' } }, /not a PEM private key/],
        [{ clientId: KEY_CLIENT, clientSecret: SECRET, privateKey: { pem: pem(ec.privateKey) } }, /exactly one of/],
        [{ clientId: '', clientSecret: SECRET }, /needs a client id/],
      ];
      for (const [options, message] of cases) {
        await assert.rejects(machineLogin(server, store, 'machine-bad', options), (err: unknown) => err instanceof LoginError && message.test(err.message));
      }
      assert.equal(as.tokenRequests.length, 0);
    });
  });

  test('an authorization server that does not offer the grant is refused, naming what it offers', async () => {
    await withServers({ clientCredentials: false }, async (as, server, store) => {
      await assert.rejects(
        machineLogin(server, store, 'machine-no-grant', { clientId: SECRET_CLIENT, clientSecret: SECRET }),
        (err: unknown) => err instanceof LoginError && /does not offer the client-credentials grant \(it offers authorization_code, refresh_token\)/.test(err.message),
      );
      assert.equal(as.tokenRequests.length, 0);
    });
  });
});
