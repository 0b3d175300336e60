/**
 * Issue 27 point 3, "remote servers' own tasks pass through": a session's remote server that answers a call with a
 * task of its own (the io.modelcontextprotocol/tasks extension). A client that declared the extension is given a task
 * of the session's standing for it — its own id, bound to the session — and its tasks/get, tasks/update and
 * tasks/cancel reach the server; once the server's task ended, its end is the session's to answer. A client that did
 * not declare it gets the call's result, subako polling the server's task to its end. A session holds at most
 * `sessionTaskLimit` tasks not yet ended: the next call is refused -32000, naming the cap and its setting.
 *
 * Real parts only: the server in this process (SQLite), the upstream on the official v2 server SDK on loopback
 * (../mcp/helpers/task-upstream.ts), the v2 SDK's transport as client (helpers/tasks-client.ts). Nothing sleeps.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startServer } from '../../src/app.js';
import type { SubakoServer } from '../../src/server/index.js';
import { until } from '../helpers/eventually.js';
import { startTaskUpstream, type TaskUpstream } from '../mcp/helpers/task-upstream.js';
import { makeApi, tempDir, TEST_KEY, type Api } from './helpers/harness.js';
import { TasksClient, type RpcAnswer } from './helpers/tasks-client.js';

const TASK_LIMIT = 2;

let upstream: TaskUpstream;
let server: SubakoServer;
let api: Api;
const root = tempDir('subako-tasks-upstream-');
const clients: TasksClient[] = [];

interface Session { id: string; mcp: { capability_url: string } }

async function newSession(): Promise<{ session: Session; tool: string }> {
  const agent = await api.call('POST', '/v1/agents', { name: `up-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`, mcp_servers: [{ name: 'jobs', url: upstream.url }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = await api.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  const tools = await api.call('GET', `/v1/sessions/${session.body.id}/tools`);
  const tool = tools.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith('job'));
  assert.ok(tool, JSON.stringify(tools.body));
  return { session: session.body, tool };
}

async function open(session: Session, declareTasks = true): Promise<TasksClient> {
  const client = await TasksClient.open(session.mcp.capability_url, { declareTasks });
  clients.push(client);
  return client;
}

function taskOf(answer: RpcAnswer): string {
  assert.equal(answer.error, undefined, JSON.stringify(answer));
  assert.equal(answer.result.resultType, 'task', JSON.stringify(answer.result));
  return answer.result.taskId;
}

function gets(taskId: string): number {
  return upstream.requests.filter((r) => r === `get ${taskId}`).length;
}

before(async () => {
  upstream = await startTaskUpstream({ pollIntervalMs: 20 });
  const started = await startServer({
    dataDir: root, port: 0, workers: 2, examplesDir: null, env: { ...process.env, ...TEST_KEY }, tasks: { sessionTaskLimit: TASK_LIMIT },
  });
  server = started.server;
  api = makeApi(server.url, started.firstStart!.apiKey);
});

after(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await server?.close(5_000);
  await upstream?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('a remote server\'s own task through a session', () => {
  it('passes through to a client that declared tasks: its get, update and cancel reach the server, its end is kept', async () => {
    const { session, tool } = await newSession();
    const client = await open(session);
    const ours = taskOf(await client.callTool(tool, { label: 's-1' }));
    const theirs = upstream.taskOf('s-1');
    assert.notEqual(ours, theirs, 'the client holds the session\'s handle, not the server\'s id');
    assert.ok(ours.length >= 32, 'the session\'s handle is unguessable');
    assert.deepEqual(upstream.calls.at(-1), { label: 's-1', declaredTasks: true });

    const working = await client.get(ours);
    assert.equal(working.result.status, 'working', JSON.stringify(working));
    assert.equal(working.result.taskId, ours);
    assert.equal(gets(theirs), 1, 'tasks/get went on to the server');

    upstream.askInput('s-1');
    const asking = await client.get(ours);
    assert.equal(asking.result.status, 'input_required', JSON.stringify(asking));
    assert.equal(asking.result.inputRequests.confirm.params.message, 'Go on with s-1?');
    const updated = await client.update(ours, { confirm: { action: 'accept', content: { ok: true } } });
    assert.equal(updated.error, undefined, JSON.stringify(updated));
    assert.ok(upstream.requests.includes(`update ${theirs} {"confirm":{"action":"accept","content":{"ok":true}}}`), upstream.requests.join('\n'));

    upstream.complete('s-1', 'done s-1');
    const done = await client.get(ours);
    assert.equal(done.result.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result.result.content, [{ type: 'text', text: 'done s-1' }]);
    const asked = gets(theirs);
    const again = await client.get(ours);
    assert.deepEqual(again.result.result.content, done.result.result.content);
    assert.equal(gets(theirs), asked, 'an ended task is answered from the store, not asked again');

    // Another session's client cannot read it: the same -32602 as a made-up id.
    const other = await open((await newSession()).session);
    assert.equal((await other.get(ours)).error?.code, -32602);
  });

  it('cancelled through the session, is cancelled on the server', async () => {
    const { session, tool } = await newSession();
    const client = await open(session);
    const ours = taskOf(await client.callTool(tool, { label: 's-2' }));
    const cancelled = await client.cancel(ours);
    assert.equal(cancelled.error, undefined, JSON.stringify(cancelled));
    assert.ok(upstream.requests.includes(`cancel ${upstream.taskOf('s-2')}`));
    assert.equal(upstream.status('s-2'), 'cancelled');
    assert.equal((await client.get(ours)).result.status, 'cancelled');
  });

  it('is polled to its end for a client that did not declare tasks, which gets the result', async () => {
    const { session, tool } = await newSession();
    const client = await open(session, false);
    const answer = client.callTool(tool, { label: 's-3' });
    await until('subako polls the server\'s task', () => upstream.requests.some((r) => r.startsWith('get ') && r.endsWith('-s-3')));
    assert.deepEqual(upstream.calls.at(-1), { label: 's-3', declaredTasks: true }, 'subako declared tasks to the server, for itself');
    upstream.complete('s-3', 'done s-3');
    const result = await answer;
    assert.equal(result.error, undefined, JSON.stringify(result));
    assert.equal(result.result.resultType, 'complete');
    assert.deepEqual(result.result.content, [{ type: 'text', text: 'done s-3' }]);
  });

  it(`a session holds at most ${TASK_LIMIT} tasks not yet ended: the next call is refused, naming the cap and its setting`, async () => {
    const { session, tool } = await newSession();
    const client = await open(session);
    const first = taskOf(await client.callTool(tool, { label: 'cap-1' }));
    taskOf(await client.callTool(tool, { label: 'cap-2' }));
    const callsBefore = upstream.calls.length;
    const refused = await client.callTool(tool, { label: 'cap-3' });
    assert.equal(refused.error?.code, -32000, JSON.stringify(refused));
    assert.match(refused.error!.message, /holds 2 tasks not yet ended, the most it may \(2, the server setting sessionTaskLimit: --session-task-limit, \$SUBAKO_SESSION_TASK_LIMIT/);
    assert.equal(upstream.calls.length, callsBefore, 'the refused call did not reach the server');
    // One ended, a call is taken again.
    await client.cancel(first);
    taskOf(await client.callTool(tool, { label: 'cap-4' }));
  });
});
