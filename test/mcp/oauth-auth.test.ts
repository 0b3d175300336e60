/**
 * `mcp.oauth(name)`: the toolbox names a credential; a fresh access token is asked for on every request and
 * sent as a bearer token. Missing or expired-beyond-refresh credentials are McpAuthError, and so is a token
 * the server refuses. (Login and the credential store are tested under test/mcp/oauth/.)
 */
import { describe, it, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mcp, callTool, McpClientPool, McpAuthError, REDACTED, Secret, setAccessTokenSource } from '../../src/mcp/index.js';
import { startModernServer, startLegacyServer, type RunningServer } from './helpers/servers.js';

describe('OAuth auth on outbound connections', () => {
  let modern: RunningServer;
  let legacy: RunningServer;
  let home: string;
  const previousHome = process.env.SUBAKO_HOME;
  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'subako-oauth-auth-'));
    process.env.SUBAKO_HOME = home;
    modern = await startModernServer({ requireAuthorization: 'Bearer token-one' });
    legacy = await startLegacyServer();
  });
  after(async () => {
    await Promise.all([modern.stop(), legacy.stop()]);
    rmSync(home, { recursive: true, force: true });
    if (previousHome === undefined) delete process.env.SUBAKO_HOME;
    else process.env.SUBAKO_HOME = previousHome;
  });
  afterEach(() => setAccessTokenSource(undefined));

  it('sends the named credential as a bearer token, asking for a fresh one on each request', async () => {
    const asked: string[] = [];
    let token = 'token-one';
    setAccessTokenSource(async (name) => {
      asked.push(name);
      return new Secret(token);
    });
    const pool = new McpClientPool();
    try {
      const toolbox = await mcp.tools({ url: legacy.url, auth: mcp.oauth('github'), pool });
      await callTool(toolbox.whoami, {});
      assert.equal(legacy.stats.authorizations.at(-1), 'Bearer token-one');
      token = 'token-two'; // the store refreshed it
      const echoed = await callTool(toolbox.whoami, {});
      assert.equal(legacy.stats.authorizations.at(-1), 'Bearer token-two');
      assert.equal(echoed.content[0].text, `Bearer ${REDACTED}`, 'a result quoting the token back shows it redacted');
      assert.ok(asked.length >= 2 && asked.every((name) => name === 'github'));
      assert.equal(pool.connectsMade, 1, 'a refreshed token does not need a new connection');
    } finally {
      await pool.closeAll();
    }
  });

  it("the credential store's McpAuthError reaches the caller as it is (retrying will not help)", async () => {
    setAccessTokenSource(async (name) => {
      throw new McpAuthError('expired', `the credential "${name}" expired and could not be refreshed; run subako mcp login`, { credential: name });
    });
    const pool = new McpClientPool();
    try {
      await assert.rejects(mcp.tools({ url: modern.url, auth: mcp.oauth('github'), pool }), (err: unknown) => {
        assert.ok(err instanceof McpAuthError);
        assert.equal(err.code, 'mcp.auth_error');
        assert.equal(err.reason, 'expired');
        assert.equal(err.credential, 'github');
        return true;
      });
    } finally {
      await pool.closeAll();
    }
  });

  it('a token the server refuses is refreshed once (forceRefresh) and the request retried', async () => {
    const requests: Array<boolean | undefined> = [];
    setAccessTokenSource(async (_name, options) => {
      requests.push(options?.forceRefresh);
      return new Secret(options?.forceRefresh ? 'token-one' : 'stale-token');
    });
    const pool = new McpClientPool();
    try {
      const result = await mcp.call({ url: modern.url, auth: mcp.oauth('github'), pool, tool: 'add', arguments: { x: 2, y: 2 } });
      assert.deepEqual(result.structuredContent, { sum: 4 });
      assert.ok(requests.includes(true), 'a forced refresh was asked for');
    } finally {
      await pool.closeAll();
    }
  });

  it('a token the server refuses even after a refresh (HTTP 401) is an McpAuthError naming the credential', async () => {
    setAccessTokenSource(async () => new Secret('revoked-token'));
    const pool = new McpClientPool();
    try {
      await assert.rejects(mcp.call({ url: modern.url, auth: mcp.oauth('github'), pool, tool: 'add', arguments: { x: 1, y: 1 } }), (err: unknown) => {
        assert.ok(err instanceof McpAuthError);
        assert.equal(err.reason, 'rejected');
        assert.match(err.message, /subako mcp login/);
        assert.ok(!err.message.includes('revoked-token'));
        return true;
      });
    } finally {
      await pool.closeAll();
    }
  });

  it('a credential that was never stored is an McpAuthError from the default store', async () => {
    const pool = new McpClientPool();
    try {
      await assert.rejects(mcp.tools({ url: modern.url, auth: mcp.oauth('never-logged-in'), pool }), McpAuthError);
    } finally {
      await pool.closeAll();
    }
  });
});
