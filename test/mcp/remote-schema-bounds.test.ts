/**
 * Whose schema decides which engine checks it: a remote tool's (the server's) runs on the bounded engine, a
 * defineTool's (ours) on Ajv's ordinary one. Against a real server of the official v2 SDK on loopback.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { mcp, callTool, defineTool, CallError, McpClientPool, McpServerError } from '../../src/mcp/index.js';

/** A password rule written with lookahead: fine in our own schemas, not runnable in linear time. */
const STRONG = { type: 'object', properties: { password: { type: 'string', pattern: '^(?=.*\\d).{8,}$' } }, required: ['password'] };
const DISTINCT = { type: 'object', properties: { xs: { type: 'array', uniqueItems: true } }, required: ['xs'] };

let remote: HttpServer;
let url: string;
let calls = 0;
const pool = new McpClientPool();

before(async () => {
  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'schemas', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({
      tools: [
        { name: 'strong', inputSchema: STRONG },
        { name: 'distinct', inputSchema: DISTINCT },
      ],
    }) as never);
    server.setRequestHandler('tools/call', async () => {
      calls += 1;
      return { content: [{ type: 'text', text: 'done' }] } as never;
    });
    return server;
  });
  const node = toNodeHandler(handler);
  remote = createServer((req, res) => { void node(req, res); });
  await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/mcp`;
});

after(async () => {
  await pool.closeAll();
  await new Promise<void>((resolve) => remote.close(() => resolve()));
});

describe('a remote tool\'s schema is checked on the bounded engine, ours on the ordinary one', () => {
  it('a remote pattern with lookahead makes the tool\'s calls fail naming the pattern; nothing is sent', async () => {
    const toolbox = await mcp.tools({ url, pool });
    const before = calls;
    await assert.rejects(toolbox.strong.call({ password: 'abcdefg1' }), (err: unknown) => {
      assert.ok(err instanceof McpServerError);
      assert.equal(err.reason, 'protocol');
      assert.match(err.message, /the input schema of tool "strong" is not usable: .*pattern "\^\(\?=\.\*\\\\d\)\.\{8,\}\$" uses lookahead/);
      return true;
    });
    assert.equal(calls, before);
  });

  it('the same schema in a defineTool is ours: checked by Ajv\'s ordinary engine, lookahead and all', async () => {
    const tool = defineTool({ name: 'strong', inputSchema: STRONG, handler: () => 'ok' });
    assert.deepEqual((await tool.call({ password: 'abcdefg1' })).content, [{ type: 'text', text: 'ok' }]);
    await assert.rejects(tool.call({ password: 'abcdefgh' }), { code: 'call_error', rule: 'pattern' });
  });

  it('uniqueItems over objects: the bounded check finds the duplicate (the pair Ajv names), and nothing is sent', async () => {
    const toolbox = await mcp.tools({ url, pool });
    const before = calls;
    await assert.rejects(callTool(toolbox.distinct, { xs: [{ a: 1, b: 2 }, { a: 2 }, { b: 2, a: 1 }] }), (err: unknown) => {
      assert.ok(err instanceof CallError);
      assert.equal(err.rule, 'uniqueItems');
      assert.match(err.message, /argument \/xs must NOT have duplicate items \(items ## 0 and 2 are identical\) \(rule: uniqueItems\)/);
      return true;
    });
    assert.equal(calls, before);
    await callTool(toolbox.distinct, { xs: [{ a: 1 }, { a: 2 }] });
    assert.equal(calls, before + 1);
  });
});
