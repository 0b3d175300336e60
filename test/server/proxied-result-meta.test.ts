/**
 * Issue 13, point 2: a proxied result speaks for subako. A remote server's `tools/call` result carries its own
 * `_meta["io.modelcontextprotocol/serverInfo"]` (the v2 SDK stamps it on every 2026-era result) and may carry
 * other reserved keys; through a session's MCP URL the result's serverInfo is the session's — the one
 * `server/discover` answers — and no reserved key of the upstream survives. The tool's own `_meta` keys stay.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/server';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import * as z from 'zod';
import { startInProcess, type InProcess } from './helpers/harness.js';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const UPSTREAM = { name: 'upstream-server', version: '9.9.9' };

let s: InProcess;
let upstream: { url: string; stop(): Promise<void> };
let remoteUrl: string;

before(async () => {
  s = await startInProcess();
  upstream = await serveMcpServer(() => {
    const server = new McpServer(UPSTREAM);
    server.registerTool('ping', { description: 'Answers pong.', inputSchema: z.object({}) }, async () => ({
      content: [{ type: 'text', text: 'pong' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'upstream-task-1' }, 'example.com/trace': 'kept' },
    }));
    return server;
  });
  remoteUrl = upstream.url;
});
after(async () => {
  await s.close();
  await upstream.stop();
});

describe('a proxied result speaks for subako', () => {
  it("a remote tool's result through the session URL carries the session's serverInfo, the one server/discover answers", async () => {
    const agent = await s.call('POST', '/v1/agents', { name: `meta-${Date.now()}`, mcp_servers: [{ name: 'up', url: remoteUrl }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;

    // The upstream really does stamp its own identity: asked directly, its result names it.
    const direct = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await direct.connect(new StreamableHTTPClientTransport(new URL(remoteUrl)));
    const upstreamResult = await direct.callTool({ name: 'ping', arguments: {} });
    await direct.close();
    assert.deepEqual((upstreamResult._meta as Record<string, unknown>)[SERVER_INFO], UPSTREAM);

    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const discovered = client.getServerVersion();
      assert.ok(discovered && discovered.name.startsWith('subako'), JSON.stringify(discovered));
      const tools = await client.listTools();
      const name = tools.tools.map((t) => t.name).find((n) => n.endsWith('ping'))!;
      const result = await client.callTool({ name, arguments: {} });
      assert.equal((result.content as { text: string }[])[0].text, 'pong');
      const meta = result._meta as Record<string, unknown>;
      assert.deepEqual(meta[SERVER_INFO], { ...discovered }, 'the result names the server that answered discover');
      assert.doesNotMatch(JSON.stringify(result), /upstream-server|upstream-task-1/);
      assert.deepEqual(Object.keys(meta).filter((k) => k.startsWith('io.modelcontextprotocol/')), [SERVER_INFO]);
      assert.equal(meta['example.com/trace'], 'kept', "the tool's own _meta keys pass through");
    } finally {
      await client.close();
    }
  });
});
