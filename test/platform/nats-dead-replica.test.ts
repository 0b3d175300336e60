/**
 * A replica that dies mid-call (issue 25, point 6), for real: a `subako serve` child on the machine's NATS under
 * a prefix of this run, killed with SIGKILL while its call spins in a worker of one slot. Nobody waits for that
 * call's answer any more: the worker cancels it once the replica's presence lapses — the guest stopped, the slot
 * free at once, the call counted `cancelled` —, long before its deadline (two minutes, the worker's own limit
 * raised to match), and a call of another replica runs in that slot.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { packBundle } from '../../src/package/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, freePort, removeBuckets, runName, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { probePackageDir, spawnServe, tempDir, TEST_KEY, type ChildServer } from '../server/helpers/harness.js';
import { eventually } from '../helpers/eventually.js';

const DEADLINE_MS = 120_000;
/** Well inside the deadline: a cancellation that only came with the deadline would not make it. */
const CEILING_MS = 60_000;

/** One series' value in a Prometheus text, or null when absent. */
function series(text: string, name: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? null : Number(line.slice(name.length + 1));
}

describe('a replica killed mid-call', () => {
  const prefix = runName('dead');
  const volumesDir = join(tempDir(), 'volumes');
  const dataDirs: string[] = [];
  const replicas: ChildServer[] = [];
  let worker: ChildWorker;
  let metricsUrl: string;

  const metrics = async (): Promise<string> => (await fetch(metricsUrl)).text();
  const until = (what: string, check: (text: string) => boolean): Promise<string> =>
    eventually(what, async () => (await metrics()).split('\n').filter((l) => l.startsWith('subako_')).join('\n'), check, { ms: CEILING_MS, everyMs: 50 })
      .catch((err: Error) => { throw new Error(`${err.message}\n${worker.stderr()}`); });
  /** A replica of its own (its own SQLite), the probe pushed, a session of an agent that has it. */
  const replica = async (): Promise<{ serve: ChildServer; sessionId: string }> => {
    const dataDir = tempDir();
    dataDirs.push(dataDir);
    const serve = await spawnServe(dataDir, undefined, ['--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--no-examples', '--volumes-dir', volumesDir,
      '--call-timeout-ms', String(DEADLINE_MS)]);
    replicas.push(serve);
    const pushed = await serve.call('POST', '/v1/packages', await packBundle(probePackageDir()));
    assert.ok(pushed.status === 201 || pushed.status === 200, JSON.stringify(pushed.body));
    const agent = (await serve.call('POST', '/v1/agents', { name: 'dead', tools: [{ package: 'probe' }] })).body;
    return { serve, sessionId: (await serve.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body.id };
  };

  before(async () => {
    const port = await freePort();
    worker = await spawnWorker({
      url: SHARED_NATS_URL, prefix, volumesDir, pool: 1, repoRoot: REPO_ROOT,
      env: { ...TEST_KEY, SUBAKO_WORKER_METRICS_PORT: String(port), SUBAKO_CALL_TIMEOUT_MS: String(DEADLINE_MS) },
    });
    metricsUrl = /^metrics: (\S+)$/m.exec(worker.stdout())![1];
  });

  after(async () => {
    for (const serve of replicas) if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGTERM');
    await Promise.all(replicas.map((serve) => serve.exited));
    await worker?.stop();
    await removeBuckets(prefix);
    for (const dir of [...dataDirs, volumesDir]) rmSync(dir, { recursive: true, force: true });
  });

  it('its call is cancelled on its worker: the guest stopped, the slot free at once, the call counted cancelled', async () => {
    const doomed = await replica();
    // The call spins until its deadline; its replica dies under it, so its answer never comes.
    void doomed.serve.call('POST', `/v1/sessions/${doomed.sessionId}/calls`, { tool: 'timeout', arguments: {} }).catch(() => undefined);
    await until('the call running on the worker', (text) => series(text, 'subako_worker_calls_in_flight') === 1 && series(text, 'subako_sandbox_workers{state="busy"}') === 1);
    doomed.serve.child.kill('SIGKILL');
    await doomed.serve.exited;

    const after = await until('the call cancelled', (text) => series(text, 'subako_worker_calls_total{outcome="cancelled"}') === 1);
    assert.equal(series(after, 'subako_worker_calls_in_flight'), 0, 'the slot is free');
    assert.equal(series(after, 'subako_sandbox_workers{state="busy"}'), 0, 'the guest was stopped');
    assert.match(worker.stderr(), /cancelled call \S+ of the replica rep_[0-9a-f]+: it has not been heard for 10 s \(gone\)/);
  });

  it('the freed slot takes another replica\'s call', async () => {
    const other = await replica();
    const answer = await other.serve.call('POST', `/v1/sessions/${other.sessionId}/calls`, { tool: 'echo', arguments: { after: 'the dead replica' } });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.call.outcome, 'ok', JSON.stringify(answer.body.call.crash));
    assert.equal(answer.body.call.worker.id, worker.name);
  });
});
