/**
 * Issue 27 point 3, tasks for long calls (the io.modelcontextprotocol/tasks extension, SEP-2663) through a session:
 * two replicas on one PostgreSQL database and one NATS (one sealing key, shared volumes, a worker running the
 * function calls) behind an imagined load balancer. A
 * client that declared the extension is given a task for a call that runs long — a remote tool's (a v2 McpServer
 * upstream) and a function package's (the `hold` guest) — polls it through the session's other URL form and through
 * the other replica until it completes with its result, and cancels one through the other replica (the upstream's
 * request is cancelled). Another session's token cannot read or cancel it; a client that did not declare the
 * extension gets the plain result, and is refused the tasks/ methods (-32021).
 *
 * Real parts only: the platform servers in this process on the machine's PostgreSQL (a database of this run's own)
 * and NATS (subjects and buckets of this run's own), a `subako worker` process, the upstream on loopback, the official v2 SDK as client (its Client where it can, its transport where the Client
 * has no task runtime: helpers/tasks-client.ts). Nothing waits a fixed time: a held call is released by the test.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import * as z from 'zod';
import { startServer } from '../../src/app.js';
import { Secret } from '../../src/common/index.js';
import { packBundle } from '../../src/package/index.js';
import type { SubakoServer } from '../../src/server/index.js';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { eventually, until } from '../helpers/eventually.js';
import { fixture, REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, removeBuckets, runName, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { makeApi, tempDir, TEST_KEY, type Api } from './helpers/harness.js';
import { TASKS, TasksClient, type RpcAnswer } from './helpers/tasks-client.js';

const CEILING_MS = 30_000;

/** The upstream's `slow` calls: started, released by the test, and whether the upstream saw one cancelled. */
const started = new Set<string>();
const aborted = new Set<string>();
const gates = new Map<string, () => void>();
const release = (label: string) => gates.get(label)?.();

function upstreamServer(): McpServer {
  const server = new McpServer({ name: 'jobs', version: '1.0.0' });
  server.registerTool('slow', { description: 'Runs until the test releases it.', inputSchema: z.object({ label: z.string() }) }, async ({ label }, ctx) => {
    started.add(label);
    const signal = (ctx as { mcpReq: { signal: AbortSignal } }).mcpReq.signal;
    await new Promise<void>((resolve) => {
      gates.set(label, resolve);
      signal.addEventListener('abort', () => { aborted.add(label); resolve(); }, { once: true });
    });
    return { content: [{ type: 'text', text: `done ${label}` }] };
  });
  return server;
}

let upstream: { url: string; stop(): Promise<void> };
let db: TestDatabase;
const servers: SubakoServer[] = [];
const clients: { close(): Promise<void> }[] = [];
const root = tempDir('subako-tasks-');
const prefix = runName('tasks');
let worker: ChildWorker | undefined;
const volumesDir = join(root, 'volumes');
let a: Api;
let b: Api;

interface Session { id: string; mcp: { capability_url: string; url: string; authorization: string } }
interface Agent { id: string; session: Session; data: string }

/** An agent with the upstream and the hold package (its /volume/data), and a session of it started on A. */
async function newAgent(): Promise<Agent> {
  const agent = await a.call('POST', '/v1/agents', {
    name: `tasks-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`,
    mcp_servers: [{ name: 'jobs', url: upstream.url }], tools: [{ package: 'hold', data: true }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  return { id: agent.body.id, session: await newSession(agent.body.id), data: join(volumesDir, 'agents', agent.body.id, 'data') };
}

async function newSession(agentId: string): Promise<Session> {
  const session = await a.call('POST', `/v1/agents/${agentId}/sessions`, {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return session.body;
}

/** The session's endpoint on `api`'s replica: by its capability URL, or by its API URL and bearer token. */
async function open(api: Api, session: Session, form: 'capability' | 'bearer', declareTasks = true): Promise<TasksClient> {
  const path = form === 'capability' ? new URL(session.mcp.capability_url).pathname : new URL(session.mcp.url).pathname;
  const client = await TasksClient.open(`${api.url}${path}`, {
    declareTasks, ...(form === 'bearer' ? { headers: { authorization: session.mcp.authorization } } : {}),
  });
  clients.push(client);
  return client;
}

async function toolNamed(session: Session, suffix: string): Promise<string> {
  const tools = await a.call('GET', `/v1/sessions/${session.id}/tools`);
  const name = tools.body.items.map((t: { name: string }) => t.name).find((n: string) => n === suffix || n.endsWith(`${suffix}`));
  assert.ok(name, JSON.stringify(tools.body));
  return name;
}

/** Asserts a CreateTaskResult (resultType "task", a working task with its times) and answers its id. */
function taskOf(answer: RpcAnswer): string {
  assert.equal(answer.error, undefined, JSON.stringify(answer));
  const task = answer.result;
  assert.equal(task.resultType, 'task', JSON.stringify(task));
  assert.equal(task.status, 'working');
  assert.equal(typeof task.taskId, 'string');
  assert.ok(task.taskId.length >= 32, 'a task id is unguessable');
  assert.ok(Number.isInteger(task.ttlMs) && task.ttlMs > 0, JSON.stringify(task));
  assert.ok(Number.isInteger(task.pollIntervalMs) && task.pollIntervalMs > 0, JSON.stringify(task));
  assert.ok(!Number.isNaN(Date.parse(task.createdAt)) && !Number.isNaN(Date.parse(task.lastUpdatedAt)), JSON.stringify(task));
  assert.equal(task.content, undefined, 'a CreateTaskResult is not a CallToolResult');
  return task.taskId;
}

/** Polls `tasks/get` until the task is terminal, honouring its pollIntervalMs; answers the last result. */
async function terminal(client: TasksClient, taskId: string): Promise<any> {
  for (const deadline = Date.now() + CEILING_MS; ;) {
    const answer = await client.get(taskId);
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    assert.equal(answer.result.resultType, 'complete');
    if (['completed', 'failed', 'cancelled'].includes(answer.result.status)) return answer.result;
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${answer.result.status}`);
    await new Promise((r) => setTimeout(r, Math.min(answer.result.pollIntervalMs, 200)));
  }
}

before(async () => {
  upstream = await serveMcpServer(upstreamServer);
  db = await createTestDatabase();
  let apiKey: string | undefined;
  for (const name of ['a', 'b']) {
    const { server, firstStart } = await startServer({
      dataDir: join(root, `replica-${name}`), port: 0, workers: 2, examplesDir: null, env: { ...process.env, ...TEST_KEY },
      database: new Secret(db.url), volumesDir, nats: { url: SHARED_NATS_URL, prefix },
    });
    servers.push(server);
    apiKey ??= firstStart!.apiKey;
  }
  a = makeApi(servers[0].url, apiKey!);
  b = makeApi(servers[1].url, apiKey!);
  worker = await spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir, pool: 2, env: TEST_KEY, repoRoot: REPO_ROOT });
  for (const api of [a, b]) {
    await eventually('the replica hears the worker', async () => (await (await fetch(`${api.url}/v1/health`)).json()).fleet?.slots, (slots) => slots === 2, { ms: CEILING_MS, everyMs: 50 });
  }
  const dir = tempDir('subako-hold-');
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'hold', description: 'Holds its worker until released.', version: '1.0.0' }));
  cpSync(fixture('c', 'mcp', 'hold.wasm'), join(dir, 'module.wasm'));
  const uploaded = await a.call('POST', '/v1/packages', await packBundle(dir));
  assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
});

after(async () => {
  for (const label of gates.keys()) release(label);
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const server of servers.splice(0)) await server.close(5_000);
  await worker?.stop();
  await removeBuckets(prefix);
  await db?.drop();
  await upstream?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('a long call of a client that declared tasks becomes a task, durable across URL forms and replicas', () => {
  it('server/discover announces the extension', async () => {
    const { session } = await newAgent();
    const client = new Client({ name: 'tasks-test', version: '1.0.0' }, { versionNegotiation: { pin: '2026-07-28' } as never });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    clients.push(client);
    assert.deepEqual(client.getServerCapabilities()?.extensions?.[TASKS], {});
  });

  it('a remote call: a task on A by the capability URL, polled on B by the bearer URL and on A, completed with the upstream\'s result', async () => {
    const { session } = await newAgent();
    const tool = await toolNamed(session, 'slow');
    const onA = await open(a, session, 'capability');
    const taskId = taskOf(await onA.callTool(tool, { label: 'remote-1' }));
    assert.ok(started.has('remote-1'));

    const onB = await open(b, session, 'bearer');
    const working = await onB.get(taskId);
    assert.equal(working.error, undefined, JSON.stringify(working));
    assert.equal(working.result.resultType, 'complete');
    assert.equal(working.result.taskId, taskId);
    assert.equal(working.result.status, 'working');
    assert.equal(working.result.result, undefined);

    release('remote-1');
    const done = await terminal(onB, taskId);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.result.content, [{ type: 'text', text: 'done remote-1' }]);
    // The same, read again on A through the other URL form: the store holds it, not a replica's memory.
    const again = await (await open(a, session, 'bearer')).get(taskId);
    assert.deepEqual(again.result.result.content, done.result.content);
    assert.ok(Date.parse(again.result.lastUpdatedAt) >= Date.parse(again.result.createdAt));
    // tasks/update on a task that asks nothing is acknowledged (and changes nothing).
    const update = await onB.update(taskId, { anything: { action: 'accept' } });
    assert.deepEqual(update.result, { resultType: 'complete', _meta: update.result._meta });
  });

  it('a function package call (the hold guest): a task on A, completed with the guest\'s answer, read on B', async () => {
    const { session, data } = await newAgent();
    const onA = await open(a, session, 'bearer');
    const taskId = taskOf(await onA.callTool('hold', { id: 'fn-1' }));
    await until('the guest started', () => { try { return readdirSync(join(data, 'started')).includes('fn-1'); } catch { return false; } }, CEILING_MS);
    const onB = await open(b, session, 'capability');
    assert.equal((await onB.get(taskId)).result.status, 'working');
    mkdirSync(join(data, 'release'), { recursive: true });
    writeFileSync(join(data, 'release', 'fn-1'), '');
    const done = await terminal(onB, taskId);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(JSON.parse(done.result.content[0].text).id, 'fn-1');
  });

  it('cancelled through B while its call runs on A: the task is cancelled and the upstream\'s request is cancelled', async () => {
    const { session } = await newAgent();
    const tool = await toolNamed(session, 'slow');
    const onA = await open(a, session, 'capability');
    const taskId = taskOf(await onA.callTool(tool, { label: 'cancel-1' }));
    const onB = await open(b, session, 'bearer');
    const cancelled = await onB.cancel(taskId);
    assert.equal(cancelled.error, undefined, JSON.stringify(cancelled));
    assert.equal(cancelled.result.resultType, 'complete');
    const seen = await onA.get(taskId);
    assert.equal(seen.result.status, 'cancelled', JSON.stringify(seen));
    await until('the upstream saw its request cancelled', () => aborted.has('cancel-1'), CEILING_MS);
    // Cancelled stays cancelled; a second cancel is acknowledged.
    assert.equal((await onB.cancel(taskId)).error, undefined);
    assert.equal((await terminal(onB, taskId)).status, 'cancelled');
    const calls = await eventually('the call log ends the call', async () => (await a.call('GET', `/v1/sessions/${session.id}/calls`)).body.items,
      (items: { outcome: string }[]) => items.length === 1 && items[0].outcome !== 'running', { ms: CEILING_MS });
    assert.equal(calls[0].outcome, 'cancelled');
  });

  it('another session\'s token cannot read or cancel it: -32602 as for an id that does not exist', async () => {
    const agent = await newAgent();
    const tool = await toolNamed(agent.session, 'slow');
    const owner = await open(a, agent.session, 'capability');
    const taskId = taskOf(await owner.callTool(tool, { label: 'private-1' }));
    const other = await newSession(agent.id);
    for (const [api, form] of [[a, 'capability'], [b, 'bearer']] as const) {
      const intruder = await open(api, other, form);
      for (const answer of [await intruder.get(taskId), await intruder.cancel(taskId), await intruder.update(taskId, {})]) {
        assert.equal(answer.error?.code, -32602, JSON.stringify(answer));
        assert.match(answer.error!.message, /Task not found/);
      }
      const madeUp = await intruder.get(`${taskId.slice(0, -4)}AAAA`);
      assert.equal(madeUp.error?.code, -32602);
      assert.equal(madeUp.error?.message, (await intruder.get(taskId)).error?.message, 'no oracle: the same answer');
    }
    assert.equal((await owner.get(taskId)).result.status, 'working', 'the other session\'s cancel changed nothing');
    release('private-1');
    assert.equal((await terminal(owner, taskId)).status, 'completed');
  });
});

describe('a client that did not declare tasks', () => {
  it('gets the plain result of a call that ran past the time a declaring client got a task in, and is refused tasks/ methods (-32021)', async () => {
    const { session } = await newAgent();
    const tool = await toolNamed(session, 'slow');
    // The official SDK client, declaring nothing: it cannot take a task, and is never given one.
    const plain = new Client({ name: 'plain', version: '1.0.0' }, { versionNegotiation: { pin: '2026-07-28' } as never });
    await plain.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    clients.push(plain);
    const pending = plain.callTool({ name: tool, arguments: { label: 'plain-1' } });
    await until('the plain call started upstream', () => started.has('plain-1'), CEILING_MS);
    // A declaring client's call, started after it, became a task: the plain call has run at least as long.
    const declaring = await open(a, session, 'capability');
    const taskId = taskOf(await declaring.callTool(tool, { label: 'plain-2' }));
    release('plain-1');
    const result = await pending;
    assert.deepEqual(result.content, [{ type: 'text', text: 'done plain-1' }]);
    assert.equal((result as Record<string, unknown>).taskId, undefined);

    const undeclared = await open(a, session, 'capability', false);
    for (const answer of [await undeclared.get(taskId), await undeclared.cancel(taskId)]) {
      assert.equal(answer.error?.code, -32021, JSON.stringify(answer));
      assert.deepEqual(answer.error?.data?.requiredCapabilities, { extensions: { [TASKS]: {} } });
    }
    release('plain-2');
    assert.equal((await terminal(declaring, taskId)).status, 'completed');
  });
});
