/**
 * Finding 5 (batches): a JSON-RPC batch of 50 calls in one POST was accepted, each call started at once.
 *
 * A batch (an array body; only 2025-03-26 clients send one, later revisions removed batching) carries at
 * most 8 messages. A larger one is refused whole with a JSON-RPC error naming the limit, before anything in
 * it runs: through a real `subako serve` nothing is logged; through the handler's web-standard face the
 * tool is never called. A batch within the limit is served.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createToolboxHandler, DEFAULT_MAX_BATCH_MESSAGES } from '../../src/mcp/index.js';
import { defineTool } from '../../src/mcp/define-tool.js';
import { probeAgent, serve, type ProbeSession, type Served } from './helpers/serve.js';

const LEGACY_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' };
const calls = (n: number, name: string) =>
  JSON.stringify(Array.from({ length: n }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { n: id } } })));

describe('a JSON-RPC batch carries at most a few calls', () => {
  let server: Served;
  let session: ProbeSession;

  before(async () => {
    server = await serve(['--no-examples', '--workers', '2']);
    session = (await probeAgent(server, 1)).sessions[0];
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
  });

  it('the limit is 8', () => {
    assert.equal(DEFAULT_MAX_BATCH_MESSAGES, 8);
  });

  it('a batch of 50 calls is refused whole, naming the limit; none of its calls runs or is logged', async () => {
    const response = await fetch(session.mcp.capability_url, { method: 'POST', headers: LEGACY_HEADERS, body: calls(50, 'echo') });
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.error.code, -32600);
    assert.match(body.error.message, /a JSON-RPC batch may carry at most 8 messages; this one carries 50/);
    assert.equal((await server.call('GET', `/v1/sessions/${session.id}/calls`)).body.items.length, 0);
  });

  it('a batch of 8 is served: eight answers, eight calls logged', async () => {
    const response = await fetch(session.mcp.capability_url, { method: 'POST', headers: LEGACY_HEADERS, body: calls(8, 'echo') });
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.equal((text.match(/"result"/g) ?? []).length, 8);
    assert.equal((await server.call('GET', `/v1/sessions/${session.id}/calls`)).body.items.length, 8);
  });

  it('the web-standard face refuses the same batch before calling any tool', async () => {
    let called = 0;
    const count = defineTool({ name: 'count', inputSchema: { type: 'object' }, handler: () => ({ called: ++called }) });
    const handler = createToolboxHandler({ count });
    try {
      const refused = await handler(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: LEGACY_HEADERS, body: calls(9, 'count') }));
      assert.equal(refused.status, 400);
      assert.match((await refused.json()).error.message, /at most 8 messages; this one carries 9/);
      assert.equal(called, 0);
      const served = await handler(new Request('http://127.0.0.1/mcp', { method: 'POST', headers: LEGACY_HEADERS, body: calls(2, 'count') }));
      assert.equal(served.status, 200);
      await served.text();
      assert.equal(called, 2);
    } finally {
      await handler.close();
    }
  });
});
