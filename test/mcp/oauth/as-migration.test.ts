/**
 * Authorization-server migration (SEP-2352): when the server's resource metadata names another authorization
 * server than the one a stored credential came from, a login under the same name runs against the new one with a
 * client of its own — registered there, never the old server's client id — and says where it moved from. A machine's
 * credential moves the same way with the client the new server gave it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mcp } from '../../../src/mcp/index.js';
import { CredentialStore, login } from '../../../src/mcp/oauth/index.js';
import { TestAuthServer } from './auth-server.js';
import { startProtectedMcpServer, type AuthorizationServerView } from './protected-mcp-server.js';
import { followInBrowser, scratchHome } from './scratch-home.js';

const home = scratchHome('oauth-moved');

/** The MCP server asks `current` for its metadata and tokens: moving it is what the server's operator did. */
function movable(first: TestAuthServer): AuthorizationServerView & { current: TestAuthServer } {
  const view = {
    current: first,
    metadata: () => view.current.metadata(),
    introspect: (token: string) => view.current.introspect(token),
    serve: (...args: Parameters<TestAuthServer['serve']>) => view.current.serve(...args),
    adoptOrigin: (origin: string) => view.current.adoptOrigin(origin),
  };
  return view;
}

describe('authorization-server migration', () => {
  test('a login after the server moved registers at the new authorization server, never presents the old client, and says movedFrom', async () => {
    const as1 = await new TestAuthServer().start();
    const as2 = await new TestAuthServer().start();
    const view = movable(as1);
    const server = await startProtectedMcpServer(view);
    const store = new CredentialStore();
    const signIn = () => login({ url: server.url, name: 'moving', store, timeoutMs: 10_000, onAuthorizationUrl: followInBrowser });
    try {
      const before = await signIn();
      assert.equal(before.authorizationServer, as1.url);
      assert.equal(before.movedFrom, undefined);
      const oldClient = [...as1.clients.keys()][0]!;

      view.current = as2;
      await assert.rejects(
        mcp.call({ url: server.url, auth: mcp.oauth('moving'), tool: 'whoami', arguments: {} }),
        'the old server\'s token is no good at the new one',
      );
      await mcp.close();

      const after = await signIn();
      assert.equal(after.movedFrom, as1.url);
      assert.equal(after.authorizationServer, as2.url);
      assert.equal(after.client, 'registered');
      assert.equal(as2.registrationRequests.length, 1, 'registered at the new server');
      assert.ok(as2.authorizationRequests.every((q) => q.get('client_id') !== oldClient), 'the old client id never reached the new server');
      assert.ok(as2.tokenRequests.every((form) => form.get('client_id') !== oldClient));

      const called = await mcp.call({ url: server.url, auth: mcp.oauth('moving'), tool: 'whoami', arguments: {} });
      assert.equal(called.structuredContent?.clientId, [...as2.clients.keys()][0]);
      assert.equal((await store.get('moving'))!.authorizationServer.url, as2.url);

      const again = await signIn();
      assert.equal(again.movedFrom, undefined, 'a login at the same server again is no move');
      assert.equal(again.client, 'reused');
    } finally {
      await mcp.close();
      await server.close();
      await as1.close();
      await as2.close();
    }
  });

  test('a machine credential moves with the client the new server issued it', async () => {
    const as1 = await new TestAuthServer({ clientCredentials: true }).start();
    const as2 = await new TestAuthServer({ clientCredentials: true }).start();
    as1.preRegister('machine-at-as1', 'secret-at-as1-7c2e', []);
    as2.preRegister('machine-at-as2', 'secret-at-as2-91fd', []);
    const view = movable(as1);
    const server = await startProtectedMcpServer(view);
    const store = new CredentialStore();
    try {
      await login({ url: server.url, name: 'machine-moving', store, clientCredentials: { clientId: 'machine-at-as1', clientSecret: 'secret-at-as1-7c2e' } });
      view.current = as2;
      const moved = await login({
        url: server.url,
        name: 'machine-moving',
        store,
        clientCredentials: { clientId: 'machine-at-as2', clientSecret: 'secret-at-as2-91fd' },
      });
      assert.equal(moved.movedFrom, as1.url);
      assert.equal(moved.client, 'client-credentials');
      const called = await mcp.call({ url: server.url, auth: mcp.oauth('machine-moving'), tool: 'whoami', arguments: {} });
      assert.equal(called.structuredContent?.clientId, 'machine-at-as2');
    } finally {
      await mcp.close();
      await server.close();
      await as1.close();
      await as2.close();
    }
  });
});
