/**
 * Calls over NATS, for real: one `subako serve --nats` and two `subako worker` child processes on the
 * machine's NATS server (subjects and bucket named for this run, the bucket removed after). Calls made
 * through a session's MCP endpoint spread over both workers, each lands in the call log once, and a vault
 * credential a call's egress uses never crosses the bus in the clear.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { NatsConnection } from '@nats-io/transport-node';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, skillDir, spawnServe, tempDir, TEST_KEY, type ChildServer } from '../server/helpers/harness.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { connectShared, removeBuckets, runName, SHARED_NATS_URL, spawnWorker, watchBus, type ChildWorker, type SeenMessage } from '../helpers/nats.js';
import { progressGuest } from '../helpers/wat-progress-guest.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { startServer as startHttps, type TestServer } from '../egress/helpers/servers.js';

const SECRET = 'Bearer nats-secret-5c1e9a77d3';

describe('calls dispatched to workers over NATS', () => {
  const prefix = runName('subako');
  const dataDir = tempDir();
  const scratch = mkdtempSync(join(tmpdir(), 'subako-nats-test-'));
  let serve: ChildServer;
  let workers: ChildWorker[] = [];
  let bus: NatsConnection;
  let https: TestServer;
  /** Every message on the bus during the tests, as a process with the deployment's key reads it. */
  let watch: ReturnType<typeof watchBus>;
  const seen = (): SeenMessage[] => watch.seen;

  before(async () => {
    const caFile = join(scratch, 'ca.pem');
    writeFileSync(caFile, makeTestCa().ca);
    https = await startHttps((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ authorized: req.headers.authorization === SECRET, traceparent: req.headers.traceparent ?? null }));
    });
    bus = await connectShared();
    watch = watchBus(bus, prefix, TEST_KEY.SUBAKO_SECRET_KEY, { calls: true });
    await bus.flush();
    serve = await spawnServe(dataDir, undefined, ['--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--no-examples', '--allow-private-destinations']);
    const env = { ...TEST_KEY, NODE_EXTRA_CA_CERTS: caFile };
    workers = await Promise.all([0, 1].map(() => spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir: join(dataDir, 'volumes'), pool: 2, env, repoRoot: REPO_ROOT })));
  });

  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    serve.child.kill('SIGTERM');
    await serve.exited;
    await removeBuckets(prefix);
    await bus.close();
    await https.close();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function probeSession(egress?: object, vaultIds: string[] = []) {
    const uploaded = await serve.call('POST', '/v1/packages', await packBundle(probePackageDir()));
    assert.ok(uploaded.status === 201 || uploaded.status === 200, JSON.stringify(uploaded.body));
    const agent = await serve.call('POST', '/v1/agents', { name: runName('agent'), tools: [{ package: 'probe', ...(egress ? { egress } : {}) }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    return (await serve.call('POST', `/v1/agents/${agent.body.id}/sessions`, { vault_ids: vaultIds })).body;
  }

  it('50 calls through the session\'s MCP endpoint spread over both workers, each in the call log once', async () => {
    const session = await probeSession();
    const client = new Client({ name: 'nats-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    const before = seen().length;
    try {
      const results = [];
      // Eight at a time: more than one worker's pool, so both must take some.
      for (let batch = 0; batch < 50; batch += 8) {
        results.push(...await Promise.all(Array.from({ length: Math.min(8, 50 - batch) }, (_, i) =>
          client.callTool({ name: 'echo', arguments: { n: batch + i } }))));
      }
      assert.equal(results.length, 50);
      results.forEach((result, n) => {
        assert.notEqual(result.isError, true, JSON.stringify(result));
        assert.deepEqual(JSON.parse((result.content as { text: string }[])[0].text), { n });
      });
    } finally {
      await client.close();
    }
    // One replica, so each call was sent once: to a worker whose slots its own calls left free.
    const sent = watch.sentTo(before);
    assert.equal(sent.length, 50, 'each call was sent once');
    const calls = (await serve.call('GET', `/v1/sessions/${session.id}/calls?limit=100`)).body.items as { id: string; arguments: { n: number }; outcome: string; worker: { id: string } | null }[];
    const taken = new Map<string, number>();
    for (const call of calls) taken.set(call.worker?.id ?? 'none', (taken.get(call.worker?.id ?? 'none') ?? 0) + 1);
    for (const worker of workers) assert.ok((taken.get(worker.name) ?? 0) > 0, `worker ${worker.name} took no call: ${JSON.stringify([...taken])}`);
    assert.equal(workers.reduce((sum, w) => sum + (taken.get(w.name) ?? 0), 0), 50, 'the records name the worker each call ran on');
    assert.deepEqual([...taken.keys()].sort(), workers.map((w) => w.name).sort(), 'and the workers the calls were sent to');
    assert.equal(calls.length, 50);
    assert.equal(new Set(calls.map((c) => c.id)).size, 50);
    assert.deepEqual(calls.map((c) => c.arguments.n).sort((a, b) => a - b), Array.from({ length: 50 }, (_, n) => n));
    assert.ok(calls.every((c) => c.outcome === 'ok'), JSON.stringify(calls.filter((c) => c.outcome !== 'ok')));
  });

  it('a vault credential reaches the destination, and no message on the bus holds it in the clear', async () => {
    const origin = `https://localhost:${https.port}`;
    const vault = (await serve.call('POST', '/v1/vaults', { name: runName('vault') })).body;
    const stored = await serve.call('POST', `/v1/vaults/${vault.id}/credentials`, {
      target: origin, payload: { auth_scheme: 'static_bearer', token: SECRET.slice('Bearer '.length) },
    });
    assert.equal(stored.status, 201, JSON.stringify(stored.body));
    const session = await probeSession({ allow: [`localhost:${https.port}`], grants: [origin] }, [vault.id]);
    const before = seen().length;
    const called = await serve.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'http', arguments: { request: { url: `${origin}/x` } } });
    assert.equal(called.status, 200, JSON.stringify(called.body));
    const answer = JSON.parse(called.body.result.content[0].text);
    assert.equal(JSON.parse(answer.ok.body.text).authorized, true);
    const during = seen().slice(before);
    assert.ok(during.some((m) => m.opened?.kind === 'call' && m.opened.body.egress?.credentials?.length === 1), 'the call crossed the bus, its credential inside the sealed call');
    const token = SECRET.slice('Bearer '.length);
    for (const message of during) assert.ok(!message.data.includes(token), `the secret is in the clear on ${message.subject}`);
  });

  it('a request\'s traceparent travels with the call to its worker, and out on the guest\'s HTTP request', async () => {
    const trace = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const session = await probeSession({ allow: [`localhost:${https.port}`] });
    const client = new Client({ name: 'nats-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    const before = seen().length;
    try {
      const result = await client.callTool({ name: 'http', arguments: { request: { url: `https://localhost:${https.port}/t` } }, _meta: { traceparent: trace } });
      const answer = JSON.parse((result.content as { text: string }[])[0].text);
      assert.equal(JSON.parse(answer.ok.body.text).traceparent, trace);
    } finally {
      await client.close();
    }
    assert.ok(seen().slice(before).some((m) => m.opened?.kind === 'call' && m.opened.body.traceparent === trace), 'the trace context crossed the bus with the call');
  });

  it('a client going away mid-call cancels the run on its worker, which answers `cancelled` at once', async () => {
    const session = await probeSession();
    const before = seen().length;
    const controller = new AbortController();
    const call = fetch(`${serve.url}/v1/sessions/${session.id}/calls`, {
      method: 'POST', signal: controller.signal,
      headers: { authorization: `Bearer ${serve.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'timeout', arguments: {} }),
    });
    // Aborted once a worker is running it, as its first heartbeat says (bounded: a call never taken fails the test).
    for (let i = 0; i < 400 && !seen().slice(before).some((m) => m.opened?.kind === 'alive'); i++) await new Promise((r) => setTimeout(r, 25));
    controller.abort();
    await assert.rejects(call, { name: 'AbortError' });
    let logged: { outcome: string } | undefined;
    for (let i = 0; i < 400 && (logged === undefined || logged.outcome === 'running'); i++) {
      await new Promise((r) => setTimeout(r, 25));
      logged = (await serve.call('GET', `/v1/sessions/${session.id}/calls`)).body.items[0];
    }
    assert.equal(logged?.outcome, 'cancelled');
    assert.ok(seen().slice(before).some((m) => m.opened?.kind === 'cancel'), 'the replica told the worker that took the call');
    const outcomeOf = () => seen().slice(before).find((m) => m.opened?.kind === 'outcome');
    for (let i = 0; i < 400 && !outcomeOf(); i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(outcomeOf()!.opened!.body.outcome.status, 'cancelled', 'the worker stopped the run rather than let it reach its deadline');
  });

  it("a guest's progress reaches the MCP client from its worker, in order", async () => {
    const dir = tempDir('subako-progress-');
    writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'steps', description: 'Reports progress.', version: '1.0.0' }));
    writeFileSync(join(dir, 'module.wasm'), await progressGuest());
    assert.equal((await serve.call('POST', '/v1/packages', await packBundle(dir))).status, 201);
    const agent = (await serve.call('POST', '/v1/agents', { name: runName('agent'), tools: [{ package: 'steps' }] })).body;
    const session = (await serve.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    const client = new Client({ name: 'nats-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    try {
      const { tools } = await client.listTools();
      const name = tools.map((t) => t.name).find((n) => n.endsWith('work'))!;
      const updates: { progress: number; total?: number }[] = [];
      const result = await client.callTool({ name, arguments: {} }, { onprogress: (p) => void updates.push(p) });
      assert.deepEqual(result.content, [{ type: 'text', text: 'ok' }]);
      assert.deepEqual(updates.map(({ progress, total }) => ({ progress, total })), [{ progress: 1, total: 2 }, { progress: 2, total: 2 }]);
    } finally {
      await client.close();
    }
  });

  it("a call's skills and volumes are the shared file system's: the worker mounts /skills and /volume/data", async () => {
    assert.equal((await serve.call('POST', '/v1/skills', await packBundle(skillDir('howto')))).status, 201);
    const agent = await serve.call('POST', '/v1/agents', { name: runName('agent'), tools: [{ package: 'probe', data: true }], skills: [{ name: 'howto' }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await serve.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
    const call = async (tool: string, args: Record<string, unknown>) => {
      const answer = await serve.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: args });
      return (answer.body.result.content as { text?: string }[]).map((b) => b.text ?? '').join('');
    };
    assert.match(await call('read_file', { path: '/skills/howto/SKILL.md' }), /Use it well/);
    assert.match(await call('write_file', { path: '/volume/data/kept.txt', text: 'written on a worker' }), /^wrote /);
    assert.equal(readFileSync(join(dataDir, 'volumes', 'agents', agent.body.id, 'data', 'kept.txt'), 'utf8'), 'written on a worker');
  });
});
