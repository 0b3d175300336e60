/**
 * Flow control, for real: a worker whose one slot is taken is sent no second call by the replica, which counts
 * the slots its calls hold; the second call waits on the replica and runs once the slot is free. A call that
 * another replica sends meanwhile (this test, holding the key, plays one) is answered `busy`, and its id never
 * runs, even sent again once the slot is free. (The machine's NATS server, subjects and bucket of this run's own.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createInbox, type NatsConnection } from '@nats-io/transport-node';
import { PROTOCOL, natsSubjects, workerSubjects, type CallRequest } from '../../src/platform/scale-out/nats-calls.js';
import { busKey, openEnvelope, sealEnvelope, type BusKind } from '../../src/platform/scale-out/nats-envelope.js';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, spawnServe, tempDir, TEST_KEY, type ChildServer } from '../server/helpers/harness.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { parsePrometheusText, valueOf } from '../server/helpers/prometheus.js';
import { connectShared, removeBuckets, runName, SHARED_NATS_URL, spawnWorker, watchBus, type ChildWorker } from '../helpers/nats.js';

describe('a worker at capacity takes no more calls', () => {
  const prefix = runName('subako');
  const dataDir = tempDir();
  let serve: ChildServer;
  let worker: ChildWorker;
  let bus: NatsConnection;
  let sessionId: string;
  let otherSessionId: string;
  /** The calls sent to this run's worker, as its call subject shows them. */
  let watch: ReturnType<typeof watchBus>;
  const sent = { get length(): number { return watch.sentTo().filter((name) => name === worker?.name).length; } };

  before(async () => {
    bus = await connectShared();
    watch = watchBus(bus, prefix, TEST_KEY.SUBAKO_SECRET_KEY, { calls: true });
    await bus.flush();
    serve = await spawnServe(dataDir, undefined, ['--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--no-examples', '--call-timeout-ms', '20000', '--agent-concurrency', '4']);
    worker = await spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir: join(dataDir, 'volumes'), pool: 1, env: { ...TEST_KEY, SUBAKO_WORKER_METRICS_PORT: '0' }, repoRoot: REPO_ROOT });
    assert.equal((await serve.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const agent = (await serve.call('POST', '/v1/agents', { name: 'flow', tools: [{ package: 'probe' }] })).body;
    sessionId = (await serve.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body.id;
    otherSessionId = (await serve.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body.id;
  });

  after(async () => {
    await worker?.stop();
    serve?.child.kill('SIGTERM');
    await serve?.exited;
    await removeBuckets(prefix);
    await bus?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** What the worker's /metrics says: calls it answered, calls running, messages it dropped as replayed. */
  const workerStats = async (): Promise<{ ran: number; inFlight: number; replayed: number }> => {
    const families = parsePrometheusText(await (await fetch(/^metrics: (\S+)$/m.exec(worker.stdout())![1])).text());
    return {
      ran: ['ok', 'tool_error', 'crash', 'cancelled', 'refused'].reduce((sum, outcome) => sum + valueOf(families, 'subako_worker_calls_total', { outcome }), 0),
      inFlight: valueOf(families, 'subako_worker_calls_in_flight', {}),
      replayed: valueOf(families, 'subako_bus_dropped_total', { reason: 'replayed' }),
    };
  };
  const call = async (session: string, tool: string, signal?: AbortSignal) => {
    const answer = await fetch(`${serve.url}/v1/sessions/${session}/calls`, {
      method: 'POST', signal, headers: { authorization: `Bearer ${serve.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool, arguments: {} }),
    });
    return answer.json();
  };
  /** Bounded: a state that never comes fails the test, it does not hang it. */
  const until = async (check: () => boolean | Promise<boolean>, what: string): Promise<void> => {
    for (let i = 0; i < 500; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail(`never: ${what}`);
  };

  it('a second call is never sent to the busy worker; it runs once the slot frees', async () => {
    const controller = new AbortController();
    const busy = call(sessionId, 'timeout', controller.signal).catch((err: unknown) => err);
    await until(() => sent.length === 1, 'the first call sent');
    const second = call(otherSessionId, 'echo');
    // The second call is running on the replica, and waits there: the replica knows its first call holds the
    // worker's one slot. Half a second later it has still not been sent.
    await until(async () => (await serve.call('GET', `/v1/sessions/${otherSessionId}/calls`)).body.items?.[0]?.outcome === 'running', 'the second call running');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(sent.length, 1, 'nothing was sent to the worker while its one slot was held');
    controller.abort();
    await busy;
    const answer = await second;
    assert.equal(answer.call.outcome, 'ok', JSON.stringify(answer.call));
    assert.equal(sent.length, 2);
    assert.ok(!watch.seen.some((m) => m.opened?.kind === 'busy'), 'the worker never had to answer busy');
  });

  it('a call another replica sends to the full worker is answered busy, and its id never runs, even sent again once the slot is free', async () => {
    const key = busKey(Buffer.from(TEST_KEY.SUBAKO_SECRET_KEY, 'base64'), prefix);
    const busId = await until(() => watch.busOf(worker.name) !== undefined, 'the worker\'s bus id in its presence').then(() => watch.busOf(worker.name)!);
    const own = workerSubjects(natsSubjects(prefix), busId);
    const answers: BusKind[] = [];
    const replyTo = createInbox();
    const sub = bus.subscribe(replyTo, {
      callback: (_err, msg) => {
        const opened = openEnvelope<unknown>(key, msg.subject, msg.data, ['busy', 'accepted', 'alive', 'progress', 'outcome', 'refused']);
        if (opened.ok) answers.push(opened.header.k);
      },
    });
    const ranBefore = (await workerStats()).ran;
    const controller = new AbortController();
    const holding = call(sessionId, 'timeout', controller.signal).catch((err: unknown) => err);
    const sentBefore = sent.length;
    await until(async () => sent.length > sentBefore && (await workerStats()).inFlight === 1, 'the slot held by the replica\'s call');
    const callId = randomUUID();
    const request: CallRequest = {
      v: PROTOCOL, callId, replica: 'rep_other', replyTo, timeoutMs: 10_000, package: { name: 'probe', version: '1.0.0', digest: 'a'.repeat(64) },
      tool: 'echo', arguments: {}, tmp: 'sessions/ses_0123456789abcdef0123456789ab/tmp',
    };
    const sealed = sealEnvelope(key, own.call, { k: 'call', c: callId, n: 0, e: Date.now() + 10_000 }, request);
    bus.publish(own.call, sealed);
    await until(() => answers.includes('busy'), 'the busy answer');
    controller.abort();
    await holding;
    await until(async () => (await workerStats()).inFlight === 0, 'the slot free');
    const replayedBefore = (await workerStats()).replayed;
    bus.publish(own.call, sealed);
    await until(async () => (await workerStats()).replayed > replayedBefore, 'the call sent again dropped as replayed');
    assert.deepEqual(answers, ['busy'], 'the worker said busy once, and nothing more of that id');
    assert.equal((await workerStats()).ran, ranBefore + 1, 'only the replica\'s call ran');
    sub.unsubscribe();
  });

  it('once the slot is free, the next call runs', async () => {
    const next = await call(sessionId, 'echo');
    assert.equal(next.call.outcome, 'ok');
  });
});
