/**
 * The bus's and the workers' metrics, for real: one `subako serve --nats` and one `subako worker` (a single
 * slot, its `/metrics` on a port of its own) as child processes on the machine's NATS server, scraped after
 * calls and during them, through the strict Prometheus parser. The figures match the calls made: each call
 * taken once counted in the dispatch histogram, outcomes and cancellations by result, a worker's in-flight
 * series there while it runs a call and gone after, and a call that met a full worker counted as a re-send.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { packBundle } from '../../src/package/index.js';
import { DispatchCounters } from '../../src/platform/scale-out/nats-dispatch-stats.js';
import { natsSubjects } from '../../src/platform/index.js';
import { probePackageDir, spawnServe, tempDir, TEST_KEY, type ChildServer } from '../server/helpers/harness.js';
import { parsePrometheusText, valueOf, type Family } from '../server/helpers/prometheus.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { connectShared, freePort, runName, SHARED_NATS_URL, spawnWorker, type ChildWorker } from '../helpers/nats.js';

const CALLS = 12;

describe('metrics of calls over NATS: the replica\'s and the worker\'s /metrics', () => {
  const prefix = runName('subako');
  const dataDir = tempDir();
  let serve: ChildServer;
  let worker: ChildWorker;
  let workerMetricsUrl: string;
  let bus: NatsConnection;
  let sessionId: string;
  /** A second session: one session runs one call at a time here (admission), and the re-send test needs two at once. */
  let otherSessionId: string;

  before(async () => {
    bus = await connectShared();
    // The agent may run two calls at once although the fleet has one slot (its default share would be that one), so
    // the second call gets past admission and meets the full worker.
    serve = await spawnServe(dataDir, undefined, ['--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--no-examples', '--agent-concurrency', '2']);
    const port = await freePort();
    // The metrics port through the environment: the worker resolves it as every other setting.
    worker = await spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir: join(dataDir, 'volumes'), pool: 1, env: { ...TEST_KEY, SUBAKO_WORKER_METRICS_PORT: String(port) }, repoRoot: REPO_ROOT });
    workerMetricsUrl = /^metrics: (\S+)$/m.exec(worker.stdout())![1];
    assert.equal(workerMetricsUrl, `http://127.0.0.1:${port}/metrics`);
    const uploaded = await serve.call('POST', '/v1/packages', await packBundle(probePackageDir()));
    assert.ok(uploaded.status === 201 || uploaded.status === 200, JSON.stringify(uploaded.body));
    const agent = await serve.call('POST', '/v1/agents', { name: runName('agent'), tools: [{ package: 'probe' }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    sessionId = (await serve.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id;
    otherSessionId = (await serve.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id;
  });

  after(async () => {
    await worker.stop();
    serve.child.kill('SIGTERM');
    await serve.exited;
    await (await new Objm(bus).open(natsSubjects(prefix).packagesBucket)).destroy().catch(() => undefined);
    await bus.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const scrapeReplica = async (): Promise<Map<string, Family>> => {
    const answer = await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${serve.apiKey}` } });
    assert.equal(answer.status, 200);
    return parsePrometheusText(await answer.text());
  };
  const scrapeWorker = async (): Promise<Map<string, Family>> => {
    const answer = await fetch(workerMetricsUrl);
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await answer.text());
  };
  const inFlightSeries = (families: Map<string, Family>) => families.get('subako_nats_calls_in_flight')?.samples ?? [];
  const call = (tool: string, args: object, signal?: AbortSignal, session = sessionId) => fetch(`${serve.url}/v1/sessions/${session}/calls`, {
    method: 'POST', signal, headers: { authorization: `Bearer ${serve.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool, arguments: args }),
  });
  /** Polls `read` until `done` holds of it (bounded: a figure that never comes fails the test). */
  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    for (let i = 0; i < 400; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`never: ${what}`);
  }

  it('the worker\'s listener serves only GET /metrics, with no key, its slot and Node\'s defaults', async () => {
    const families = await scrapeWorker();
    assert.equal(valueOf(families, 'subako_worker_slots'), 1);
    assert.equal(valueOf(families, 'subako_worker_calls_in_flight'), 0);
    assert.equal(valueOf(families, 'subako_sandbox_workers', { state: 'idle' }), 1);
    assert.ok(families.has('process_cpu_user_seconds_total'), 'Node\'s default metrics');
    assert.equal((await fetch(workerMetricsUrl.replace(/\/metrics$/, '/other'))).status, 404);
    assert.equal((await fetch(workerMetricsUrl, { method: 'POST' })).status, 404);
  });

  it(`${CALLS} calls: each counted once as an outcome, in both histograms and on the worker; nothing left in flight`, async () => {
    const replicaBefore = await scrapeReplica();
    const workerBefore = await scrapeWorker();
    for (let n = 0; n < CALLS; n++) {
      const answer = await call('echo', { n });
      assert.equal(answer.status, 200);
      const body = await answer.json() as { call: { outcome: string } };
      assert.equal(body.call.outcome, 'ok', JSON.stringify(body));
    }
    const replica = await scrapeReplica();
    const delta = (name: string, labels: Record<string, string> = {}) => valueOf(replica, name, labels) - valueOf(replicaBefore, name, labels);
    assert.equal(delta('subako_nats_calls_total', { result: 'outcome' }), CALLS);
    for (const result of ['interrupted', 'unavailable', 'refused', 'cancelled']) assert.equal(delta('subako_nats_calls_total', { result }), 0, result);
    assert.equal(delta('subako_nats_dispatch_seconds_count'), CALLS);
    assert.equal(delta('subako_nats_call_seconds_count'), CALLS);
    assert.ok(delta('subako_nats_dispatch_seconds_sum') > 0 && delta('subako_nats_call_seconds_sum') >= delta('subako_nats_dispatch_seconds_sum'),
      'a call takes at least as long as its taking');
    assert.equal(replica.get('subako_nats_dispatch_seconds')?.type, 'histogram');
    assert.deepEqual(inFlightSeries(replica), [], 'no worker series once nothing is in flight');
    const after = await scrapeWorker();
    assert.equal(valueOf(after, 'subako_worker_calls_total', { outcome: 'ok' }) - valueOf(workerBefore, 'subako_worker_calls_total', { outcome: 'ok' }), CALLS);
    assert.equal(valueOf(after, 'subako_worker_calls_in_flight'), 0);
  });

  it('a running call shows on its worker\'s series and the worker\'s gauge; a call finding the worker full waits on the replica, never re-sent; both back to zero', async () => {
    const before = await scrapeReplica();
    const controller = new AbortController();
    const held = call('timeout', {}, controller.signal);
    held.catch(() => undefined);
    const running = await until(scrapeReplica, (f) => inFlightSeries(f).length > 0, 'the held call in flight');
    assert.deepEqual(inFlightSeries(running).map((s) => [s.labels, s.value]), [[{ worker: worker.name }, 1]]);
    assert.equal(valueOf(await scrapeWorker(), 'subako_worker_calls_in_flight'), 1);
    // The worker's one slot is held by this replica's call: the next one waits on the replica until it frees.
    const waiting = call('echo', { n: 'after' }, undefined, otherSessionId);
    await until(() => serve.call('GET', `/v1/sessions/${otherSessionId}/calls`), (page) => page.body.items?.[0]?.outcome === 'running', 'the second call running');
    controller.abort();
    await assert.rejects(held, { name: 'AbortError' });
    const answer = await waiting;
    assert.equal(answer.status, 200);
    assert.equal((await answer.json() as { call: { outcome: string } }).call.outcome, 'ok');
    const ended = await until(scrapeReplica, (f) => valueOf(f, 'subako_nats_calls_total', { result: 'cancelled' }) > valueOf(before, 'subako_nats_calls_total', { result: 'cancelled' }), 'the cancellation counted');
    assert.equal(valueOf(ended, 'subako_nats_calls_total', { result: 'cancelled' }) - valueOf(before, 'subako_nats_calls_total', { result: 'cancelled' }), 1);
    assert.equal(valueOf(ended, 'subako_nats_calls_total', { result: 'outcome' }) - valueOf(before, 'subako_nats_calls_total', { result: 'outcome' }), 1);
    // Each call was sent once and taken: the cancelled call held the slot until its worker said it had stopped.
    assert.equal(valueOf(ended, 'subako_nats_dispatch_seconds_count') - valueOf(before, 'subako_nats_dispatch_seconds_count'), 2);
    assert.equal(valueOf(ended, 'subako_nats_no_responders_total') - valueOf(before, 'subako_nats_no_responders_total'), 0, 'no send met a full worker');
    assert.deepEqual(inFlightSeries(ended), []);
    const workerEnded = await until(scrapeWorker, (f) => valueOf(f, 'subako_worker_calls_in_flight') === 0, 'the worker idle again');
    assert.equal(valueOf(workerEnded, 'subako_worker_calls_total', { outcome: 'cancelled' }), 1);
  });
});

describe('the replica\'s dispatch counters (pure)', () => {
  it('count calls per worker while they run, drop a worker with none, bucket the durations cumulatively', () => {
    const counters = new DispatchCounters();
    counters.accepted('a', 0.0003);
    counters.accepted('a', 0.002);
    counters.accepted('b', 2);
    counters.noWorkerFree();
    assert.deepEqual(counters.snapshot().inFlightByWorker, { a: 2, b: 1 });
    counters.ended('outcome', 'a', 0.004);
    counters.ended('interrupted', 'b');
    counters.ended('unavailable', null);
    const stats = counters.snapshot();
    assert.deepEqual(stats.inFlightByWorker, { a: 1 });
    assert.deepEqual(stats.calls, { outcome: 1, interrupted: 1, unavailable: 1, refused: 0, cancelled: 0 });
    assert.equal(stats.noResponders, 1);
    const le = (bound: number) => stats.dispatchSeconds.buckets.find((b) => b.le === bound)?.count;
    // 0.3 ms falls in the 0.5 ms bucket and every one above it; 2 s is past the last bound (only +Inf, i.e. count).
    assert.deepEqual([le(0.00025), le(0.0005), le(0.001), le(0.0025), le(1)], [0, 1, 1, 2, 2]);
    assert.equal(stats.dispatchSeconds.count, 3);
    assert.ok(Math.abs(stats.dispatchSeconds.sum - 2.0023) < 1e-9);
    assert.deepEqual([stats.callSeconds.count, stats.callSeconds.sum], [1, 0.004]);
  });
});
