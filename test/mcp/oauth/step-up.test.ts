/**
 * Errors that keep their meaning, against the loopback OAuth server and a v2 McpServer: a 403
 * insufficient_scope is McpAuthError naming the scope, `login --scope` steps up (and keeps the scopes the
 * credential had), an input request subako cannot fulfil is McpServerError('rejected'); neither drops the
 * pooled connection.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { McpAuthError, McpServerError } from '../../../src/mcp/errors.js';
import { mcp, McpClientPool } from '../../../src/mcp/index.js';
import { CredentialStore, login } from '../../../src/mcp/oauth/index.js';
import { TestAuthServer } from './auth-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from './protected-mcp-server.js';

async function followInBrowser(authorizationUrl: string): Promise<void> {
  const atServer = await fetch(authorizationUrl, { redirect: 'manual' });
  await atServer.body?.cancel();
  const back = await fetch(atServer.headers.get('location')!);
  await back.text();
}

let home: string;
let authServer: TestAuthServer;
let mcpServer: ProtectedMcpServer;

before(async () => {
  home = await mkdtemp(join(tmpdir(), 'subako-step-up-'));
  process.env.SUBAKO_HOME = home;
  delete process.env.SUBAKO_SECRET_KEY;
  authServer = await new TestAuthServer().start();
  mcpServer = await startProtectedMcpServer(authServer, { reportScope: 'reports:read', confirmTool: true });
});

after(async () => {
  await mcp.close();
  await mcpServer.close();
  await authServer.close();
  await rm(home, { recursive: true, force: true });
});

function loginAs(name: string, scope?: string) {
  return login({
    url: mcpServer.url,
    name,
    store: new CredentialStore(),
    timeoutMs: 10_000,
    ...(scope !== undefined ? { scope } : {}),
    onAuthorizationUrl: followInBrowser,
  });
}

describe('errors that keep their meaning', () => {
  test('403 insufficient_scope is McpAuthError naming the scope; login --scope steps up; the connection stays', async () => {
    const first = await loginAs('stepper');
    assert.equal(first.scope, 'tools:read tools:call');
    const pool = new McpClientPool();
    const auth = mcp.oauth('stepper');
    try {
      const who = await mcp.call({ url: mcpServer.url, auth, pool, tool: 'whoami', arguments: {} });
      assert.equal(who.isError ?? false, false);

      let refused: McpAuthError | undefined;
      await assert.rejects(mcp.call({ url: mcpServer.url, auth, pool, tool: 'report', arguments: {} }), (err: unknown) => {
        assert.ok(err instanceof McpAuthError, String(err));
        refused = err;
        return true;
      });
      assert.equal(refused!.reason, 'insufficient_scope');
      assert.equal(refused!.credential, 'stepper');
      assert.match(refused!.scope ?? '', /\breports:read\b/);
      assert.match(refused!.message, /reports:read/);
      assert.match(refused!.message, /subako mcp login --url \S+ --name stepper --scope/);
      assert.equal(refused!.toJSON().scope, refused!.scope);

      // Not a transport failure: the same connection serves the next call.
      await mcp.call({ url: mcpServer.url, auth, pool, tool: 'whoami', arguments: {} });
      assert.equal(pool.connectsMade, 1);

      // Step up with only the missing scope: the new token keeps what the old one had.
      const stepped = await loginAs('stepper', 'reports:read');
      assert.deepEqual(stepped.scope?.split(' ').sort(), ['reports:read', 'tools:call', 'tools:read']);
      const report = await mcp.call({ url: mcpServer.url, auth, pool, tool: 'report', arguments: {} });
      assert.deepEqual(report.content, [{ type: 'text', text: 'the report' }]);
      await mcp.call({ url: mcpServer.url, auth, pool, tool: 'whoami', arguments: {} });
      assert.equal(pool.connectsMade, 1);
    } finally {
      await pool.closeAll();
    }
  });

  test('an input request subako cannot fulfil is McpServerError rejected, and keeps the connection', async () => {
    await loginAs('asker');
    const pool = new McpClientPool();
    const auth = mcp.oauth('asker');
    try {
      await mcp.call({ url: mcpServer.url, auth, pool, tool: 'whoami', arguments: {} });
      await assert.rejects(mcp.call({ url: mcpServer.url, auth, pool, tool: 'confirm', arguments: {} }), (err: unknown) => {
        assert.ok(err instanceof McpServerError, String(err));
        assert.equal(err.reason, 'rejected');
        assert.equal(err.rpcCode, -32021);
        assert.match(err.message, /needs a client capability that subako does not offer to call tool "confirm"/);
        return true;
      });
      await mcp.call({ url: mcpServer.url, auth, pool, tool: 'whoami', arguments: {} });
      assert.equal(pool.connectsMade, 1);
    } finally {
      await pool.closeAll();
    }
  });
});
