/**
 * The fleet a replica knows (issue 25, points 1 and 7), for real: a replica on the machine's NATS under a
 * prefix of this run, and `subako worker` processes coming and going. With no worker running a call fails at
 * once as `unavailable`, saying no worker is running, and `/v1/health` is `degraded` naming the fleet; a worker
 * that starts is heard (health `ok`, its slots counted, `/metrics` says so) and each call's record names the
 * worker that ran it; a worker that stops leaves the fleet at once, one killed once its presence lapses.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../../src/app.js';
import { packBundle } from '../../src/package/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, removeBuckets, runName, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { makeApi, probePackageDir, tempDir, TEST_KEY, type Api } from './helpers/harness.js';
import { eventually } from '../helpers/eventually.js';

/** Far above any wait that works; a call waiting out its deadline (60 s) would pass it. */
const CEILING_MS = 30_000;

interface CallAnswer { status: number; body: { call: { id: string; outcome: string; crash: { reason: string; message: string } | null; worker: { id: string; host: string } | null } } }

describe('the fleet a replica knows', () => {
  const prefix = runName('fleet');
  const dataDir = tempDir();
  let api: Api;
  let close: (() => Promise<void>) | undefined;
  let sessionId: string;
  const workers: ChildWorker[] = [];

  const call = async (tool: string, args: Record<string, unknown> = {}): Promise<CallAnswer> => {
    const response = await fetch(`${api.url}/v1/sessions/${sessionId}/calls`, {
      method: 'POST', headers: { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool, arguments: args }), signal: AbortSignal.timeout(CEILING_MS),
    });
    return { status: response.status, body: await response.json() as CallAnswer['body'] };
  };
  const health = async (): Promise<any> => (await fetch(`${api.url}/v1/health`)).json();
  /** Asks `/v1/health` until `check` holds, within the ceiling. */
  const healthUntil = (check: (report: any) => boolean): Promise<any> => eventually('the health report holds', health, check, { ms: CEILING_MS, everyMs: 50 });
  const startWorker = async (): Promise<ChildWorker> => {
    const worker = await spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir: join(dataDir, 'volumes'), pool: 2, env: TEST_KEY, repoRoot: REPO_ROOT });
    workers.push(worker);
    return worker;
  };

  before(async () => {
    const { server, firstStart } = await startServer({
      dataDir, port: 0, examplesDir: null, env: { ...process.env, ...TEST_KEY }, nats: { url: SHARED_NATS_URL, prefix },
      volumesDir: join(dataDir, 'volumes'), limits: { callTimeoutMs: 60_000 },
    });
    api = makeApi(server.url, firstStart!.apiKey);
    close = () => server.close(5_000);
    assert.equal((await api.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const agent = (await api.call('POST', '/v1/agents', { name: 'fleet', tools: [{ package: 'probe' }] })).body;
    sessionId = (await api.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body.id;
  });

  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await close?.();
    await removeBuckets(prefix);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('with no worker running, /v1/health is degraded naming the fleet, and a call fails at once as `unavailable`, saying so', async () => {
    const report = await health();
    assert.equal(report.ok, false);
    assert.equal(report.status, 'degraded');
    assert.deepEqual(report.store, { status: 'ok' });
    assert.deepEqual(report.bus, { status: 'ok' });
    assert.equal(report.fleet.status, 'no_worker');
    assert.equal(report.fleet.workers, 0);
    assert.match(report.reasons.join('\n'), /no worker is running: none has announced itself on .*\.fleet\.workers/);

    const answer = await call('echo', { n: 1 });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.call.outcome, 'crash');
    assert.equal(answer.body.call.crash?.reason, 'unavailable');
    assert.match(answer.body.call.crash!.message, /no worker is running/);
    assert.equal(answer.body.call.worker, null, 'no worker took it');
  });

  it('a worker that starts is heard: health ok with its slots, and the record of each call names the worker that ran it', async () => {
    const worker = await startWorker();
    const report = await healthUntil((r) => r.fleet.status === 'ok');
    assert.equal(report.ok, true);
    assert.equal(report.status, 'ok');
    assert.deepEqual(report.reasons, []);
    assert.equal(report.fleet.workers, 1);
    assert.equal(report.fleet.slots, 2);

    const answer = await call('echo', { n: 2 });
    assert.equal(answer.body.call.outcome, 'ok', JSON.stringify(answer.body.call.crash));
    assert.deepEqual(answer.body.call.worker, { id: worker.name, host: hostname() });
    // The stored record says the same, on every read of it.
    const stored = await api.call('GET', `/v1/sessions/${sessionId}/calls/${answer.body.call.id}`);
    assert.deepEqual(stored.body.worker, { id: worker.name, host: hostname() });
    const listed = await api.call('GET', `/v1/calls?session=${sessionId}`);
    assert.deepEqual(listed.body.items.find((c: { id: string }) => c.id === answer.body.call.id).worker, { id: worker.name, host: hostname() });

    const metrics = (await api.call('GET', '/metrics')).body as string;
    assert.match(metrics, /^subako_fleet_workers\{protocol="same"\} 1$/m);
    assert.match(metrics, /^subako_fleet_slots\{state="idle"\} [0-9]+$/m);
  });

  it('a worker that stops leaves the fleet at once; calls fail fast again, saying so', async () => {
    await workers.shift()!.stop();
    const report = await healthUntil((r) => r.fleet.status === 'no_worker');
    assert.equal(report.status, 'degraded');
    const answer = await call('echo', { n: 3 });
    assert.equal(answer.body.call.crash?.reason, 'unavailable');
    assert.match(answer.body.call.crash!.message, /no worker is running/);
  });

  it('a worker killed without a word lapses from the fleet once it is no longer heard', async () => {
    const worker = await startWorker();
    await healthUntil((r) => r.fleet.status === 'ok');
    worker.child.kill('SIGKILL');
    await worker.exited;
    const report = await healthUntil((r) => r.fleet.status === 'no_worker');
    assert.equal(report.fleet.workers, 0);
    const answer = await call('echo', { n: 4 });
    assert.equal(answer.body.call.crash?.reason, 'unavailable');
    assert.match(answer.body.call.crash!.message, /no worker is running/);
  });
});
