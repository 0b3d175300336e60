/**
 * One tool pipeline (issue 12, point 1): a session's tools are built once, wrapped once by the call log, and
 * every entry point calls them. Argument checking is the source's: a function package gets its arguments as
 * they are (the guest validates), a remote MCP tool refuses a mismatch before any I/O. Over REST and over the
 * session's MCP endpoint each source behaves the same, and each call is in the call log exactly once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { defineTool } from '../../src/mcp/define-tool.js';
import { serveToolbox } from '../mcp/helpers/servers.js';
import { startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
let remote: { url: string; stop(): Promise<void> };
let remoteUrl: string;
/** Every tools/call the remote server's `add` received: the refused calls must never reach it. */
let remoteAddCalls = 0;

const textOf = (result: { content: { text?: string }[] }): string => result.content.map((b) => b.text ?? '').join('');

before(async () => {
  s = await startInProcess({ limits: { callTimeoutMs: 10_000 } });
  const toolbox = {
    add: defineTool({
      name: 'add', inputSchema: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] },
      handler: (args: { x: number; y: number }) => { remoteAddCalls += 1; return { sum: args.x + args.y }; },
    }),
  };
  remote = await serveToolbox(toolbox);
  remoteUrl = remote.url;
});
after(async () => {
  await s.close();
  await remote.stop();
});

async function sessionWithBoth(): Promise<{ id: string; mcpUrl: string }> {
  const agent = await s.call('POST', '/v1/agents', { name: `both-${Date.now()}`, tools: [{ package: 'greet' }], mcp_servers: [{ name: 'remote', url: remoteUrl }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
  return { id: session.id, mcpUrl: session.mcp.capability_url };
}

async function overMcp(url: string, name: string, args: Record<string, unknown>) {
  const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    return (await client.callTool({ name, arguments: args })) as { content: { text?: string }[]; isError?: boolean };
  } finally {
    await client.close();
  }
}

describe('one pipeline: the same bad-argument call over REST and over MCP', () => {
  it('a function package is not checked: its guest answers, a tool_error, the same from both; each call logged once', async () => {
    const session = await sessionWithBoth();
    const rest = await s.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 42 } });
    assert.equal(rest.status, 200, JSON.stringify(rest.body));
    assert.equal(rest.body.call.outcome, 'tool_error');
    assert.equal(rest.body.result.isError, true);
    const mcp = await overMcp(session.mcpUrl, 'greet', { name: 42 });
    assert.equal(mcp.isError, true);
    assert.equal(textOf(mcp), textOf(rest.body.result));
    assert.match(textOf(mcp), /argument "name" must be a string, not an integer/); // the guest's own words: it ran

    const log = (await s.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
    assert.deepEqual(log.map((c: { via: string; tool: string; outcome: string }) => [c.via, c.tool, c.outcome]), [
      ['api', 'greet', 'tool_error'],
      ['mcp', 'greet', 'tool_error'],
    ]);
  });

  it('a remote MCP tool refuses a mismatch before any I/O, with the same error from both; each call logged once', async () => {
    const session = await sessionWithBoth();
    const before = remoteAddCalls;
    const rest = await s.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'add', arguments: { x: 'one', y: 2 } });
    assert.equal(rest.status, 200, JSON.stringify(rest.body));
    assert.equal(rest.body.call.outcome, 'invalid_arguments');
    assert.equal(rest.body.result.isError, true);
    assert.match(textOf(rest.body.result), /argument \/x must be number \(rule: type\)/);
    const mcp = await overMcp(session.mcpUrl, 'add', { x: 'one', y: 2 });
    assert.equal(mcp.isError, true);
    assert.equal(textOf(mcp), textOf(rest.body.result));
    assert.equal(remoteAddCalls, before, 'a refused call reached the remote server');

    // A good call goes through, so the refusals above were the check, not a dead server.
    const good = await s.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'add', arguments: { x: 1, y: 2 } });
    assert.deepEqual(good.body.result.structuredContent, { sum: 3 });
    assert.equal(remoteAddCalls, before + 1);

    const log = (await s.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
    assert.deepEqual(log.map((c: { via: string; tool: string; outcome: string }) => [c.via, c.tool, c.outcome]), [
      ['api', 'add', 'invalid_arguments'],
      ['mcp', 'add', 'invalid_arguments'],
      ['api', 'add', 'ok'],
    ]);
  });

  it('a session\'s tools are built once: every call and entry point uses the same logged tools', async () => {
    const session = await sessionWithBoth();
    const record = await s.server.platform.sessions.get(session.id);
    const first = await s.server.platform.toolboxes.forSession(record);
    await s.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'Ada' } });
    await overMcp(session.mcpUrl, 'greet', { name: 'Grace' });
    const again = await s.server.platform.toolboxes.forSession(record);
    assert.equal(again, first);
    assert.equal(again.tools.greet, first.tools.greet);
    assert.equal(first.entry('mcp'), first.entry('mcp'));
  });

  it('the library calls the same tools: a logged call made through `library`, rejecting as Tool.call does', async () => {
    const session = await sessionWithBoth();
    const box = await s.server.platform.toolboxes.forSession(await s.server.platform.sessions.get(session.id));
    const ok = await box.tools.greet.call({ name: 'Ada' });
    assert.match(textOf(ok as never), /Hello, Ada!/);
    await assert.rejects(box.tools.add.call({ x: 'one', y: 2 }), { code: 'call_error' });
    const log = (await s.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
    assert.deepEqual(log.map((c: { via: string; outcome: string }) => [c.via, c.outcome]), [['library', 'ok'], ['library', 'invalid_arguments']]);
  });
});
