/**
 * Issue 13, point 3, through a session's MCP URL: a `tools/call` with a progressToken (the official v2
 * client's `onprogress`) receives the progress of a function package's guest — the lines carrying the token
 * the guest was given, in order; another call's token and malformed params are ignored, and the call still
 * answers — and the progress of a remote v2 McpServer tool, relayed. A call without a token gets none.
 * Progress lines are stdout like any other: a guest that floods them hits stdout's 1 MiB limit and crashes,
 * and a flood under the limit gives the client one update per rising value.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/server';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import * as z from 'zod';
import { packBundle } from '../../src/package/index.js';
import { progressGuest } from '../helpers/wat-progress-guest.js';
import { startInProcess, tempDir, type InProcess } from './helpers/harness.js';

interface Update { progress: number; total?: number; message?: string }
const shape = (updates: Update[]) => updates.map(({ progress, total, message }) => ({ progress, total, ...(message !== undefined ? { message } : {}) }));

let s: InProcess;
let upstream: { url: string; stop(): Promise<void> };
let remoteUrl: string;

before(async () => {
  s = await startInProcess();
  const dir = tempDir('subako-progress-');
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'steps', description: 'Reports progress.', version: '1.0.0' }));
  writeFileSync(join(dir, 'module.wasm'), await progressGuest());
  const published = await s.call('POST', '/v1/packages', await packBundle(dir));
  assert.equal(published.status, 201, JSON.stringify(published.body));
  // ~110 bytes a line: 20,000 lines are twice stdout's 1 MiB, 2,000 a fifth of it.
  for (const [name, flood] of [['flood', 20_000], ['chatty', 2_000]] as const) {
    const floodDir = tempDir('subako-progress-');
    writeFileSync(join(floodDir, 'subako-package.json'), JSON.stringify({ abi: 1, name, description: 'Spams progress.', version: '1.0.0' }));
    writeFileSync(join(floodDir, 'module.wasm'), await progressGuest(flood));
    assert.equal((await s.call('POST', '/v1/packages', await packBundle(floodDir))).status, 201);
  }

  upstream = await serveMcpServer(() => {
    const server = new McpServer({ name: 'upstream', version: '1.0.0' });
    server.registerTool('slow', { description: 'Reports two steps.', inputSchema: z.object({}) }, async (_args, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        for (const step of [1, 2]) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: step, total: 2, message: `upstream ${step}` } });
        }
      }
      return { content: [{ type: 'text', text: 'slow done' }] };
    });
    return server;
  });
  remoteUrl = upstream.url;
});
after(async () => {
  await s.close();
  await upstream.stop();
});

async function sessionClient(): Promise<{ client: Client; tools: string[] }> {
  const agent = await s.call('POST', '/v1/agents', {
    name: `progress-${Date.now()}`, tools: [{ package: 'steps' }, { package: 'flood' }, { package: 'chatty' }], mcp_servers: [{ name: 'up', url: remoteUrl }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
  const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
  const { tools } = await client.listTools();
  return { client, tools: tools.map((t) => t.name) };
}

describe('progress through a session URL', () => {
  it("a function package guest's progress lines with its token reach the client in order; foreign and malformed ones do not", async () => {
    const { client, tools } = await sessionClient();
    try {
      const name = tools.find((n) => n.startsWith('steps') && n.endsWith('work'))!;
      assert.ok(name, JSON.stringify(tools));
      const updates: Update[] = [];
      const result = await client.callTool({ name, arguments: {} }, { onprogress: (p) => void updates.push(p) });
      assert.deepEqual(result.content, [{ type: 'text', text: 'ok' }]);
      assert.deepEqual(shape(updates), [{ progress: 1, total: 2 }, { progress: 2, total: 2 }]);
      // No token asked: the guest finds none, and the call answers the same.
      const plain = await client.callTool({ name, arguments: {} });
      assert.deepEqual(plain.content, [{ type: 'text', text: 'ok' }]);
    } finally {
      await client.close();
    }
  });

  it('progress lines count against stdout: a guest printing 2 MiB of them crashes on the limit; 200 KiB of repeats send one update', async () => {
    const { client, tools } = await sessionClient();
    try {
      const flood = tools.find((n) => n.startsWith('flood'))!;
      const chatty = tools.find((n) => n.startsWith('chatty'))!;
      assert.ok(flood && chatty, JSON.stringify(tools));
      const crashed = await client.callTool({ name: flood, arguments: {} }, { onprogress: () => {} });
      assert.equal(crashed.isError, true);
      assert.match(JSON.stringify(crashed.content), /stdout/);
      const updates: Update[] = [];
      const answered = await client.callTool({ name: chatty, arguments: {} }, { onprogress: (p) => void updates.push(p) });
      assert.deepEqual(answered.content, [{ type: 'text', text: 'ok' }]);
      // 2,000 repeats of progress 1 (only the first rises), then 1 again and 2: the client sees 1 and 2.
      assert.deepEqual(shape(updates), [{ progress: 1, total: 2 }, { progress: 2, total: 2 }]);
    } finally {
      await client.close();
    }
  });

  it("a remote v2 McpServer tool's progress is relayed", async () => {
    const { client, tools } = await sessionClient();
    try {
      const name = tools.find((n) => n.endsWith('slow'))!;
      assert.ok(name, JSON.stringify(tools));
      const updates: Update[] = [];
      const result = await client.callTool({ name, arguments: {} }, { onprogress: (p) => void updates.push(p) });
      assert.deepEqual(result.content, [{ type: 'text', text: 'slow done' }]);
      assert.deepEqual(shape(updates), [{ progress: 1, total: 2, message: 'upstream 1' }, { progress: 2, total: 2, message: 'upstream 2' }]);
    } finally {
      await client.close();
    }
  });
});
