/**
 * Which client a login runs as, against the loopback authorization server: a dynamic registration says
 * it is a native application (SEP-837); a pre-registered client (with or without a secret) logs in where
 * dynamic registration is off, and its secret is stored sealed; a Client ID Metadata Document URL is the
 * client_id where the server advertises support.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { Secret } from '../../../src/common/index.js';
import { mcp } from '../../../src/mcp/index.js';
import { CredentialStore, LoginError, login, type LoginOptions } from '../../../src/mcp/oauth/index.js';
import { TestAuthServer, type AuthServerOptions } from './auth-server.js';
import { withProtectedServers, type ProtectedMcpServer } from './protected-mcp-server.js';
import { followInBrowser, scratchHome } from './scratch-home.js';

const CLIENT_ID = 'subako-pre-registered-3c9e';
const CLIENT_SECRET = 'pre-registered-secret-b81f6a2d0c47';
const METADATA_URL = 'https://subako.example/oauth/client-metadata.json';

const home = scratchHome('oauth-client');

function withServers(options: AuthServerOptions, body: (as: TestAuthServer, server: ProtectedMcpServer, store: CredentialStore) => Promise<void>): Promise<void> {
  return withProtectedServers(options, (as, server) => body(as, server, new CredentialStore()));
}

function loginTo(server: ProtectedMcpServer, store: CredentialStore, name: string, extra: Partial<LoginOptions> = {}) {
  return login({ url: server.url, name, store, timeoutMs: 10_000, onAuthorizationUrl: followInBrowser, ...extra });
}

describe('login: the client it runs as', () => {
  test('dynamic registration sends application_type "native" with the loopback redirect', async () => {
    await withServers({}, async (as, server, store) => {
      const result = await loginTo(server, store, 'dcr');
      assert.equal(result.client, 'registered');
      assert.equal(as.registrationRequests.length, 1);
      const body = as.registrationRequests[0]!;
      assert.equal(body.application_type, 'native');
      assert.match(String((body.redirect_uris as string[])[0]), /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      assert.equal(body.token_endpoint_auth_method, 'none');
    });
  });

  test('a pre-registered confidential client logs in where registration is off; its secret is sent to the token endpoint and stored sealed', async () => {
    await withServers({ registration: false }, async (as, server, store) => {
      as.preRegister(CLIENT_ID, CLIENT_SECRET);
      const result = await loginTo(server, store, 'pre', { client: { clientId: CLIENT_ID, clientSecret: Secret.from(CLIENT_SECRET) } });
      assert.equal(result.client, 'pre-registered');
      assert.equal(result.registeredClient, false);
      assert.equal(as.registrationRequests.length, 0, 'no registration attempted');
      assert.equal(as.authorizationRequests[0]!.get('client_id'), CLIENT_ID);
      assert.deepEqual(as.clientAuthentications, ['basic'], 'the secret went by HTTP Basic');
      assert.ok(!as.authorizationRequests[0]!.toString().includes(CLIENT_SECRET), 'never on the authorization URL');

      // The credential works, and a refresh authenticates with the stored secret.
      const called = await mcp.call({ url: server.url, auth: mcp.oauth('pre'), tool: 'whoami', arguments: {} });
      assert.equal(called.structuredContent?.clientId, CLIENT_ID);
      await store.accessToken('pre', { forceRefresh: true });
      assert.deepEqual(as.clientAuthentications, ['basic', 'basic']);

      const file = await readFile(store.path, 'utf8');
      assert.ok(!file.includes(CLIENT_SECRET), 'the client secret is not in the file in plain text');
      assert.ok(!file.includes(CLIENT_ID), 'nor the client id');
      for (const issued of as.issuedSecrets) assert.ok(!file.includes(issued));
      assert.equal((await store.get('pre'))!.client.client_secret, CLIENT_SECRET, 'it is in the sealed entry');
    });
  });

  test('a pre-registered public client (no secret) logs in with PKCE alone', async () => {
    await withServers({ registration: false }, async (as, server, store) => {
      as.preRegister('public-client');
      const result = await loginTo(server, store, 'public', { client: { clientId: 'public-client' } });
      assert.equal(result.client, 'pre-registered');
      assert.deepEqual(as.clientAuthentications, ['none']);
    });
  });

  test('a wrong client secret fails the token exchange and stores nothing', async () => {
    await withServers({ registration: false }, async (as, server, store) => {
      as.preRegister(CLIENT_ID, CLIENT_SECRET);
      await assert.rejects(
        loginTo(server, store, 'wrong', { client: { clientId: CLIENT_ID, clientSecret: 'not-the-secret' } }),
        (err: unknown) => err instanceof LoginError && err.reason === 'token' && !err.message.includes('not-the-secret'),
      );
      assert.equal(await store.get('wrong'), undefined);
    });
  });

  test('an empty client id is refused before anything is sent', async () => {
    await withServers({ registration: false }, async (as, server, store) => {
      await assert.rejects(loginTo(server, store, 'empty', { client: { clientId: ' ' } }), (err: unknown) => err instanceof LoginError && /client id/.test(err.message));
      assert.equal(as.authorizationRequests.length, 0);
    });
  });

  test('without registration and without --client-id the error says how to pre-register', async () => {
    await withServers({ registration: false }, async (_as, server, store) => {
      await assert.rejects(loginTo(server, store, 'none'), (err: unknown) => err instanceof LoginError && /--client-id/.test(err.message));
    });
  });

  test('a Client ID Metadata Document URL is the client_id where the server advertises support, with no registration', async () => {
    await withServers({ clientIdMetadataDocuments: true }, async (as, server, store) => {
      const result = await loginTo(server, store, 'cimd', { clientMetadataUrl: METADATA_URL });
      assert.equal(result.client, 'metadata-document');
      assert.equal(as.registrationRequests.length, 0);
      assert.equal(as.authorizationRequests[0]!.get('client_id'), METADATA_URL);
      assert.equal(as.tokenRequests[0]!.get('client_id'), METADATA_URL);
    });
  });

  test('where the server does not advertise metadata documents, the URL is not used: dynamic registration is', async () => {
    await withServers({}, async (as, server, store) => {
      const result = await loginTo(server, store, 'no-cimd', { clientMetadataUrl: METADATA_URL });
      assert.equal(result.client, 'registered');
      assert.equal(as.registrationRequests.length, 1);
    });
  });

  test('a metadata document URL that is not https with a path is refused', async () => {
    await withServers({ clientIdMetadataDocuments: true }, async (as, server, store) => {
      for (const bad of ['http://subako.example/doc.json', 'https://subako.example/', 'not a url']) {
        await assert.rejects(loginTo(server, store, 'bad-cimd', { clientMetadataUrl: bad }), (err: unknown) => err instanceof LoginError && /https with a path/.test(err.message));
      }
      assert.equal(as.authorizationRequests.length, 0);
    });
  });
});
