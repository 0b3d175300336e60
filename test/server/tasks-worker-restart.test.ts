/**
 * Issue 27 point 3: a task's handle "survives a replica restart for calls on workers". A function package call (the
 * `hold` guest, held until the test releases it) becomes a task on replica A, a `subako serve` process, and runs on a
 * `subako worker` process; A is then killed (SIGKILL: nothing of it runs on). The worker runs the call on — it is
 * durable: without that, the worker cancels the call of a replica gone quiet, and the task fails with A's lease — and
 * keeps its outcome in the deployment's outcomes bucket. `tasks/get` through replica B, on the same PostgreSQL and
 * NATS, says `working` while the worker runs it and `completed` with the guest's answer once released; so does A,
 * started again on its data directory.
 *
 * Real parts only: PostgreSQL (a database of this run's own), the shared NATS (subjects and buckets of this run's
 * own), A and the worker as child processes (stopped by pid), B in this process, the v2 SDK's transport as client.
 * Nothing sleeps a fixed time: each step waits for what it needs with a ceiling.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../../src/app.js';
import { Secret } from '../../src/common/index.js';
import { packBundle } from '../../src/package/index.js';
import type { SubakoServer } from '../../src/server/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { eventually, until } from '../helpers/eventually.js';
import { fixture, REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, removeBuckets, runName, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { makeApi, spawnServe, tempDir, TEST_KEY, type Api, type ChildServer } from './helpers/harness.js';
import { TasksClient } from './helpers/tasks-client.js';

const CEILING_MS = 60_000;

let db: TestDatabase;
const root = tempDir('subako-tasks-restart-');
const prefix = runName('tasksrs');
const volumesDir = join(root, 'volumes');
let a: ChildServer | undefined;
let b: SubakoServer | undefined;
let bApi: Api;
let worker: ChildWorker | undefined;
const clients: TasksClient[] = [];

function replicaArgs(): string[] {
  return ['--database', db.url, '--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--volumes-dir', volumesDir, '--instance-lease-ms', '1000', '--no-examples'];
}

async function stopA(): Promise<void> {
  if (a && a.child.exitCode === null) {
    a.child.kill('SIGKILL');
    await a.exited;
  }
}

async function hearsWorker(url: string): Promise<void> {
  await eventually('the replica hears the worker', async () => (await (await fetch(`${url}/v1/health`)).json()).fleet?.slots, (slots) => slots === 2, { ms: CEILING_MS, everyMs: 50 });
}

before(async () => {
  db = await createTestDatabase();
  a = await spawnServe(join(root, 'replica-a'), undefined, replicaArgs());
  const started = await startServer({
    dataDir: join(root, 'replica-b'), port: 0, workers: 2, examplesDir: null, env: { ...process.env, ...TEST_KEY },
    database: new Secret(db.url), volumesDir, nats: { url: SHARED_NATS_URL, prefix },
  });
  b = started.server;
  bApi = makeApi(b.url, a.apiKey);
  worker = await spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir, pool: 2, env: TEST_KEY, repoRoot: REPO_ROOT });
  await hearsWorker(a.url);
  await hearsWorker(b.url);
  const dir = tempDir('subako-hold-');
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'hold', description: 'Holds its worker until released.', version: '1.0.0' }));
  cpSync(fixture('c', 'mcp', 'hold.wasm'), join(dir, 'module.wasm'));
  const uploaded = await a.call('POST', '/v1/packages', await packBundle(dir));
  assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
  rmSync(dir, { recursive: true, force: true });
});

after(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await stopA();
  await b?.close(5_000);
  await worker?.stop();
  await removeBuckets(prefix);
  await db?.drop();
  rmSync(root, { recursive: true, force: true });
});

async function open(url: string): Promise<TasksClient> {
  const client = await TasksClient.open(url);
  clients.push(client);
  return client;
}

describe('a task whose call runs on a worker', () => {
  it('survives the restart of the replica that made it: read through the other replica, then through it started again', async () => {
    const agent = await a!.call('POST', '/v1/agents', { name: `restart-${Date.now()}`, tools: [{ package: 'hold', data: true }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = await a!.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    assert.equal(session.status, 201, JSON.stringify(session.body));
    const data = join(volumesDir, 'agents', agent.body.id, 'data');
    const path = new URL(session.body.mcp.capability_url).pathname;

    const onA = await open(`${a!.url}${path}`);
    const created = await onA.callTool('hold', { id: 'w-1' });
    assert.equal(created.error, undefined, JSON.stringify(created));
    assert.equal(created.result.resultType, 'task', JSON.stringify(created.result));
    const taskId: string = created.result.taskId;
    await until('the guest started on the worker', () => { try { return readdirSync(join(data, 'started')).includes('w-1'); } catch { return false; } }, CEILING_MS);

    await stopA();
    // The worker hears A no more: a call of an ordinary request would be cancelled now; this one runs on.
    await until('the worker saw A gone', () => /of durable call \S+ has not been heard/.test(worker!.stderr()), CEILING_MS);
    const onB = await open(`${b!.url}${path}`);
    // A's lease (1 s) lapsed long before the worker's view of A (10 s): B judges the task without its owner.
    const working = await onB.get(taskId);
    assert.equal(working.error, undefined, JSON.stringify(working));
    assert.equal(working.result.status, 'working', `the worker still runs the call: ${JSON.stringify(working.result)}`);

    mkdirSync(join(data, 'release'), { recursive: true });
    writeFileSync(join(data, 'release', 'w-1'), '');
    const done = await eventually('the task ended', () => onB.get(taskId), (answer) => answer.error !== undefined || answer.result.status !== 'working', { ms: CEILING_MS, everyMs: 100 });
    assert.equal(done.error, undefined, JSON.stringify(done));
    assert.equal(done.result.status, 'completed', JSON.stringify(done.result));
    assert.equal(JSON.parse(done.result.result.content[0].text).id, 'w-1');

    // A again, on its data directory: the task is the store's, its end too.
    a = await spawnServe(join(root, 'replica-a'), a!.apiKey, replicaArgs());
    const again = await (await open(`${a.url}${path}`)).get(taskId);
    assert.equal(again.result.status, 'completed', JSON.stringify(again));
    assert.deepEqual(again.result.result.content, done.result.result.content);
  });
});
