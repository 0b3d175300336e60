/**
 * SEP-2243 when serving: a 2026-07-28 `tools/call` of a tool whose schema marks arguments with `x-mcp-header`
 * is refused with HTTP 400 and -32020 when its `Mcp-Param-*` header is missing, disagrees with the body, or is
 * badly encoded — for our own tools (defineTool) and for proxied remote ones (a toolbox listed from a real v2
 * McpServer) — and the tool never runs. The official v2 client sends the headers itself and is served; a
 * 2025-era request (which has no such headers) is served as before.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createToolboxHandler, type ToolboxHandler } from '../../src/mcp/toolbox-handler.js';
import { defineTool } from '../../src/mcp/define-tool.js';
import { tools } from '../../src/mcp/client-api.js';
import { McpClientPool } from '../../src/mcp/connection.js';
import type { Toolbox } from '../../src/tool.js';
import { ROUTE_INPUT_SCHEMA, startParamHeaderServer, type ParamHeaderServer } from './helpers/param-header-server.js';

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const MODERN_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
};

function modernCall(tool: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: tool, arguments: args, _meta: MODERN_META } });
}

interface Answer {
  status: number;
  body: { id?: unknown; result?: { content?: Array<{ text?: string }> }; error?: { code: number; message: string; data?: unknown } };
}

async function post(url: string, tool: string, args: Record<string, unknown>, extra: Record<string, string>): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers: { ...MODERN_HEADERS, 'mcp-name': tool, ...extra }, body: modernCall(tool, args) });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

async function listen(handler: ToolboxHandler): Promise<{ url: string; http: Server }> {
  const http = createServer((req, res) => void handler.handleNode(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, http };
}

const b64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

/** The refusals every toolbox serving `route` must give, the tool not running for any of them. */
function refusalCases(): Array<{ what: string; args: Record<string, unknown>; headers: Record<string, string>; names: RegExp }> {
  return [
    { what: 'a missing header', args: { region: 'eu' }, headers: {}, names: /Mcp-Param-Region header is absent/ },
    { what: 'a header that disagrees with the body', args: { region: 'eu' }, headers: { 'mcp-param-region': 'us' }, names: /decodes to "us" but the arguments carry region="eu"/ },
    { what: 'a badly encoded header (not canonical Base64)', args: { region: 'eu' }, headers: { 'mcp-param-region': '=?base64?ZXU?=' }, names: /invalid Base64 sentinel/ },
    { what: 'a Base64 header that is not UTF-8', args: { region: 'eu' }, headers: { 'mcp-param-region': '=?base64?/w==?=' }, names: /invalid Base64 sentinel/ },
    { what: 'an integer header that disagrees', args: { region: 'eu', count: 3 }, headers: { 'mcp-param-region': 'eu', 'mcp-param-count': '4' }, names: /Mcp-Param-Count header decodes to "4"/ },
  ];
}

describe('Mcp-Param-* headers are checked when serving', () => {
  const ran: unknown[] = [];
  const route = defineTool({
    name: 'route',
    inputSchema: ROUTE_INPUT_SCHEMA as never,
    handler: (args: { region: string }) => {
      ran.push(args);
      return { content: [{ type: 'text', text: `ours, routed to ${args.region}` }] };
    },
  });
  let handler: ToolboxHandler;
  let ours: { url: string; http: Server };
  before(async () => {
    handler = createToolboxHandler({ route });
    ours = await listen(handler);
  });
  after(async () => {
    ours.http.closeAllConnections();
    await new Promise<void>((resolve) => ours.http.close(() => resolve()));
    await handler.close();
  });

  for (const refusal of refusalCases()) {
    it(`refuses ${refusal.what} with 400 and -32020, and the tool does not run`, async () => {
      const before = ran.length;
      const answer = await post(ours.url, 'route', refusal.args, refusal.headers);
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error?.code, -32020);
      assert.equal(answer.body.id, 5);
      assert.match(answer.body.error!.message, refusal.names);
      assert.match(answer.body.error!.message, /send Mcp-Param-\w+ with the argument's value/);
      assert.equal(ran.length, before);
    });
  }

  it('serves a call whose headers match: plain, Base64 for non-ASCII, integers compared as numbers', async () => {
    const plain = await post(ours.url, 'route', { region: 'eu' }, { 'mcp-param-region': 'eu' });
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
    assert.equal(plain.body.result?.content?.[0]?.text, 'ours, routed to eu');
    const unicode = await post(ours.url, 'route', { region: 'Zürich' }, { 'mcp-param-region': b64('Zürich') });
    assert.equal(unicode.status, 200, JSON.stringify(unicode.body));
    const numeric = await post(ours.url, 'route', { region: 'eu', count: 42 }, { 'mcp-param-region': 'eu', 'mcp-param-count': '42.0' });
    assert.equal(numeric.status, 200, JSON.stringify(numeric.body));
    // An argument the call leaves out asks for no header.
    const without = await post(ours.url, 'route', { region: 'eu', note: 'n' }, { 'mcp-param-region': 'eu' });
    assert.equal(without.status, 200, JSON.stringify(without.body));
  });

  it('the web-standard face refuses the same way', async () => {
    const response = await handler(new Request('http://localhost/mcp', {
      method: 'POST', headers: { ...MODERN_HEADERS, 'mcp-name': 'route', 'mcp-param-region': 'us' }, body: modernCall('route', { region: 'eu' }),
    }));
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as Answer['body']).error?.code, -32020);
  });

  it('the official v2 client sends the headers itself and is served', async () => {
    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(ours.url)));
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      await client.listTools();
      const result = await client.callTool({ name: 'route', arguments: { region: 'ap south', count: 7 } });
      assert.equal((result.content as Array<{ text: string }>)[0].text, 'ours, routed to ap south');
    } finally {
      await client.close();
    }
  });

  it('a 2025-era call (no envelope, no such headers) is served as before', async () => {
    const response = await fetch(ours.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'route', arguments: { region: 'eu' } } }),
    });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /ours, routed to eu/);
  });
});

describe('Mcp-Param-* headers are checked for proxied remote tools', () => {
  let upstream: ParamHeaderServer;
  let pool: McpClientPool;
  let handler: ToolboxHandler;
  let proxy: { url: string; http: Server };
  before(async () => {
    upstream = await startParamHeaderServer();
    pool = new McpClientPool();
    const toolbox: Toolbox = await tools({ url: upstream.url, pool });
    handler = createToolboxHandler(toolbox);
    proxy = await listen(handler);
  });
  after(async () => {
    proxy.http.closeAllConnections();
    await new Promise<void>((resolve) => proxy.http.close(() => resolve()));
    await handler.close();
    await pool.closeAll();
    await upstream.stop();
  });

  for (const refusal of refusalCases()) {
    it(`refuses ${refusal.what} before anything reaches the upstream`, async () => {
      const before = upstream.calls.length;
      const answer = await post(proxy.url, 'route', refusal.args, refusal.headers);
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error?.code, -32020);
      assert.match(answer.body.error!.message, refusal.names);
      assert.equal(upstream.calls.length, before);
    });
  }

  it('a matching call is proxied, and the upstream receives the headers its schema asks for', async () => {
    const answer = await post(proxy.url, 'route', { region: 'eu', count: 2 }, { 'mcp-param-region': 'eu', 'mcp-param-count': '2' });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.result?.content?.[0]?.text, 'routed to eu');
    assert.deepEqual(upstream.calls.at(-1), { 'mcp-param-region': 'eu', 'mcp-param-count': '2' });
    assert.equal(upstream.refusals, 0);
  });
});
