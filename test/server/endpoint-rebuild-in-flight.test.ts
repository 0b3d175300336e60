/**
 * A session's MCP endpoint rebuilds its handler when the session's toolbox is rebuilt (a toolbox with remote
 * tools is rebuilt after a minute, so remote tool lists refresh): a call the old handler is serving at that
 * moment is still answered, since the old handler is closed only once its requests are done.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import * as z from 'zod';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { SteppedClock } from '../helpers/clock.js';
import { startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
let upstream: { url: string; stop(): Promise<void> };
const clock = new SteppedClock();
let arrived!: () => void;
let release!: () => void;
const arrival = new Promise<void>((resolve) => { arrived = resolve; });
const released = new Promise<void>((resolve) => { release = resolve; });

before(async () => {
  s = await startInProcess({ clock });
  upstream = await serveMcpServer(() => {
    const server = new McpServer({ name: 'upstream', version: '1.0.0' });
    server.registerTool('wait', { description: 'Answers once the test lets it.', inputSchema: z.object({}) }, async () => {
      arrived();
      await released;
      return { content: [{ type: 'text', text: 'waited' }] };
    });
    server.registerTool('quick', { description: 'Answers at once.', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'quick' }] }));
    return server;
  });
});
after(async () => {
  release();
  await s.close();
  await upstream.stop();
});

describe("a session endpoint's handler rebuilt during a call", () => {
  it('the call in flight on the old handler is answered; the next calls go to the new one', async () => {
    const agent = await s.call('POST', '/v1/agents', { name: 'rebuild', mcp_servers: [{ name: 'up', url: upstream.url }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      const wait = names.find((n) => n.endsWith('wait'))!;
      const quick = names.find((n) => n.endsWith('quick'))!;
      assert.ok(wait && quick, JSON.stringify(names));
      const waiting = client.callTool({ name: wait, arguments: {} });
      await arrival;
      clock.advance(61_000); // past the remote toolbox's minute: the next request rebuilds it, and the handler
      // A listing, not a call: a session runs one call at a time here (half the test server's two workers).
      assert.ok((await client.listTools()).tools.some((t) => t.name === quick));
      release();
      const answered = await waiting;
      assert.deepEqual(answered.content, [{ type: 'text', text: 'waited' }]);
      assert.notEqual(answered.isError, true);
      assert.deepEqual((await client.callTool({ name: quick, arguments: {} })).content, [{ type: 'text', text: 'quick' }]);
    } finally {
      await client.close();
    }
  });
});
