/**
 * Admission across the fleet (issue 25, point 2), for real: two API replicas in this process on one PostgreSQL
 * and the machine's NATS (a prefix of this run's own), and two `subako worker` processes of 2 slots each. An
 * agent's and a session's shares are sized from the fleet's 4 slots (not this machine's cores) and hold for the
 * calls of both replicas together.
 *
 * Concurrency is read inside the guests, never from the clock: the `hold` guest (test/fixtures/c/mcp/hold.c)
 * keeps its slot until the test releases it and counts, in its agent's /volume/data (the shared volumes), the
 * agent's calls running when it started. A call that is not running is known to wait because every call was
 * recorded before the test looks, and another agent's later calls got the free slots meanwhile.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../../src/app.js';
import { Secret } from '../../src/common/index.js';
import type { CallAdmissionLimits } from '../../src/platform/index.js';
import { packBundle } from '../../src/package/index.js';
import { fixture, REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, removeBuckets, runName, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { eventually, until } from '../helpers/eventually.js';
import { makeApi, spawnServe, tempDir, TEST_KEY, type Api, type ChildServer } from './helpers/harness.js';

const CEILING_MS = 30_000;
const CALL_TIMEOUT_MS = 120_000;

interface Replica { api: Api; close(): Promise<void> }
interface HoldAgent { id: string; sessions: string[]; data: string; calls: Map<string, Promise<{ status: number; body: any }>> }

describe('admission across two replicas and two workers (4 slots)', () => {
  const prefix = runName('admit');
  const root = tempDir('subako-admit-');
  const volumesDir = join(root, 'volumes');
  let db: TestDatabase;
  let apiKey: string | undefined;
  let replicas: Replica[] = [];
  const workers: ChildWorker[] = [];
  const agents: HoldAgent[] = [];
  let made = 0;

  /** Replicas on the database and the bus, with these admission settings; each has heard the 4 slots. */
  async function startReplicas(admission: Partial<CallAdmissionLimits> = {}, count = 2): Promise<void> {
    for (let i = 0; i < count; i++) {
      const { server, firstStart } = await startServer({
        dataDir: join(root, `replica-${made}-${i}`), port: 0, examplesDir: null, env: { ...process.env, ...TEST_KEY },
        nats: { url: SHARED_NATS_URL, prefix }, database: new Secret(db.url), volumesDir, limits: { callTimeoutMs: CALL_TIMEOUT_MS }, admission,
      });
      apiKey ??= firstStart!.apiKey;
      replicas.push({ api: makeApi(server.url, apiKey), close: () => server.close(5_000) });
    }
    for (const { api } of replicas) await hearsFleet(api);
  }

  const hearsFleet = (api: Api): Promise<unknown> => eventually('the replica hears both workers',
    async () => (await (await fetch(`${api.url}/v1/health`)).json()).fleet?.slots, (slots) => slots === 4, { ms: CEILING_MS, everyMs: 50 });
  let child: ChildServer | undefined;

  async function stopReplicas(): Promise<void> {
    for (const agent of agents) release(agent, 'all');
    await Promise.allSettled(agents.flatMap((agent) => [...agent.calls.values()]));
    await Promise.all(replicas.map((r) => r.close()));
    replicas = [];
  }

  before(async () => {
    db = await createTestDatabase();
    workers.push(...await Promise.all([0, 1].map(() => spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir, pool: 2, env: TEST_KEY, repoRoot: REPO_ROOT }))));
  });

  after(async () => {
    if (child && child.child.exitCode === null) child.child.kill('SIGKILL');
    await child?.exited;
    await stopReplicas();
    await Promise.all(workers.map((w) => w.stop()));
    await removeBuckets(prefix);
    await db?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  /** A new agent granting the hold package with its /volume/data, with `sessions` sessions. */
  async function holdAgent(sessions: number): Promise<HoldAgent> {
    const api = replicas[0].api;
    const agent = await api.call('POST', '/v1/agents', { name: `hold-${++made}`, tools: [{ package: 'hold', data: true }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const ids: string[] = [];
    for (let i = 0; i < sessions; i++) ids.push((await api.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id);
    const holder: HoldAgent = { id: agent.body.id, sessions: ids, data: join(volumesDir, 'agents', agent.body.id, 'data'), calls: new Map() };
    agents.push(holder);
    return holder;
  }

  function hold(agent: HoldAgent, replica: number, session: string, id: string): void {
    agent.calls.set(id, replicas[replica].api.call('POST', `/v1/sessions/${session}/calls`, { tool: 'hold', arguments: { id } }));
  }

  function started(agent: HoldAgent): string[] {
    try {
      return readdirSync(join(agent.data, 'started')).sort();
    } catch {
      return [];
    }
  }

  function release(agent: HoldAgent, id: string): void {
    mkdirSync(join(agent.data, 'release'), { recursive: true });
    writeFileSync(join(agent.data, 'release', id), '');
  }

  /** Calls of the agent the call log has (each is recorded once its replica admitted it, before it runs or waits). */
  async function recorded(agent: HoldAgent): Promise<number> {
    let n = 0;
    for (const session of agent.sessions) n += (await replicas[0].api.call('GET', `/v1/calls?session=${session}&limit=100`)).body.items.length;
    return n;
  }

  /** Releases every call of the agent; answers the most of its calls any guest saw running at once. */
  async function releaseAll(agent: HoldAgent): Promise<number> {
    release(agent, 'all');
    let most = 0;
    for (const [id, answer] of agent.calls) {
      const { status, body } = await answer;
      assert.equal(status, 200, `${id}: ${JSON.stringify(body)}`);
      assert.equal(body.call.outcome, 'ok', `${id}: ${JSON.stringify(body.call)}`);
      most = Math.max(most, (JSON.parse(body.result.content[0].text) as { seen: number }).seen);
    }
    agent.calls.clear();
    return most;
  }

  it('by default an agent\'s share is the fleet\'s slots but one, across both replicas: 3 of its 4 calls run, and another agent gets the 4th slot', async () => {
    await startReplicas();
    const dir = tempDir('subako-hold-');
    writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'hold', description: 'Holds its slot until released.', version: '1.0.0' }));
    cpSync(fixture('c', 'mcp', 'hold.wasm'), join(dir, 'module.wasm'));
    const uploaded = await replicas[0].api.call('POST', '/v1/packages', await packBundle(dir));
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    rmSync(dir, { recursive: true, force: true });

    const a = await holdAgent(2);
    const b = await holdAgent(1);
    // Two calls of each session, one session through each replica (a session's share is half the slots: 2).
    for (const [s, session] of a.sessions.entries()) for (let n = 0; n < 2; n++) hold(a, s, session, `a-${s}-${n}`);
    await until('A\'s 4 calls recorded', async () => (await recorded(a)) === 4, CEILING_MS);
    await until('3 of A\'s calls in their guests', () => started(a).length >= 3, CEILING_MS);
    // B's call, sent after all of A's arrived, takes the slot A may not: A's fourth call waits.
    hold(b, 1, b.sessions[0], 'b');
    await until('B\'s call started while A holds its share', () => started(b).includes('b'), CEILING_MS);
    assert.equal(started(a).length, 3, `A runs ${started(a).join(', ')}: its share of the 4 slots is 3`);

    assert.equal(await releaseAll(b), 1);
    assert.equal(await releaseAll(a), 3, 'at most 3 of A\'s calls ran at once, and 3 did');
    assert.equal(started(a).length, 4);
  });

  it('a lower agent share set on the replicas holds for both together: 2 of 4, though each replica alone would allow 2', async () => {
    await stopReplicas();
    await startReplicas({ agentConcurrency: 2 });
    const a = await holdAgent(4);
    const b = await holdAgent(1);
    // Four sessions, two through each replica, one call each.
    for (const [s, session] of a.sessions.entries()) hold(a, s < 2 ? 0 : 1, session, `a-${s}`);
    await until('A\'s 4 calls recorded', async () => (await recorded(a)) === 4, CEILING_MS);
    await until('2 of A\'s calls in their guests', () => started(a).length >= 2, CEILING_MS);
    // B takes the two slots left free; A's two waiting calls, which came first, still wait for A's own to end.
    hold(b, 0, b.sessions[0], 'b-0');
    hold(b, 1, b.sessions[0], 'b-1');
    await until('both of B\'s calls started', () => started(b).length === 2, CEILING_MS);
    assert.equal(started(a).length, 2, `A runs ${started(a).join(', ')}: its share is 2 across both replicas`);

    // One of A's calls ends: one waiting call takes its place, and no more.
    release(a, started(a)[0]);
    await until('a waiting call of A started in the freed place', () => started(a).length === 3, CEILING_MS);
    assert.equal(await releaseAll(b), 2);
    assert.equal(await releaseAll(a), 2, 'no guest of A ever saw more than 2 of its calls running');
    assert.equal(started(a).length, 4);
  });

  it('a replica killed mid-call holds its slots no longer than its lease: the agent\'s waiting call elsewhere then starts', async () => {
    const LEASE_MS = 2_000;
    await stopReplicas();
    await startReplicas({ agentConcurrency: 1 }, 1);
    child = await spawnServe(join(root, 'killed'), apiKey, [
      '--database', db.url, '--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--volumes-dir', volumesDir,
      '--call-timeout-ms', String(CALL_TIMEOUT_MS), '--agent-concurrency', '1',
    ], { env: { SUBAKO_INSTANCE_LEASE_MS: String(LEASE_MS) } });
    await hearsFleet(child);
    const a = await holdAgent(2);
    // Its answer never comes: the replica that would give it is killed. Only that it ends is waited for.
    const lost = child.call('POST', `/v1/sessions/${a.sessions[0]}/calls`, { tool: 'hold', arguments: { id: 'k-0' } }).catch(() => null);
    await until('the doomed replica\'s call in its guest', () => started(a).includes('k-0'), CEILING_MS);
    hold(a, 0, a.sessions[1], 'k-1');
    await until('both calls recorded', async () => (await recorded(a)) === 2, CEILING_MS);
    assert.deepEqual(started(a), ['k-0'], 'the agent\'s share of 1 holds across the two replicas');

    child.child.kill('SIGKILL');
    await child.exited;
    const killedAt = Date.now();
    await until('the waiting call started once the killed replica\'s lease lapsed', () => started(a).includes('k-1'), CEILING_MS);
    // Its slot would have counted for the call's whole deadline (minutes) had only the slot's own expiry freed it.
    assert.ok(Date.now() - killedAt < CALL_TIMEOUT_MS / 4, `started ${Date.now() - killedAt} ms after the kill`);
    release(a, 'all');
    const answer = await a.calls.get('k-1')!;
    assert.equal(answer.body.call.outcome, 'ok', JSON.stringify(answer.body.call));
    a.calls.clear();
    await lost;
  });
});
