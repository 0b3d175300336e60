/**
 * The fleet's presence is as trusted as every other message on the bus: not at all unless it opens. A plain
 * NATS client on the open bus a deployment shares tries to make a replica believe in workers that are not
 * there — a presence sealed under another key, one not sealed at all, a real worker's presence captured and
 * sent again after that worker died, and an authentic presence of an absurd shape (the deployment's own key,
 * as a compromised process would hold it). A replica (in this process, on the machine's NATS under this run's
 * prefix) keeps answering "no worker is running" through all of it, and counts each as dropped, by why.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type NatsConnection } from '@nats-io/transport-node';
import { startServer } from '../../src/app.js';
import { PROTOCOL } from '../../src/platform/scale-out/nats-calls.js';
import { busKey, sealEnvelope } from '../../src/platform/scale-out/nats-envelope.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, connectShared, removeBuckets, runName, spawnWorker } from '../helpers/nats.js';
import { makeApi, tempDir, TEST_KEY, type Api } from '../server/helpers/harness.js';
import { parsePrometheusText, valueOf } from '../server/helpers/prometheus.js';

const WAIT_MS = 30_000;

describe('presence from someone on the bus', () => {
  const prefix = runName('presence');
  const subject = `${prefix}.fleet.workers`;
  const dataDir = tempDir();
  let api: Api;
  let close: (() => Promise<void>) | undefined;
  let attacker: NatsConnection;
  /** A real worker's presences, as they crossed the bus. */
  const captured: Uint8Array[] = [];

  const dropped = async (reason: string): Promise<number> =>
    valueOf(parsePrometheusText((await api.call('GET', '/metrics')).body as string), 'subako_bus_dropped_total', { reason });
  const fleet = async (): Promise<any> => (await (await fetch(`${api.url}/v1/health`)).json()).fleet;
  /** Publishes `data` on the workers' presence subject and waits until the replica has counted one more drop for `reason`. */
  const refused = async (data: Uint8Array, reason: string): Promise<void> => {
    const before = await dropped(reason);
    attacker.publish(subject, data);
    await attacker.flush();
    const deadline = Date.now() + WAIT_MS;
    while ((await dropped(reason)) === before) {
      if (Date.now() > deadline) throw new Error(`the replica never counted a ${reason} presence`);
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal((await fleet()).status, 'no_worker', 'the replica still knows of no worker');
  };
  const forged = (key: Buffer, body: unknown, n = 1): Uint8Array =>
    sealEnvelope(key, subject, { k: 'worker_presence', c: randomBytes(12).toString('hex'), n, e: Date.now() + 3_000 }, body);
  const looksReal = { v: PROTOCOL, id: 'ghost:1', host: 'ghost', version: '9.9.9', slots: 64, busy: 0 };

  before(async () => {
    attacker = await connectShared();
    attacker.subscribe(subject, { callback: (err, msg) => { if (!err) captured.push(msg.data); } });
    await attacker.flush();
    const { server, firstStart } = await startServer({
      dataDir, port: 0, examplesDir: null, env: { ...process.env, ...TEST_KEY }, nats: { url: SHARED_NATS_URL, prefix }, volumesDir: join(dataDir, 'volumes'),
    });
    api = makeApi(server.url, firstStart!.apiKey);
    close = () => server.close(5_000);
  });

  after(async () => {
    await close?.();
    await attacker?.close();
    await removeBuckets(prefix);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a presence sealed under another key is dropped as unauthentic', async () => {
    assert.equal((await fleet()).status, 'no_worker');
    await refused(forged(randomBytes(32), looksReal), 'unauthentic');
  });

  it('a presence not sealed at all is dropped as malformed', async () => {
    await refused(Buffer.from(JSON.stringify(looksReal)), 'malformed');
  });

  it('a real worker\'s presence sent again after it died is dropped as replayed', async () => {
    const worker = await spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir: join(dataDir, 'volumes'), pool: 1, env: TEST_KEY, repoRoot: REPO_ROOT });
    const deadline = Date.now() + WAIT_MS;
    while ((await fleet()).status !== 'ok') {
      assert.ok(Date.now() < deadline, 'the real worker was never heard');
      await new Promise((r) => setTimeout(r, 25));
    }
    worker.child.kill('SIGKILL');
    await worker.exited;
    await worker.stop();
    while ((await fleet()).status !== 'no_worker') {
      assert.ok(Date.now() < deadline + WAIT_MS, 'the killed worker never lapsed');
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(captured.length > 0, 'the worker announced itself on the bus');
    // Its last presence: authentic, not expired within the clocks' allowance, and taken once already.
    await refused(captured[captured.length - 1], 'replayed');
  });

  it('an authentic presence of an absurd shape is dropped as malformed: a name no label may carry, slots past any bound', async () => {
    const key = busKey(Buffer.from(TEST_KEY.SUBAKO_SECRET_KEY, 'base64'), prefix);
    await refused(forged(key, { ...looksReal, id: `${'x'.repeat(200)} {label="injected"}` }), 'malformed');
    await refused(forged(key, { ...looksReal, slots: 1e12 }), 'malformed');
  });
});
