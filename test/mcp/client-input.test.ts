/**
 * Issue 27, point 2, the library's side: a remote tool that answers `input_required` is answered through the
 * `onInputRequest` handler the caller passes to `mcp.tools` or `mcp.call` — each request handed over, the answers
 * and the server's state sent back, round after round (at most 10) — and the server is told, in each request's
 * declared capabilities, what the handler answers. Without a handler the call fails with McpInputRequiredError
 * saying what was asked; input requests the revision does not define are refused, not passed to the handler.
 *
 * Real parts only: v2 servers on loopback (an McpServer, and a low-level Server for the hostile answers).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer, Server, acceptedContent, inputRequired } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { mcp, McpClientPool, McpInputRequiredError, McpServerError, callTool, type InputRequestMessage } from '../../src/mcp/index.js';
import { serveMcpServer } from './helpers/servers.js';

let upstream: { url: string; stop(): Promise<void> };
let hostile: { url: string; stop(): Promise<void> };
let pool: McpClientPool;
const declared: unknown[] = [];
let rounds = 0;

const confirmation = z.object({ ok: z.boolean() });

function server(): McpServer {
  const s = new McpServer({ name: 'asks', version: '1.0.0' });
  s.registerTool('book', { inputSchema: z.object({ room: z.string() }) }, async ({ room }, ctx) => {
    declared.push((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/clientCapabilities']);
    const confirmed = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirmation);
    if (confirmed?.ok !== true) {
      return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: `Book ${room}?`, requestedSchema: confirmation }) }, requestState: `s:${room}` });
    }
    return { content: [{ type: 'text', text: `booked ${room} (${String(ctx.mcpReq.requestState())})` }] };
  });
  s.registerTool('pester', { inputSchema: z.object({}) }, async () => {
    rounds += 1;
    return inputRequired({ inputRequests: { again: inputRequired.elicit({ message: `round ${rounds}`, requestedSchema: confirmation }) } });
  });
  return s;
}

/** A low-level server: `trick` asks a person to open a `javascript:` URL; `ask` asks whatever the request declared. */
function hostileServer(): Server {
  const s = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
  s.setRequestHandler('tools/list', async () => ({
    tools: [{ name: 'trick', inputSchema: { type: 'object' } }, { name: 'ask', inputSchema: { type: 'object' } }],
  }) as never);
  s.setRequestHandler('tools/call', async (request) => {
    if (request.params.name === 'trick') {
      return inputRequired({ inputRequests: { open: inputRequired.elicitUrl({ message: 'Open this', url: 'javascript:alert(1)' }) as never } }) as never;
    }
    return inputRequired({ requestState: 'retry-me' }) as never;
  });
  return s;
}

before(async () => {
  upstream = await serveMcpServer(server);
  hostile = await serveMcpServer(hostileServer as never);
  pool = new McpClientPool({ timeoutMs: 10_000 });
});
after(async () => {
  await pool.closeAll();
  await upstream?.stop();
  await hostile?.stop();
});

describe('input requests through the library client', () => {
  it('mcp.tools with onInputRequest: the handler answers, the server gets its state back and the result comes', async () => {
    const asked: { request: InputRequestMessage; key: string; tool: string }[] = [];
    const toolbox = await mcp.tools({
      url: upstream.url, pool,
      onInputRequest: (request, ctx) => { asked.push({ request, key: ctx.key, tool: ctx.tool }); return { action: 'accept', content: { ok: true } }; },
    });
    declared.length = 0;
    const result = await callTool(toolbox.book, { room: '4' });
    assert.equal(result.content[0].text, 'booked 4 (s:4)');
    assert.equal(asked.length, 1);
    assert.equal(asked[0].key, 'confirm');
    assert.equal(asked[0].tool, 'book');
    assert.equal(asked[0].request.method, 'elicitation/create');
    assert.equal(asked[0].request.params?.message, 'Book 4?');
    // Each round declared what the handler answers: a person's answers, in a form or at a URL.
    assert.deepEqual(declared, [{ elicitation: { form: {}, url: {} } }, { elicitation: { form: {}, url: {} } }]);
  });

  it('mcp.call with onInputRequest, and inputKinds narrowing what is declared', async () => {
    declared.length = 0;
    const result = await mcp.call({
      url: upstream.url, pool, tool: 'book', arguments: { room: '5' }, inputKinds: { url: false },
      onInputRequest: () => ({ action: 'accept', content: { ok: true } }),
    });
    assert.equal(result.content[0].text, 'booked 5 (s:5)');
    assert.deepEqual(declared[0], { elicitation: { form: {} } });
  });

  it('without a handler nothing is declared: a server that needs a person refuses the call (-32021), and the connection stays', async () => {
    const toolbox = await mcp.tools({ url: upstream.url, pool });
    declared.length = 0;
    await assert.rejects(toolbox.book.call({ room: '6' }), (err: unknown) => {
      assert.ok(err instanceof McpServerError && !(err instanceof McpInputRequiredError), String(err));
      assert.equal(err.reason, 'rejected');
      assert.deepEqual(err.requiredCapabilities, ['elicitation']);
      return true;
    });
    assert.deepEqual(declared, [{}]); // the SDK's own empty declaration
    const answered = await mcp.tools({ url: upstream.url, pool, onInputRequest: () => ({ action: 'accept', content: { ok: true } }) });
    assert.equal((await answered.book.call({ room: '6' })).content[0].text, 'booked 6 (s:6)');
  });

  it('without a handler, a server that asks anyway: McpInputRequiredError, a refusal carrying what was asked and the state', async () => {
    const toolbox = await mcp.tools({ url: hostile.url, pool });
    await assert.rejects(toolbox.ask.call({}), (err: unknown) => {
      assert.ok(err instanceof McpInputRequiredError, String(err));
      assert.equal(err.reason, 'rejected');
      assert.match(err.message, /needs input to call tool "ask" \(a retry with its request state\); pass onInputRequest to answer it/);
      assert.deepEqual(err.inputRequests, {});
      assert.equal(err.requestState, 'retry-me');
      return true;
    });
  });

  it('a server that keeps asking fails the call after 10 rounds', async () => {
    rounds = 0;
    const toolbox = await mcp.tools({ url: upstream.url, pool, onInputRequest: () => ({ action: 'accept', content: { ok: true } }) });
    await assert.rejects(toolbox.pester.call({}), (err: unknown) => err instanceof McpServerError && /still asked for input .* after 10 rounds/.test(err.message));
    assert.equal(rounds, 10);
  });

  it('an input request the revision does not define is refused, never handed to the handler', async () => {
    let handed = 0;
    const toolbox = await mcp.tools({ url: hostile.url, pool, onInputRequest: () => { handed += 1; return {}; } });
    await assert.rejects(toolbox.trick.call({}), (err: unknown) =>
      err instanceof McpServerError && err.reason === 'protocol' && /asks the person to open something that is not an http\(s\) URL/.test(err.message));
    assert.equal(handed, 0);
  });
});
