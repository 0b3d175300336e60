/**
 * Sizes that agree: the REST and MCP gates take 4 MiB of arguments, the NATS server's max_payload is 1 MiB by
 * default. A 3 MiB argument, answered as a 3 MiB outcome, works in scale-out as on one machine, through REST and
 * MCP; on the bus the arguments travel once, in pieces under max_payload, to the worker that took the call (the
 * call itself is a small claim), and the outcome comes back in pieces. In this process: a server on its own,
 * a server in scale-out and a worker on the machine's NATS (its max_payload as it is); a guest's stdout is
 * capped at 1 MiB by default, so both sides raise it to let the guest answer 3 MiB.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startServer } from '../../src/app.js';
import { NatsBlobStore, packBundle } from '../../src/package/index.js';
import { NatsWorker } from '../../src/platform/scale-out/index.js';
import { natsSubjects } from '../../src/platform/scale-out/nats-calls.js';
import { makeApi, probePackageDir, tempDir, TEST_KEY, type Api } from '../server/helpers/harness.js';
import { connectShared, removeBuckets, runName, SHARED_NATS_URL, watchBus } from '../helpers/nats.js';

const MiB = 1024 * 1024;
/** A guest may write this much here (1 MiB by default): enough for a 3 MiB answer. */
const LIMITS = { stdoutBytes: 8 * MiB, callTimeoutMs: 30_000 };
/** 3 MiB of text, not all one letter (so nothing on the way could shrink it). */
const big = (seed: string): string => Array.from({ length: 3 * MiB / 64 }, (_, i) => `${seed}${i.toString(36)}`.padEnd(64, '.')).join('');

describe('a 3 MiB argument and outcome, on one machine and in scale-out', () => {
  const prefix = runName('subako_big');
  const alone = tempDir();
  const scaled = tempDir();
  let one: Api;
  let serve: Api;
  let worker: NatsWorker;
  let workerNc: NatsConnection;
  let bus: NatsConnection;
  let watch: ReturnType<typeof watchBus>;
  const closers: (() => Promise<void>)[] = [];
  const sessions = new Map<Api, { id: string; mcp: { capability_url: string } }>();

  const start = async (dataDir: string, nats?: { url: string; prefix: string }): Promise<Api> => {
    const { server, firstStart } = await startServer({ dataDir, port: 0, examplesDir: null, env: { ...process.env, ...TEST_KEY }, limits: LIMITS, ...(nats ? { nats } : {}) });
    closers.push(() => server.close(5_000));
    return makeApi(server.url, firstStart!.apiKey);
  };
  const setUp = async (server: Api): Promise<void> => {
    assert.equal((await server.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const agent = (await server.call('POST', '/v1/agents', { name: 'big', tools: [{ package: 'probe' }] })).body;
    sessions.set(server, (await server.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body);
  };

  before(async () => {
    bus = await connectShared();
    assert.equal(bus.info?.max_payload, MiB, 'the machine\'s NATS has the default max_payload of 1 MiB');
    watch = watchBus(bus, prefix, TEST_KEY.SUBAKO_SECRET_KEY, { calls: true });
    await bus.flush();
    one = await start(alone);
    serve = await start(scaled, { url: SHARED_NATS_URL, prefix });
    workerNc = await connectShared();
    worker = new NatsWorker({
      nc: workerNc, prefix, blobs: await NatsBlobStore.open(workerNc, natsSubjects(prefix).packagesBucket), pool: 1, volumesDir: join(scaled, 'volumes'),
      dataDir: join(scaled, 'worker'), sealingKey: Buffer.from(TEST_KEY.SUBAKO_SECRET_KEY, 'base64'), limits: LIMITS,
    });
    await worker.start();
    await setUp(one);
    await setUp(serve);
  });

  after(async () => {
    await worker?.close();
    await workerNc?.close();
    for (const close of closers) await close();
    await removeBuckets(prefix);
    await bus?.close();
    for (const dir of [alone, scaled]) rmSync(dir, { recursive: true, force: true });
  });

  /** What this run's sealed messages of `kind` came to, from the `from`-th seen: their number and largest size. */
  const onBus = (kind: string, from: number): { count: number; largest: number; bytes: number } => {
    const mine = watch.seen.slice(from).filter((m) => m.opened?.kind === kind);
    return { count: mine.length, largest: Math.max(0, ...mine.map((m) => m.data.length)), bytes: mine.reduce((sum, m) => sum + m.data.length, 0) };
  };

  it('through REST: the outcome is the argument, as on one machine; the arguments cross the bus once, in pieces', async () => {
    const text = big('rest');
    const answers = [];
    for (const server of [one, serve]) {
      const from = watch.seen.length;
      const answer = await server.call('POST', `/v1/sessions/${sessions.get(server)!.id}/calls`, { tool: 'echo', arguments: { text } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 500));
      assert.equal(answer.body.call.outcome, 'ok', `${server === serve ? 'scale-out' : 'one machine'}: ${JSON.stringify(answer.body.call.crash)}`);
      answers.push(answer.body.result);
      if (server === serve) {
        const claims = onBus('call', from);
        const pieces = onBus('body', from);
        const outcomeParts = onBus('outcome_part', from);
        assert.ok(claims.count >= 1 && claims.largest < 4_096, `the call is a small claim: ${JSON.stringify(claims)}`);
        assert.ok(pieces.count >= 3 && pieces.largest <= MiB, `the arguments came in pieces under max_payload: ${JSON.stringify(pieces)}`);
        assert.ok(pieces.bytes < 3.2 * MiB, `once: ${JSON.stringify(pieces)}`);
        assert.ok(outcomeParts.count >= 3 && outcomeParts.largest <= MiB, `the outcome came back in pieces: ${JSON.stringify(outcomeParts)}`);
      }
    }
    assert.deepEqual(answers[1], answers[0]);
    assert.ok(JSON.stringify(answers[0]).includes(text.slice(-100)));
  });

  it('through MCP: the same', async () => {
    const text = big('mcp');
    const texts: string[] = [];
    for (const server of [one, serve]) {
      const client = new Client({ name: 'big', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(new URL(sessions.get(server)!.mcp.capability_url)));
      try {
        const result = await client.callTool({ name: 'echo', arguments: { text } });
        assert.notEqual(result.isError, true, JSON.stringify(result).slice(0, 500));
        texts.push((result.content as { text?: string }[]).map((b) => b.text ?? '').join(''));
      } finally {
        await client.close();
      }
    }
    assert.equal(texts[1], texts[0]);
    assert.equal(texts[0], JSON.stringify({ text }));
  });

  it('a call that waits for the busy worker re-sends its claim, never its body', async () => {
    const session = sessions.get(serve)!.id;
    const from = watch.seen.length;
    // The worker has one slot: two large calls at once, one waits and asks again until the first is done.
    const answers = await Promise.all(['a', 'b'].map((seed) => serve.call('POST', `/v1/sessions/${session}/calls`, { tool: 'echo', arguments: { text: big(seed) } })));
    for (const answer of answers) assert.equal(answer.body.call?.outcome, 'ok', JSON.stringify(answer.body).slice(0, 500));
    const pieces = onBus('body', from);
    assert.ok(pieces.bytes < 6.4 * MiB, `each body crossed the bus once: ${JSON.stringify(pieces)}`);
  });
});
