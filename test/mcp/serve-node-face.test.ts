/**
 * The toolbox handler's node:http face answers exactly as its web-standard face does (it only skips the
 * conversions), writes a JSON answer in one piece with its length, and aborts a call whose client went away.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createToolboxHandler, type ToolboxHandler } from '../../src/mcp/toolbox-handler.js';
import { defineTool } from '../../src/mcp/define-tool.js';
import type { Tool, Toolbox } from '../../src/tool.js';

const double = defineTool({
  name: 'double',
  inputSchema: { type: 'object', properties: { value: { type: 'integer' } }, required: ['value'] },
  handler: ({ value }: { value: number }) => ({ doubled: value * 2 }),
});

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const MODERN_HEADERS = { ...JSON_HEADERS, 'mcp-protocol-version': '2026-07-28' };

interface Probe {
  what: string;
  method?: string;
  headers: Record<string, string>;
  body?: string;
}

const probes: Probe[] = [
  {
    what: 'a 2026-07-28 tools/call',
    headers: { ...MODERN_HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'double' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'double', arguments: { value: 4 }, _meta: MODERN_META } }),
  },
  {
    what: 'a 2026-07-28 tools/list',
    headers: { ...MODERN_HEADERS, 'mcp-method': 'tools/list' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { _meta: MODERN_META } }),
  },
  {
    what: 'a 2026-07-28 call of an unknown tool',
    headers: { ...MODERN_HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'nope' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'nope', arguments: {}, _meta: MODERN_META } }),
  },
  {
    what: 'a 2025-era initialize',
    headers: JSON_HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  },
  {
    what: 'a 2025-era tools/call',
    headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'double', arguments: { value: 5 } } }),
  },
  {
    what: 'a 2025-03-26 batch within the limit',
    headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-03-26' },
    body: JSON.stringify([1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'double', arguments: { value: id } } }))),
  },
  {
    what: 'a batch over the limit',
    headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-03-26' },
    body: JSON.stringify(Array.from({ length: 9 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'double', arguments: { value: id } } }))),
  },
  { what: 'a body that is not JSON', headers: JSON_HEADERS, body: '{"jsonrpc": "2.0", ' },
  { what: 'an empty body', headers: JSON_HEADERS, body: '' },
  { what: 'a body that is not application/json', headers: { ...JSON_HEADERS, 'content-type': 'text/plain' }, body: '{}' },
  { what: 'a GET (no 2025 session streams when stateless)', method: 'GET', headers: { accept: 'text/event-stream' } },
];

async function listen(handler: ToolboxHandler): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => void handler.handleNode(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp/x` };
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

async function answer(response: Response): Promise<{ status: number; type: string | null; body: string }> {
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

describe('handleNode answers as the web-standard face does', () => {
  for (const probe of probes) {
    it(`the same answer for ${probe.what}`, async () => {
      const toolbox: Toolbox = { double };
      const web = createToolboxHandler(toolbox);
      const node = createToolboxHandler(toolbox);
      const { server, url } = await listen(node);
      try {
        const init = { method: probe.method ?? 'POST', headers: probe.headers, ...(probe.body !== undefined ? { body: probe.body } : {}) };
        const viaWeb = await answer(await web(new Request(url, init)));
        const viaNode = await answer(await fetch(url, init));
        assert.deepEqual(viaNode, viaWeb);
      } finally {
        await stop(server);
        await web.close();
        await node.close();
      }
    });
  }
});

describe('handleNode writes and aborts like a server should', () => {
  it('writes a JSON answer in one piece with its Content-Length', async () => {
    const handler = createToolboxHandler({ double });
    const { server, url } = await listen(handler);
    try {
      const response = await fetch(url, { method: 'POST', headers: { ...MODERN_HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'double' }, body: probes[0].body });
      const body = Buffer.from(await response.arrayBuffer());
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-length'), String(body.byteLength));
      assert.deepEqual(JSON.parse(body.toString()).result.structuredContent, { doubled: 8 });
    } finally {
      await stop(server);
      await handler.close();
    }
  });

  it('reads a header sent on several lines as one value joined by ", ", as a web Request does', async () => {
    const handler = createToolboxHandler({ double });
    const { server, url } = await listen(handler);
    try {
      const body = probes[4].body!; // the 2025-era call: its transport refuses an Accept without both types
      const answered = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const sent = httpRequest(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: ['application/json', 'text/event-stream'], 'mcp-protocol-version': '2025-06-18' },
        }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        sent.on('error', reject);
        sent.end(body);
      });
      assert.equal(answered.status, 200);
      assert.match(answered.text, /"doubled":10/);
    } finally {
      await stop(server);
      await handler.close();
    }
  });

  it("a client that goes away mid-call aborts the tool call's signal", async () => {
    let started!: () => void;
    const callStarted = new Promise<void>((resolve) => (started = resolve));
    let sawAbort!: () => void;
    const aborted = new Promise<void>((resolve) => (sawAbort = resolve));
    const wait: Tool = {
      name: 'wait',
      inputSchema: { type: 'object' },
      call: (_args, ctx) =>
        new Promise((resolve) => {
          ctx?.signal?.addEventListener('abort', () => {
            sawAbort();
            resolve({ content: [{ type: 'text', text: 'aborted' }] });
          });
          started();
        }),
    };
    const handler = createToolboxHandler({ wait });
    const { server, url } = await listen(handler);
    try {
      const client = new AbortController();
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', arguments: {}, _meta: MODERN_META } });
      const pending = fetch(url, { method: 'POST', headers: { ...MODERN_HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'wait' }, body, signal: client.signal });
      await callStarted;
      client.abort();
      await assert.rejects(pending);
      await aborted;
    } finally {
      await stop(server);
      await handler.close();
    }
  });
});

describe('handleNode and a client that leaves mid-body', () => {
  it('settles (no exchange left waiting for a body that will never end)', async () => {
    const handler = createToolboxHandler({ double });
    const settled: Promise<void>[] = [];
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    const server = createServer((req, res) => {
      settled.push(handler.handleNode(req, res));
      arrived();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const sent = httpRequest({ host: '127.0.0.1', port, path: '/mcp/x', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '1000' } });
      sent.on('error', () => undefined);
      sent.write('{"jsonrpc":');
      await requestArrived;
      sent.destroy();
      await Promise.all(settled);
      assert.equal(settled.length, 1);
    } finally {
      await stop(server);
      await handler.close();
    }
  });
});
