/**
 * Inbound: `serve` publishes a toolbox at a capability URL for as long as the subscriber runs, reachable by
 * the official v2 client (2026-07-28) and by the v1 SDK client (2025-era), and nothing is served after.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  mcp,
  defineTool,
  callTool,
  CapabilityRouter,
  McpClientPool,
  CallError,
  createToolboxHandler,
} from '../../src/mcp/index.js';
import type { Toolbox } from '../../src/tool.js';

const double = defineTool({
  name: 'double',
  description: 'Doubles an integer.',
  inputSchema: { type: 'object', properties: { value: { type: 'integer' } }, required: ['value'] },
  handler: ({ value }: { value: number }) => ({ doubled: value * 2 }),
});

const greet = defineTool({
  name: 'greet',
  description: 'Greets someone (zod schema).',
  schema: z.object({ name: z.string().min(1), punctuation: z.string().default('!') }),
  handler: ({ name, punctuation }) => `hello ${name}${punctuation}`,
});

const explode = defineTool({
  name: 'explode',
  inputSchema: { type: 'object', properties: {} },
  handler: () => {
    throw new Error('the handler blew up');
  },
});

const toolbox: Toolbox = { double, greet, explode };

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('defineTool makes a TypeScript function a Tool', () => {
  it('validates arguments before the handler runs', async () => {
    let ran = 0;
    const tool = defineTool({
      name: 'count',
      inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      handler: () => {
        ran += 1;
        return 'ran';
      },
    });
    await assert.rejects(tool.call({ n: 'x' }), (err: unknown) => err instanceof CallError && err.path === '/n');
    assert.equal(ran, 0);
    assert.equal((await tool.call({ n: 1 })).content[0].text, 'ran');
    assert.equal(ran, 1);
  });

  it('a zod schema is advertised as JSON Schema, enforced, and its parsed output (defaults) reaches the handler', async () => {
    assert.equal((greet.inputSchema.properties as Record<string, { type: string }>).name.type, 'string');
    assert.deepEqual((await greet.call({ name: 'Ada' })).content, [{ type: 'text', text: 'hello Ada!' }]);
    await assert.rejects(greet.call({ name: '' }), (err: unknown) => err instanceof CallError && err.path === '/name');
  });

  it('an object result becomes structuredContent plus its JSON text; a thrown error an isError result', async () => {
    const result = await double.call({ value: 21 });
    assert.deepEqual(result.structuredContent, { doubled: 42 });
    assert.equal(result.content[0].text, '{"doubled":42}');
    const failed = await explode.call({});
    assert.equal(failed.isError, true);
    assert.equal(failed.content[0].text, 'the handler blew up');
  });
});

describe('mcp.serve publishes a toolbox at a capability URL while the subscriber runs', () => {
  it('mints an unguessable URL (256 random bits, base64url) on loopback, a new one each time', async () => {
    const urls: string[] = [];
    for (let i = 0; i < 2; i++) await mcp.serve(toolbox, (url) => void urls.push(url));
    for (const url of urls) assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp\/[A-Za-z0-9_-]{43}$/);
    assert.notEqual(urls[0].split('/').pop(), urls[1].split('/').pop());
  });

  it('is reached by the official v2 client, which speaks 2026-07-28', async () => {
    await mcp.serve(toolbox, async (url) => {
      const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        assert.equal(client.getProtocolEra(), 'modern');
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name), ['double', 'greet', 'explode']);
        const result = await client.callTool({ name: 'double', arguments: { value: 4 } });
        assert.deepEqual(result.structuredContent, { doubled: 8 });
        const greeted = await client.callTool({ name: 'greet', arguments: { name: 'Bo' } });
        assert.deepEqual(greeted.content, [{ type: 'text', text: 'hello Bo!' }]);
      } finally {
        await client.close();
      }
    });
  });

  it('is reached by a 2025-era client (the v1 SDK)', async () => {
    await mcp.serve(toolbox, async (url) => {
      const client = new LegacyClient({ name: 'v1', version: '1' });
      await client.connect(new LegacyTransport(new URL(url)));
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name), ['double', 'greet', 'explode']);
        const result = await client.callTool({ name: 'double', arguments: { value: 5 } });
        assert.deepEqual(result.structuredContent, { doubled: 10 });
      } finally {
        await client.close();
      }
    });
  });

  it("is reached by subako's own toolbox client, pages included, and serves tool failures as isError results", async () => {
    const pool = new McpClientPool();
    await mcp.serve(
      toolbox,
      async (url) => {
        const served = await mcp.tools({ url, pool });
        assert.deepEqual(Object.keys(served), ['double', 'greet', 'explode']);
        assert.deepEqual((await callTool(served.double, { value: 1 })).structuredContent, { doubled: 2 });
        const failed = await served.explode.call({});
        assert.equal(failed.isError, true);
        assert.match(String(failed.content[0].text), /the handler blew up/);
        // Bypassing our own validation: the served endpoint validates too and answers with an isError result.
        const invalid = await mcp.call({ url, pool, tool: 'double', arguments: { value: 'x' } }).catch((err: unknown) => err);
        assert.equal((invalid as { reason?: string }).reason, 'tool_error');
        assert.match((invalid as Error).message, /\/value/);
        await pool.closeAll();
      },
      { pageSize: 1 },
    );
  });

  it("returns the subscriber's value and then refuses everything with 404", async () => {
    let captured = '';
    const value = await mcp.serve(toolbox, async (url) => {
      captured = url;
      assert.equal((await post(url, INITIALIZE)).status, 200);
      return 'done';
    });
    assert.equal(value, 'done');
    // The server serve started is gone; a router that outlives a capability answers 404 (tested below).
    await assert.rejects(post(captured, INITIALIZE));
  });

  it('a subscriber that throws ends the serve with its error', async () => {
    await assert.rejects(
      mcp.serve(toolbox, () => {
        throw new Error('subscriber failed');
      }),
      /subscriber failed/,
    );
  });

  it('aborting the signal ends the serve, rejects it, and aborts the subscriber\'s signal', async () => {
    const controller = new AbortController();
    let subscriberSignal: AbortSignal | undefined;
    const serving = mcp.serve(
      toolbox,
      (url, signal) => {
        subscriberSignal = signal;
        setImmediate(() => controller.abort(new Error('cancelled by the run')));
        return new Promise(() => undefined); // would serve forever
      },
      { signal: controller.signal },
    );
    await assert.rejects(serving, /cancelled by the run/);
    assert.equal(subscriberSignal?.aborted, true);
  });
});

describe('serve on a host server: a shared CapabilityRouter', () => {
  it('serves the capability, leaves other paths to the host, and answers 404 once the subscriber settles', async () => {
    const lines: string[] = [];
    const router = new CapabilityRouter({ log: (line) => lines.push(line) });
    const host = createServer((req, res) => {
      void router.handleNode(req, res).then((handled) => {
        if (!handled) res.writeHead(200).end('host page');
      });
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    try {
      let captured = '';
      await mcp.serve(
        toolbox,
        async (url) => {
          captured = url;
          assert.ok(url.startsWith(`${baseUrl}/mcp/`));
          assert.equal((await post(url, INITIALIZE)).status, 200);
          assert.equal(await (await fetch(`${baseUrl}/other`)).text(), 'host page');
          assert.equal((await post(`${baseUrl}/mcp/not-a-token`, INITIALIZE)).status, 404);
        },
        { router, baseUrl },
      );
      assert.equal(router.size, 0);
      assert.equal((await post(captured, INITIALIZE)).status, 404);
      assert.equal((await fetch(captured)).status, 404);
      const token = captured.split('/').pop()!;
      assert.ok(lines.length >= 3);
      for (const line of lines) assert.ok(!line.includes(token), `a log line shows the token: ${line}`);
      assert.ok(lines.some((line) => line.includes('/mcp/******** 200')));
    } finally {
      host.closeAllConnections();
      await new Promise((resolve) => host.close(resolve));
    }
  });
});

describe('serve on an existing node:http server', () => {
  it("mounts beside the server's own handler and needs no second port", async () => {
    const host = createServer((_req, res) => res.writeHead(200).end('own route'));
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    try {
      await mcp.serve(
        toolbox,
        async (url) => {
          assert.ok(url.startsWith(`http://127.0.0.1:${(host.address() as AddressInfo).port}/mcp/`));
          const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
          await client.connect(new StreamableHTTPClientTransport(new URL(url)));
          assert.deepEqual((await client.callTool({ name: 'double', arguments: { value: 3 } })).structuredContent, { doubled: 6 });
          await client.close();
          assert.equal(await (await fetch(url.replace(/\/mcp\/.*$/, '/page'))).text(), 'own route');
        },
        { server: host },
      );
    } finally {
      host.closeAllConnections();
      await new Promise((resolve) => host.close(resolve));
    }
  });
});

describe('the served endpoint checks Origin and body size', () => {
  it('refuses a disallowed Origin with 403 and accepts loopback and configured ones', async () => {
    await mcp.serve(
      toolbox,
      async (url) => {
        assert.equal((await post(url, INITIALIZE, { origin: 'https://evil.example' })).status, 403);
        assert.equal((await post(url, INITIALIZE, { origin: 'null' })).status, 403);
        assert.equal((await post(url, INITIALIZE, { origin: 'http://localhost:5173' })).status, 200);
        assert.equal((await post(url, INITIALIZE, { origin: 'https://app.example' })).status, 200);
      },
      { allowedOrigins: ['https://app.example'] },
    );
  });

  it('refuses a body over the limit with 413, declared or streamed', async () => {
    await mcp.serve(
      toolbox,
      async (url) => {
        const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(4096) } });
        assert.equal((await post(url, big)).status, 413);
        const stream = new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(big));
            controller.close();
          },
        });
        const chunked = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: stream,
          duplex: 'half',
        } as RequestInit);
        assert.equal(chunked.status, 413);
        assert.equal((await post(url, INITIALIZE)).status, 200, 'a small body still passes');
      },
      { maxBodyBytes: 1024 },
    );
  });

  it('createToolboxHandler applies the same checks to web-standard Requests', async () => {
    const handler = createToolboxHandler(toolbox, { maxBodyBytes: 100 });
    try {
      const forbidden = await handler(new Request('http://127.0.0.1/x', { method: 'POST', headers: { origin: 'https://evil.example' }, body: '{}' }));
      assert.equal(forbidden.status, 403);
      const large = await handler(new Request('http://127.0.0.1/x', { method: 'POST', headers: { 'content-length': '1000' }, body: 'x'.repeat(1000) }));
      assert.equal(large.status, 413);
    } finally {
      await handler.close();
    }
  });
});
