/**
 * A `tools/call` answer without `resultType` reads as complete (SEP-2322: clients assume `complete` when it is
 * absent; the conformance suite's sep-2322-default-result-type-complete), through the library's client — which,
 * left to the SDK, would refuse it from a 2026-07-28 server. The server here is plain HTTP on loopback speaking
 * the 2026-07-28 wire by hand, as the suite's mock does, since no SDK server can be made to leave the field out.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mcp } from '../../src/mcp/index.js';

let server: Server;
let url: string;
const calls: unknown[] = [];

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString('utf8'); });
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id?: number; method: string; params?: { name?: string } };
      if (id === undefined) { res.statusCode = 202; res.end(); return; }
      const answer = (result: unknown) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ jsonrpc: '2.0', id, result })); };
      if (method === 'server/discover') {
        answer({ resultType: 'complete', supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'bare', version: '1.0.0' } });
      } else if (method === 'tools/call') {
        calls.push(params);
        // Deliberately no resultType, for the first tool; the second answers as the revision asks.
        if (params?.name === 'bare') answer({ content: [{ type: 'text', text: 'no result type' }] });
        else answer({ resultType: 'complete', content: [{ type: 'text', text: 'typed' }] });
      } else {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

after(async () => {
  await mcp.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('a tools/call answer without resultType', () => {
  it('is the call\'s result, as complete, and is not sent again; an answer with one is read as before', async () => {
    const bare = await mcp.call({ url, tool: 'bare', arguments: {} });
    assert.deepEqual(bare.content, [{ type: 'text', text: 'no result type' }]);
    const typed = await mcp.call({ url, tool: 'typed', arguments: {} });
    assert.deepEqual(typed.content, [{ type: 'text', text: 'typed' }]);
    assert.deepEqual(calls.map((c) => (c as { name: string }).name), ['bare', 'typed'], 'one request each: nothing retried');
  });
});
