/**
 * Flow control, for real: a worker whose one slot is taken is handed no second call. The second call waits
 * (its offers answered "no responders" by the NATS server) and runs once the slot is free. (The machine's NATS server, subjects and bucket of this run's own.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, spawnServe, tempDir, TEST_KEY, type ChildServer } from '../server/helpers/harness.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { connectShared, removeBuckets, runName, SHARED_NATS_URL, spawnWorker, watchBus, type ChildWorker } from '../helpers/nats.js';

describe('a worker at capacity takes no more calls', () => {
  const prefix = runName('subako');
  const dataDir = tempDir();
  let serve: ChildServer;
  let worker: ChildWorker;
  let bus: NatsConnection;
  let sessionId: string;
  let otherSessionId: string;
  /** The workers named in "accepted" messages on any inbox: other test files' runs share the server, so only this run's worker counts. */
  let watch: ReturnType<typeof watchBus>;
  const accepted = { get length(): number { return watch.accepted().filter((name) => name === worker?.name).length; } };

  before(async () => {
    bus = await connectShared();
    watch = watchBus(bus, prefix, TEST_KEY.SUBAKO_SECRET_KEY);
    await bus.flush();
    serve = await spawnServe(dataDir, undefined, ['--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--no-examples', '--call-timeout-ms', '20000', '--agent-concurrency', '4']);
    worker = await spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir: join(dataDir, 'volumes'), pool: 1, env: TEST_KEY, repoRoot: REPO_ROOT });
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

  it('a second call is never handed to the busy worker; it runs once the slot frees', async () => {
    const controller = new AbortController();
    const busy = call(sessionId, 'timeout', controller.signal).catch((err: unknown) => err);
    await until(() => accepted.length === 1, 'the first call taken');
    const second = call(otherSessionId, 'echo');
    // Once the second call is running on the replica, it is being offered; the busy worker has no subscription
    // left, so the server answers each offer "no responders" (a subscriber of the test's own on the calls
    // subject would be a responder: this test watches the answers only). Twenty rounds of offers later, still
    // nobody took it.
    await until(async () => (await serve.call('GET', `/v1/sessions/${otherSessionId}/calls`)).body.items?.[0]?.outcome === 'running', 'the second call running');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(accepted.length, 1, 'the worker took nothing while its one slot was busy');
    controller.abort();
    await busy;
    const answer = await second;
    assert.equal(answer.call.outcome, 'ok', JSON.stringify(answer.call));
    assert.equal(accepted.length, 2);
  });

  it('once the slot is free, the next call runs', async () => {
    const next = await call(sessionId, 'echo');
    assert.equal(next.call.outcome, 'ok');
  });
});
