/**
 * Scale-out, end to end, with real processes: two `subako serve` replicas on one PostgreSQL database and one
 * NATS (the machine's shared server, under a prefix of this run's own), each with its own data directory and
 * the same sealing key, and two `subako worker` processes; one volumes directory they all mount. What is made
 * through one replica is served by the other: packages and skills uploaded through replica 1, a session started
 * through replica 2, MCP calls through both, a deletion through one refused by the other at once. Nothing is
 * lost or doubled: every call is in the call log once, and a replica killed mid-call leaves that call
 * `unknown` (crash reason `interrupted`), marked by the other once the dead one's lease ran out, while calls through the other go on.
 * And what a shared database needs of the processes on it: a first start made once, one sealing key.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm } from '@nats-io/obj';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startServer } from '../../src/app.js';
import { defaultServerConfig, resolveServerConfig } from '../../src/config.js';
import { ValidationError } from '../../src/errors.js';
import { packBundle } from '../../src/package/index.js';
import { natsSubjects } from '../../src/platform/scale-out/nats-calls.js';
import { makeApi, probePackageDir, skillDir, spawnServe, tempDir, TEST_KEY, type Api, type ChildServer } from '../server/helpers/harness.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, connectShared, removeBuckets, runName, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

/** Short, so that the other replica marks a dead one's calls within the test (30 s by default). */
const LEASE_MS = 2_000;
const CALLS_PER_REPLICA = 50;

interface CallView {
  id: string; session_id: string; tool: string; outcome: string; crash: { reason: string; message: string } | null;
  arguments: Record<string, unknown>; worker: { id: string; host: string } | null;
}

describe('two API replicas and two workers on one PostgreSQL and NATS', () => {
  const prefix = runName('subako');
  const subjects = natsSubjects(prefix);
  const volumesDir = tempDir('subako-shared-volumes-');
  const dataDirs = [tempDir(), tempDir(), tempDir()];
  let db: TestDatabase;
  let bus: NatsConnection;
  const replicas: ChildServer[] = [];
  let one: Api;
  let two: Api;
  const workers: ChildWorker[] = [];
  let agentId: string;
  let session: { id: string; mcp: { capability_url: string } };
  let skillDigest: string;

  const replicaArgs = (): string[] => [
    '--database', db.url, '--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--volumes-dir', volumesDir,
    '--call-timeout-ms', '6000', '--session-concurrency', '2',
  ];
  /** The same path on the other replica: a session's endpoint URL names the replica that made it. */
  const onReplica = (api: Api, url: string): URL => new URL(new URL(url).pathname, api.url);
  const allCalls = async (api: Api, query = ''): Promise<CallView[]> => {
    const items: CallView[] = [];
    for (let after: string | null = null; ;) {
      const page = await api.call('GET', `/v1/calls?limit=37${query}${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      items.push(...(page.body.items as CallView[]));
      after = page.body.next_cursor as string | null;
      if (after === null) return items;
    }
  };
  const echoText = (result: { content: unknown }): string => (result.content as { type: string; text?: string }[]).map((b) => b.text ?? '').join('');

  before(async () => {
    db = await createTestDatabase();
    bus = await connectShared();
    await bus.flush();
  });

  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    for (const replica of replicas) if (replica.child.exitCode === null) replica.child.kill('SIGTERM');
    await Promise.all(replicas.map((r) => r.exited));
    await removeBuckets(prefix);
    await bus?.close();
    await db?.drop();
    for (const dir of [volumesDir, ...dataDirs]) rmSync(dir, { recursive: true, force: true });
  });

  it('two replicas starting at once on a fresh database make one first start: one admin key printed, one demo agent', async () => {
    // A placeholder key: spawnServe then waits for the start only, not for a first-start key neither may print.
    const started = await Promise.all(dataDirs.slice(0, 2).map((dir) => spawnServe(dir, 'sk_none', replicaArgs(), { env: { SUBAKO_INSTANCE_LEASE_MS: String(LEASE_MS) } })));
    replicas.push(...started);
    const keyOf = (r: ChildServer): string | undefined => /^ {2}(sk_\S+)$/m.exec(r.stdout())?.[1];
    for (const deadline = Date.now() + 10_000; !started.some(keyOf) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 50));
    const keys = started.map(keyOf).filter((k): k is string => k !== undefined);
    assert.equal(keys.length, 1, `exactly one replica printed a first-start key:\n${started.map((r) => r.stdout()).join('\n---\n')}`);
    one = makeApi(started[0].url, keys[0]);
    two = makeApi(started[1].url, keys[0]);
    const agents = (await one.call('GET', '/v1/agents?limit=200')).body.items as { name: string }[];
    assert.deepEqual(agents.map((a) => a.name), ['demo']);
    const apiKeys = (await two.call('GET', '/v1/keys?limit=200')).body;
    assert.equal(apiKeys.items.length, 1, JSON.stringify(apiKeys));
  });

  it('a third replica holding another sealing key refuses to start with one line, and exits 1', async () => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'serve', '--port', '0', '--data-dir', dataDirs[2], ...replicaArgs()], {
      env: { ...process.env, SUBAKO_SECRET_KEY: Buffer.alloc(32, 9).toString('base64') }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (chunk) => { err += chunk; });
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    assert.equal(code, 1);
    // The bus is met before the database: its key check refuses first (the database's would say the same).
    assert.equal(err, `subako serve: cannot start: the sealing key differs from the one this deployment's NATS bus was set up with (its check is in the bucket ${prefix}_bus); give every replica and worker the same SUBAKO_SECRET_KEY and --nats-prefix\n`);
  });

  it('starts two workers, and takes a package and a skill through replica 1 and a session of its agent through replica 2', async () => {
    workers.push(...await Promise.all([0, 1].map(() => spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir, pool: 2, env: TEST_KEY, repoRoot: REPO_ROOT }))));
    assert.notEqual(workers[0].name, workers[1].name);
    assert.equal((await one.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const skill = await one.call('POST', '/v1/skills', await packBundle(skillDir('howto')));
    assert.equal(skill.status, 201, JSON.stringify(skill.body));
    skillDigest = skill.body.digest;
    const agent = await one.call('POST', '/v1/agents', { name: 'scaled', tools: [{ package: 'probe' }], skills: [{ name: 'howto' }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    agentId = agent.body.id;
    const made = await two.call('POST', `/v1/agents/${agentId}/sessions`, {});
    assert.equal(made.status, 201, JSON.stringify(made.body));
    session = made.body;
  });

  it('keeps the skill\'s bytes in the deployment\'s NATS bucket, and a call through replica 2 reads it under /skills', async () => {
    const bucket = await new Objm(bus).open(subjects.skillsBucket);
    const info = await bucket.info(skillDigest);
    assert.ok(info && !info.deleted, `the skill ${skillDigest} is in the bucket ${subjects.skillsBucket}`);
    const read = await two.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'read_file', arguments: { path: '/skills/howto/SKILL.md' } });
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.call.outcome, 'ok', JSON.stringify(read.body.call));
    assert.match(echoText(read.body.result), /A test skill/);
  });

  it(`answers ${CALLS_PER_REPLICA} MCP calls through each replica's endpoint of the one session right, on both workers`, async () => {
    const clients = await Promise.all([one, two].map(async (api) => {
      const client = new Client({ name: 'scale-out', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(onReplica(api, session.mcp.capability_url)));
      return client;
    }));
    try {
      const answers = await Promise.all(clients.map(async (client, replica) => {
        const texts: string[] = [];
        // A few at a time per replica (its session may run two at once and queue sixteen).
        for (let n = 0; n < CALLS_PER_REPLICA; n += 5) {
          const batch = await Promise.all(Array.from({ length: 5 }, (_, k) => client.callTool({ name: 'echo', arguments: { n: n + k, replica } })));
          for (const result of batch) {
            assert.notEqual(result.isError, true, JSON.stringify(result));
            texts.push(echoText(result));
          }
        }
        return texts;
      }));
      answers.forEach((texts, replica) => {
        assert.deepEqual(texts.map((t) => JSON.parse(t)), Array.from({ length: CALLS_PER_REPLICA }, (_, n) => ({ n, replica })));
      });
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    // The records name the worker each call ran on (as the replica chose it): both ran some of these calls.
    const ours = (await allCalls(one)).filter((c) => c.tool === 'echo' && typeof c.arguments?.replica === 'number');
    assert.equal(ours.length, 2 * CALLS_PER_REPLICA);
    for (const worker of workers) {
      assert.ok(ours.some((c) => c.worker?.id === worker.name), `worker ${worker.name} ran some of the calls: ${JSON.stringify(ours.map((c) => c.worker?.id))}`);
    }
  });

  it('has every call in the call log exactly once, none running, and both replicas list the same calls', async () => {
    const [byOne, byTwo] = await Promise.all([allCalls(one, `&session=${session.id}`), allCalls(two, `&session=${session.id}`)]);
    const echoes = byOne.filter((c) => c.tool === 'echo');
    assert.equal(echoes.length, 2 * CALLS_PER_REPLICA);
    assert.equal(new Set(byOne.map((c) => c.id)).size, byOne.length, 'no call listed twice');
    assert.equal(byOne.length, 2 * CALLS_PER_REPLICA + 1, 'the echoes and the skill read, nothing more');
    assert.deepEqual(byOne.filter((c) => c.outcome !== 'ok'), [], 'every call ended ok');
    assert.deepEqual(byTwo.map((c) => c.id), byOne.map((c) => c.id));
    // And the same through the session's own list, oldest first.
    const listed = await two.call('GET', `/v1/sessions/${session.id}/calls?limit=200`);
    assert.deepEqual((listed.body.items as CallView[]).map((c) => c.id), byOne.map((c) => c.id).reverse());
  });

  it('refuses, through replica 2 at once, a session deleted through replica 1', async () => {
    const doomed = (await one.call('POST', `/v1/agents/${agentId}/sessions`, {})).body as { id: string; mcp: { capability_url: string } };
    const client = new Client({ name: 'scale-out', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(onReplica(two, doomed.mcp.capability_url)));
    try {
      assert.equal(echoText(await client.callTool({ name: 'echo', arguments: { alive: true } })), '{"alive":true}');
      assert.equal((await one.call('DELETE', `/v1/sessions/${doomed.id}`)).status, 204);
      assert.equal((await two.call('GET', `/v1/sessions/${doomed.id}`)).status, 404);
      await assert.rejects(client.callTool({ name: 'echo', arguments: { alive: false } }));
      const raw = await fetch(onReplica(two, doomed.mcp.capability_url), {
        method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      assert.equal(raw.status, 404);
    } finally {
      await client.close().catch(() => undefined);
    }
  });

  it('a replica killed mid-call leaves that call unknown (interrupted), marked by the other once the lease ran out; calls through the other go on', async () => {
    const slow = one.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'timeout', arguments: {} }).catch(() => null);
    let victim: CallView | undefined;
    for (const deadline = Date.now() + 10_000; !victim && Date.now() < deadline;) {
      victim = (await allCalls(two, `&session=${session.id}&tool=timeout`)).find((c) => c.outcome === 'running');
      if (!victim) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(victim, 'the slow call is recorded running');
    replicas[0].child.kill('SIGKILL');
    await replicas[0].exited;
    assert.equal(await slow, null, 'its caller got no answer: the replica was gone');
    // Until the lease runs out the call is left alone; after it, replica 2 marks it. Replica 2 answers throughout.
    let made = 0;
    let seen: CallView | undefined;
    for (const deadline = Date.now() + 6 * LEASE_MS; Date.now() < deadline;) {
      const answer = await two.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'echo', arguments: { during: made } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.call.outcome, 'ok', JSON.stringify(answer.body.call));
      made++;
      seen = (await two.call('GET', `/v1/calls/${victim.id}`)).body as CallView;
      if (seen.outcome !== 'running') break;
    }
    assert.equal(seen?.outcome, 'unknown', JSON.stringify(seen));
    assert.equal(seen?.crash?.reason, 'interrupted');
    assert.match(seen!.crash!.message, /^the server running the call stopped .* whether the tool ran to its end is unknown/);
    assert.ok(made > 0);
    const calls = await allCalls(two, `&session=${session.id}`);
    assert.equal(new Set(calls.map((c) => c.id)).size, calls.length, 'no call listed twice');
    assert.equal(calls.length, 2 * CALLS_PER_REPLICA + 1 + 1 + made, 'the earlier calls, the slow one, and those made while waiting');
    assert.deepEqual(calls.filter((c) => c.outcome === 'running'), [], 'none left running');
  });
});

describe('the instance lease, as a setting', () => {
  it('is refused, naming what would do, when it is not a whole number of milliseconds from 1000', async () => {
    for (const text of ['5', 'soon', '2.5']) {
      assert.throws(() => resolveServerConfig({ defaults: defaultServerConfig(), env: { SUBAKO_INSTANCE_LEASE_MS: text } }), (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.equal(err.problems[0].code, 'config.value');
        assert.match(err.problems[0].message, /^SUBAKO_INSTANCE_LEASE_MS is .*; it takes a whole number from 1000 to 3600000$/);
        return true;
      });
    }
    const dataDir = tempDir();
    try {
      await assert.rejects(startServer({ dataDir, port: 0, examplesDir: null, env: TEST_KEY, instanceLeaseMs: 10 }),
        /the instance lease must be a whole number of milliseconds, at least 1000 \(got 10\)/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
