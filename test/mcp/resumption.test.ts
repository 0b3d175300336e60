/**
 * Client resumption (SEP-1699): a 2025-era server closes a tools/call's SSE stream after the priming event
 * (id + `retry: 100`) and before the result. The call is resumed with GET + Last-Event-ID and returns the result;
 * when the server never serves the resumed stream, the call fails after the bounded tries as a transport error,
 * not by waiting for the 60 s request timeout (each test's own timeout, far below that, would fail it).
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mcp, callTool, McpClientPool, McpServerError } from '../../src/mcp/index.js';
import { CallCancelledError } from '../../src/tool.js';
import { RESUMPTION } from '../../src/mcp/resuming-transport.js';
import { startClosingStreamServer, type ClosingStreamServer } from './helpers/closing-stream-server.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';

/**
 * A 2026-07-28 v2 McpServer (tools `drop`, `hang`, `ok`) behind a fetch wrapper that answers a `tools/call` of `drop` with an SSE stream that
 * ends at once: no event id (that era has no resumption), no result.
 */
async function startDroppingServer(): Promise<{ url: string; dropped: () => number; hangs: () => number; stop(): Promise<void> }> {
  let dropped = 0;
  let hangs = 0;
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'dropping', version: '1.0.0' });
    server.registerTool('drop', { description: 'Never answers.', inputSchema: z.object({}) }, async () => ({ content: [] }));
    server.registerTool('hang', { description: 'Answers late.', inputSchema: z.object({}) }, async () => {
      hangs += 1;
      await new Promise((resolve) => setTimeout(resolve, 10_000).unref());
      return { content: [] };
    });
    server.registerTool('ok', { description: 'Answers.', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    return server;
  });
  const http = createServer(
    toNodeHandler({
      fetch: async (request: Request) => {
        const body = request.method === 'POST' ? ((await request.clone().json().catch(() => undefined)) as { method?: string; params?: { name?: string } }) : undefined;
        if (body?.method === 'tools/call' && body.params?.name === 'drop') {
          dropped += 1;
          return new Response(new ReadableStream({ start: (c) => c.close() }), { headers: { 'content-type': 'text/event-stream' } });
        }
        return handler.fetch(request);
      },
    }),
  );
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    dropped: () => dropped,
    hangs: () => hangs,
    stop: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe('a response stream the server closes early', () => {
  let server: ClosingStreamServer | undefined;
  let pool: McpClientPool | undefined;
  afterEach(async () => {
    await pool?.closeAll();
    await server?.stop();
  });

  it('is resumed with Last-Event-ID and the call returns the result', { timeout: 15_000 }, async () => {
    server = await startClosingStreamServer({ serveResumption: true });
    pool = new McpClientPool(); // the default 60 s request timeout
    const toolbox = await mcp.tools({ url: server.url, pool });
    const result = await callTool(toolbox.slow!, {});
    assert.deepEqual(result.content, [{ type: 'text', text: 'done after resumption' }]);
    assert.equal(server.closedEarly, 1);
    assert.ok(server.resumes >= 1, 'the client resumed with Last-Event-ID');
    // The connection is still good for the next call.
    const again = await callTool(toolbox.slow!, {});
    assert.deepEqual(again.content, [{ type: 'text', text: 'done after resumption' }]);
    assert.equal(pool.connectsMade, 1);
  });

  it('fails after the bounded tries as a transport error when it cannot be resumed', { timeout: 15_000 }, async () => {
    server = await startClosingStreamServer({ serveResumption: false });
    pool = new McpClientPool();
    const toolbox = await mcp.tools({ url: server.url, pool });
    await assert.rejects(callTool(toolbox.slow!, {}), (err: unknown) => {
      assert.ok(err instanceof McpServerError, String(err));
      assert.equal(err.reason, 'transport');
      assert.match(err.message, /closed the response stream .* before the result, and resuming it failed/);
      return true;
    });
    assert.equal(server.closedEarly, 1);
    assert.equal(server.refusedResumes, RESUMPTION.maxRetries, 'exactly the bounded number of resumption tries');
    // A lost stream is a transport failure: the connection was dropped and the next call makes a new one.
    await assert.rejects(callTool(toolbox.slow!, {}));
    assert.equal(pool.connectsMade, 2);
  });
});

describe('a 2026-07-28 response stream that ends without the result', () => {
  it('fails the call at once as a transport error, not after the request timeout', { timeout: 15_000 }, async () => {
    const server = await startDroppingServer();
    const pool = new McpClientPool();
    try {
      const toolbox = await mcp.tools({ url: server.url, pool });
      await assert.rejects(callTool(toolbox.drop!, {}), (err: unknown) => {
        assert.ok(err instanceof McpServerError, String(err));
        assert.equal(err.reason, 'transport');
        assert.match(err.message, /closed the response stream/);
        return true;
      });
      assert.equal(server.dropped(), 1);
      const ok = await callTool(toolbox.ok!, {});
      assert.deepEqual(ok.content, [{ type: 'text', text: 'ok' }]);
    } finally {
      await pool.closeAll();
      await server.stop();
    }
  });
});

describe("a caller's abort", () => {
  it('is a cancellation, not a transport failure, and keeps the pooled connection', { timeout: 15_000 }, async () => {
    const server = await startDroppingServer();
    const pool = new McpClientPool();
    try {
      const toolbox = await mcp.tools({ url: server.url, pool });
      const controller = new AbortController();
      const call = callTool(toolbox.hang!, {}, { signal: controller.signal });
      while (server.hangs() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      controller.abort();
      await assert.rejects(call, CallCancelledError);
      const ok = await callTool(toolbox.ok!, {});
      assert.deepEqual(ok.content, [{ type: 'text', text: 'ok' }]);
      assert.equal(pool.connectsMade, 1);
    } finally {
      await pool.closeAll();
      await server.stop();
    }
  });
});
