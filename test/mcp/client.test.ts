/**
 * Outbound: toolboxes and calls against real servers of both eras (the v2 SDK's 2026-07-28 server and the
 * v1 SDK's 2025-era sessionful server), on loopback.
 */
import { describe, it, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  mcp,
  callTool,
  getMetadata,
  CallError,
  McpClientPool,
  McpServerError,
  Secret,
} from '../../src/mcp/index.js';
import { PIXEL_PNG, startLegacyServer, startModernServer, type RunningServer } from './helpers/servers.js';

const eras: Array<[string, () => Promise<RunningServer>, 'modern' | 'legacy']> = [
  ['a 2026-07-28 server (v2 SDK)', () => startModernServer(), 'modern'],
  ['a 2025-era server (v1 SDK, sessions)', () => startLegacyServer(), 'legacy'],
];

for (const [era, start, kind] of eras) {
  describe(`mcp.tools and calls against ${era}`, () => {
    let server: RunningServer;
    let pool: McpClientPool;
    before(async () => {
      server = await start();
    });
    after(async () => {
      await server.stop();
    });
    afterEach(async () => {
      await pool?.closeAll();
    });

    it('lists every page of tools into a toolbox keyed by name, with descriptions and schemas', async () => {
      pool = new McpClientPool();
      const pagesBefore = server.stats.listPages;
      const toolbox = await mcp.tools({ url: server.url, pool });
      assert.deepEqual(Object.keys(toolbox), ['add', 'pixel', 'fail', 'whoami', 'echo_auth_error']);
      assert.equal(server.stats.listPages - pagesBefore, 3, 'three pages of two were fetched');
      const add = getMetadata(toolbox.add);
      assert.equal(add.name, 'add');
      assert.equal(add.description, 'Adds two integers.');
      assert.deepEqual(add.inputSchema.required, ['x', 'y']);
      assert.deepEqual(add.outputSchema?.required, ['sum']);
      assert.deepEqual(add.source, { kind: 'mcp', url: server.url });
      if (kind === 'modern') assert.ok(server.stats.modernRequests > 0, 'the client spoke 2026-07-28');
      else assert.ok(server.stats.initializes > 0, 'the client fell back to the 2025 initialize handshake');
    });

    it('calls a tool: the result keeps structuredContent and content blocks', async () => {
      pool = new McpClientPool();
      const toolbox = await mcp.tools({ url: server.url, pool });
      const result = await callTool(toolbox.add, { x: 19, y: 23 });
      assert.deepEqual(result.structuredContent, { sum: 42 });
      assert.deepEqual(result.content, [{ type: 'text', text: '42' }]);
    });

    it('keeps image blocks as the server sent them', async () => {
      pool = new McpClientPool();
      const toolbox = await mcp.tools({ url: server.url, pool });
      const result = await toolbox.pixel.call({});
      assert.deepEqual(result.content[0], { type: 'image', data: PIXEL_PNG, mimeType: 'image/png' });
      assert.equal(result.content[1].text, 'one pixel');
    });

    it('mcp.call calls without listing', async () => {
      pool = new McpClientPool();
      const pagesBefore = server.stats.listPages;
      const result = await mcp.call({ url: server.url, pool, tool: 'add', arguments: { x: 1, y: 2 } });
      assert.deepEqual(result.structuredContent, { sum: 3 });
      assert.equal(server.stats.listPages, pagesBefore, 'no listing');
    });

    it('callTool refuses arguments that do not match the input schema before any request reaches the server', async () => {
      pool = new McpClientPool();
      const toolbox = await mcp.tools({ url: server.url, pool });
      const httpBefore = server.stats.http;
      const callsBefore = server.stats.calls;
      await assert.rejects(callTool(toolbox.add, { x: 1, y: 'two' }), (err: unknown) => {
        assert.ok(err instanceof CallError);
        assert.equal(err.code, 'call_error');
        assert.equal(err.path, '/y');
        assert.equal(err.rule, 'type');
        assert.match(err.message, /argument \/y must be integer/);
        return true;
      });
      await assert.rejects(callTool(toolbox.add, { x: 1 }), (err: unknown) => err instanceof CallError && err.path === '/y' && err.rule === 'required');
      await assert.rejects(toolbox.add.call({ x: 1, y: 2, z: 3 }), (err: unknown) => err instanceof CallError && err.path === '/z' && err.rule === 'additionalProperties');
      assert.equal(server.stats.http, httpBefore, 'no HTTP request was made');
      assert.equal(server.stats.calls, callsBefore);
    });

    it('mcp.call does not validate: the server refuses an unknown tool as a server error', async () => {
      pool = new McpClientPool();
      await assert.rejects(mcp.call({ url: server.url, pool, tool: 'nope', arguments: {} }), (err: unknown) => {
        assert.ok(err instanceof McpServerError);
        assert.equal(err.code, 'mcp.server_error');
        assert.ok(err.reason === 'rejected' || err.reason === 'tool_error', err.reason);
        return true;
      });
    });

    it('a tool result with isError is returned by tool.call and thrown (tool_error) by callTool and mcp.call', async () => {
      pool = new McpClientPool();
      const toolbox = await mcp.tools({ url: server.url, pool });
      const returned = await toolbox.fail.call({ reason: 'disk full' });
      assert.equal(returned.isError, true);
      assert.equal(returned.content[0].text, 'failed: disk full');
      await assert.rejects(callTool(toolbox.fail, { reason: 'disk full' }), (err: unknown) => {
        assert.ok(err instanceof McpServerError);
        assert.equal(err.reason, 'tool_error');
        assert.match(err.message, /disk full/);
        assert.equal(err.result?.isError, true);
        return true;
      });
      await assert.rejects(mcp.call({ url: server.url, pool, tool: 'fail' }), (err: unknown) => err instanceof McpServerError && err.reason === 'tool_error');
    });

    it('shares one connection per descriptor: same URL and same auth', async () => {
      pool = new McpClientPool();
      const auth = () => mcp.headers({ 'X-Team': new Secret('blue') });
      const first = await mcp.tools({ url: server.url, auth: auth(), pool });
      const second = await mcp.tools({ url: server.url, auth: auth(), pool });
      await callTool(first.add, { x: 1, y: 1 });
      await callTool(second.add, { x: 2, y: 2 });
      await mcp.call({ url: server.url, auth: auth(), pool, tool: 'add', arguments: { x: 3, y: 3 } });
      assert.equal(pool.connectsMade, 1);
      await mcp.call({ url: server.url, auth: mcp.headers({ 'X-Team': 'red' }), pool, tool: 'add', arguments: { x: 3, y: 3 } });
      assert.equal(pool.connectsMade, 2, 'a different header value is a different connection');
    });

    it('connects lazily: a toolbox tool reconnects by itself after the pool was closed', async () => {
      pool = new McpClientPool();
      const toolbox = await mcp.tools({ url: server.url, pool });
      await pool.closeAll();
      assert.equal(pool.size, 0);
      const result = await callTool(toolbox.add, { x: 2, y: 5 });
      assert.deepEqual(result.structuredContent, { sum: 7 });
      assert.equal(pool.connectsMade, 2);
    });
  });
}

describe('a server that drops its connection or restarts is reached again on the next call', () => {
  for (const [era, start] of eras) {
    it(`${era}: down gives a transport server error; after the restart the next call succeeds`, async () => {
      const server = await start();
      const pool = new McpClientPool({ timeoutMs: 5000 });
      try {
        const toolbox = await mcp.tools({ url: server.url, pool });
        await callTool(toolbox.add, { x: 1, y: 1 });
        await server.stop();
        await assert.rejects(callTool(toolbox.add, { x: 1, y: 2 }), (err: unknown) => {
          assert.ok(err instanceof McpServerError);
          assert.equal(err.reason, 'transport');
          assert.match(err.message, /^cannot reach the MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp to call tool "add" \(\w+\)$/);
          return true;
        });
        await server.restart();
        const result = await callTool(toolbox.add, { x: 1, y: 3 });
        assert.deepEqual(result.structuredContent, { sum: 4 });
      } finally {
        await pool.closeAll();
        await server.stop();
      }
    });

    it(`${era}: a restart that forgets sessions costs at most one failed call`, async () => {
      const server = await start();
      const pool = new McpClientPool({ timeoutMs: 5000 });
      try {
        const toolbox = await mcp.tools({ url: server.url, pool });
        await callTool(toolbox.add, { x: 1, y: 1 });
        await server.stop();
        await server.restart();
        // The first call may fail (the old session is unknown now) or may already reconnect; the one after
        // a failure must succeed.
        try {
          await callTool(toolbox.add, { x: 2, y: 2 });
        } catch (err) {
          assert.ok(err instanceof McpServerError, String(err));
        }
        const result = await callTool(toolbox.add, { x: 3, y: 3 });
        assert.deepEqual(result.structuredContent, { sum: 6 });
      } finally {
        await pool.closeAll();
        await server.stop();
      }
    });
  }
});

describe('an unreachable server', () => {
  it('is a transport server error naming the URL, never a raw network error', async () => {
    const pool = new McpClientPool({ timeoutMs: 5000 });
    await assert.rejects(mcp.tools({ url: 'http://127.0.0.1:9/mcp', pool }), (err: unknown) => {
      assert.ok(err instanceof McpServerError);
      assert.equal(err.reason, 'transport');
      assert.match(err.message, /127\.0\.0\.1:9/);
      return true;
    });
    assert.equal(pool.size, 0, 'the failed connection is dropped');
  });
});
