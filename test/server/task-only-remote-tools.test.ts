/**
 * Issue 13, point 10: a remote tool that runs only as a task (2025-11-25's `execution.taskSupport:
 * "required"`) is left out of a session's toolbox, and the session's tool list says why; the server's other
 * tools are served. subako's client calls tools without the tasks extension (the v2 client SDK has no task
 * calls), so such a tool, listed, would fail on every call.
 *
 * The upstream is the v1 SDK's McpServer: `execution` is deleted vocabulary in 2026-07-28 (the v2 SDK strips
 * it from a 2026 listing and its `registerTool` takes none), so task-only tools come from 2025-era servers,
 * declared with `experimental.tasks.registerToolTask`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
let remote: Server;
let remoteUrl: string;

function upstream(): McpServer {
  const taskStore = new InMemoryTaskStore();
  const server = new McpServer({ name: 'tasks-upstream', version: '1.0.0' }, { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore });
  server.registerTool('quick', { description: 'Answers at once.' }, async () => ({ content: [{ type: 'text', text: 'quick answer' }] }));
  server.experimental.tasks.registerToolTask('slow_job', { description: 'Runs only as a task.', execution: { taskSupport: 'required' } }, {
    createTask: async (extra) => ({ task: await extra.taskStore.createTask({ ttl: 60_000 }) }),
    getTask: async (extra) => (await extra.taskStore.getTask(extra.taskId))!,
    getTaskResult: async (extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
  });
  return server;
}

before(async () => {
  s = await startInProcess();
  remote = createServer((req, res) => {
    // Stateless: a server and transport per request, as a 2025-era server can be deployed.
    const server = upstream();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => { void transport.close(); void server.close(); });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/mcp`;
});
after(async () => {
  await s.close();
  remote.closeAllConnections();
  remote.close();
});

describe('task-only remote tools', () => {
  it('the upstream really lists a task-only tool beside a plain one', async () => {
    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(remoteUrl)));
    try {
      const listed = (await client.listTools()).tools as { name: string; execution?: { taskSupport?: string } }[];
      assert.deepEqual(listed.map((t) => [t.name, t.execution?.taskSupport]).sort(), [['quick', 'forbidden'], ['slow_job', 'required']]);
    } finally {
      await client.close();
    }
  });

  it('a session serves only the plain tool; its tool list says why the other was left out', async () => {
    const agent = await s.call('POST', '/v1/agents', { name: `tasks-${Date.now()}`, mcp_servers: [{ name: 'jobs', url: remoteUrl }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;

    const list = await s.call('GET', `/v1/sessions/${session.id}/tools`);
    assert.equal(list.status, 200);
    const names = list.body.items.map((t: { name: string }) => t.name);
    assert.ok(names.some((n: string) => n.endsWith('quick')), JSON.stringify(names));
    assert.ok(!names.some((n: string) => n.includes('slow_job')), JSON.stringify(names));
    assert.equal(list.body.warnings.length, 1, JSON.stringify(list.body.warnings));
    assert.match(list.body.warnings[0], /slow_job of remote MCP server jobs is left out: it runs only as a task \(execution\.taskSupport "required"\)/);

    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    try {
      const served = (await client.listTools()).tools.map((t) => t.name);
      assert.deepEqual(served, names);
      const quick = served.find((n) => n.endsWith('quick'))!;
      const result = await client.callTool({ name: quick, arguments: {} });
      assert.equal((result.content as { text: string }[])[0].text, 'quick answer');
    } finally {
      await client.close();
    }
  });
});
