/**
 * Issue 27 point 3, `tasks/update` continuing an input request: a remote tool (the official v2 server SDK on
 * loopback) asks its client for input (form elicitation, MRTR) only once its call has become a task of the session's.
 * The task waits `input_required` and `tasks/get` shows what it asks; `tasks/update` with the client's answer
 * continues the call — the tool called again with the answer and its own state — and the task completes with the
 * tool's result. An update of a task that asks nothing changes nothing.
 *
 * Real parts only: the server in this process (SQLite), the upstream on loopback, the v2 SDK's transport as client
 * (helpers/tasks-client.ts). The held first round is released by the test; nothing sleeps a fixed time.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer, acceptedContent, inputRequired } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { eventually, until } from '../helpers/eventually.js';
import { startInProcess, type InProcess } from './helpers/harness.js';
import { TasksClient, type RpcAnswer } from './helpers/tasks-client.js';

const CEILING_MS = 30_000;
const confirmation = z.object({ ok: z.boolean() });
/** Each call the upstream got: the room, whether it carried answers, and the state it was given back. */
const received: { room: string; answered: boolean; state: unknown }[] = [];
const gates = new Map<string, () => void>();

function rooms(): McpServer {
  const server = new McpServer({ name: 'rooms', version: '1.0.0' });
  server.registerTool('book', { description: 'Books a room once a person confirms; the first round is slow.', inputSchema: z.object({ room: z.string() }) }, async ({ room }, ctx) => {
    const state = ctx.mcpReq.requestState();
    received.push({ room, answered: ctx.mcpReq.inputResponses !== undefined, state });
    if (acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirmation)?.ok !== true) {
      await new Promise<void>((resolve) => gates.set(room, resolve));
      return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: `Book room ${room}?`, requestedSchema: confirmation }) }, requestState: `rooms:${room}` });
    }
    if (state !== `rooms:${room}`) return { content: [{ type: 'text', text: `wrong state: ${String(state)}` }], isError: true };
    return { content: [{ type: 'text', text: `booked room ${room}` }] };
  });
  return server;
}

let s: InProcess;
let upstream: { url: string; stop(): Promise<void> };
const clients: TasksClient[] = [];

before(async () => {
  upstream = await serveMcpServer(rooms);
  s = await startInProcess();
});

after(async () => {
  for (const release of gates.values()) release();
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await s?.close();
  await upstream?.stop();
});

async function statusOf(client: TasksClient, taskId: string, wanted: string): Promise<RpcAnswer> {
  return eventually(`the task is ${wanted}`, () => client.get(taskId), (answer) => answer.error !== undefined || answer.result.status === wanted || ['completed', 'failed', 'cancelled'].includes(answer.result.status), { ms: CEILING_MS, everyMs: 50 });
}

describe('a task whose call asks its client for input', () => {
  it('waits input_required, and tasks/update with the answer continues the call to its result', async () => {
    const agent = await s.call('POST', '/v1/agents', { name: `input-${Date.now()}`, mcp_servers: [{ name: 'rooms', url: upstream.url }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    assert.equal(session.status, 201, JSON.stringify(session.body));
    const tools = await s.call('GET', `/v1/sessions/${session.body.id}/tools`);
    const tool: string = tools.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith('book'));
    const client = await TasksClient.open(session.body.mcp.capability_url, { capabilities: { elicitation: { form: {} } } });
    clients.push(client);

    const created = await client.callTool(tool, { room: '7' });
    assert.equal(created.error, undefined, JSON.stringify(created));
    assert.equal(created.result.resultType, 'task', JSON.stringify(created.result));
    const taskId: string = created.result.taskId;
    await until('the upstream holds the first round', () => gates.has('7'), CEILING_MS);
    gates.get('7')!();

    const asking = await statusOf(client, taskId, 'input_required');
    assert.equal(asking.result.status, 'input_required', JSON.stringify(asking));
    const request = Object.values(asking.result.inputRequests as Record<string, { method: string; params: { message: string } }>);
    assert.equal(request.length, 1, JSON.stringify(asking.result.inputRequests));
    assert.equal(request[0].method, 'elicitation/create');
    assert.match(request[0].params.message, /Book room 7\?/);
    const key = Object.keys(asking.result.inputRequests)[0];

    const updated = await client.update(taskId, { [key]: { action: 'accept', content: { ok: true } } });
    assert.equal(updated.error, undefined, JSON.stringify(updated));
    const done = await statusOf(client, taskId, 'completed');
    assert.equal(done.result.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result.result.content, [{ type: 'text', text: 'booked room 7' }]);
    assert.deepEqual(received.map((r) => [r.room, r.answered, r.state ?? null]), [['7', false, null], ['7', true, 'rooms:7']], 'the upstream got the answer with its own state back');

    // A second update, the task ended: acknowledged, nothing called again.
    assert.equal((await client.update(taskId, { [key]: { action: 'accept', content: { ok: true } } })).error, undefined);
    assert.equal(received.length, 2);
  });
});
