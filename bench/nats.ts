/**
 * Calls through NATS against in process, on the same machine and in the same run: calls/s and p50 with one
 * and two workers (NatsWorker, each its own sandbox pool of two), and the bus's added latency per call (p50
 * through NATS less p50 in process). The p50s through NATS are sampled in alternation with calls in process,
 * so that a load that comes and goes on the machine (other processes on a shared box) falls on both alike
 * and the difference is the bus's, not the moment's. The machine's NATS server (SUBAKO_BENCH_NATS_URL, default
 * 127.0.0.1:4222), subjects and bucket named for this run and removed after. Run alone with
 * `node dist/bench/nats.js`, or as part of `npm run bench`.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect } from '@nats-io/transport-node';
import { NatsBlobStore, packBundle } from '../src/package/index.js';
import { FunctionRuntime, NatsRuntime, NatsWorker, natsSubjects } from '../src/platform/index.js';
import type { Tool } from '../src/tool.js';
import { fixture } from '../test/helpers/paths.js';
import { interleaved, sample, summarize } from './stats.js';
import type { Row } from './run.js';

const CALLS = Number(process.env.BENCH_NATS_CALLS ?? 1000);
const SECONDS = Number(process.env.BENCH_NATS_SECONDS ?? 3);
const IN_FLIGHT = 8;

/**
 * Times `a` and `b` in alternation, `count` each after `warmup` untimed pairs, which of the two goes first
 * alternating too; milliseconds per call of each.
 */
async function rate(tool: Tool, seconds: number): Promise<number> {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (performance.now() < until) {
      await tool.call({ i: done });
      done += 1;
    }
  }));
  return done / seconds;
}

const MiB = 1024 * 1024;
/** Calls counted for the bytes rows. */
const BYTES_CALLS = 20;

export async function natsBench(): Promise<Row[]> {
  const url = process.env.SUBAKO_BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
  const scratch = mkdtempSync(join(tmpdir(), 'subako-bench-nats-'));
  const prefix = `bench_${randomBytes(4).toString('hex')}`;
  const key = randomBytes(32);
  const pkgDir = join(scratch, 'echo');
  const volumes = join(scratch, 'volumes');
  // A session's tmp in the one shape a worker mounts (nats-calls.ts): another is refused, not run.
  const tmpDir = join(volumes, 'sessions', `ses_${'0'.repeat(28)}`, 'tmp');
  mkdirSync(pkgDir);
  mkdirSync(tmpDir, { recursive: true });
  writeFileSync(join(pkgDir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'echo', description: 'Echo.', version: '1.0.0' }));
  copyFileSync(fixture('c', 'mcp', 'echo.wasm'), join(pkgDir, 'module.wasm'));

  const nc = await connect({ servers: url, name: 'subako-bench' });
  const blobs = await NatsBlobStore.open(nc, natsSubjects(prefix).packagesBucket);
  const digest = await blobs.put(await packBundle(pkgDir));
  const ref = { name: 'echo', version: '1.0.0', digest, dir: pkgDir };
  const inProcess = new FunctionRuntime({ poolSize: 2 });
  const tools = (await inProcess.discover(ref)).tools!;
  const context = () => ({ tmpDir });
  const local = (await inProcess.toolbox(ref, tools, context)).echo;
  const runtime = new NatsRuntime({ nc, prefix, volumesRoot: volumes, sealingKey: key, local: new FunctionRuntime({ poolSize: 1 }) });
  const overNats = (await runtime.toolbox(ref, tools, context)).echo;

  const rows: Row[] = [];
  const localP50 = summarize(await sample(CALLS, 100, () => local.call({ hello: 'world' }))).p50;
  const localRate = await rate(local, SECONDS);
  rows.push({ name: 'in process: echo p50 (pool of 2)', value: localP50, unit: 'ms' });
  rows.push({ name: 'in process: calls/s, 8 in flight', value: localRate, unit: 'calls/s' });
  const workers: NatsWorker[] = [];
  for (const count of [1, 2]) {
    // A guest may answer more than the 1 MiB default here: the bytes rows echo 1 MiB of arguments.
    const worker = new NatsWorker({ nc, prefix, blobs, pool: 2, volumesDir: volumes, dataDir: join(scratch, `worker-${count}`), sealingKey: key, name: `bench-${count}`, limits: { stdoutBytes: 8 * MiB } });
    await worker.start();
    workers.push(worker);
    const resendsBefore = runtime.stats().noResponders;
    const [natsTimes, localTimes] = await interleaved(CALLS, 100, [() => overNats.call({ hello: 'world' }), () => local.call({ hello: 'world' })]);
    const resends = runtime.stats().noResponders - resendsBefore;
    const p50 = summarize(natsTimes).p50;
    const alongside = summarize(localTimes).p50;
    const busyBefore = runtime.stats().noResponders;
    const perSecond = await rate(overNats, SECONDS);
    // Eight in flight over a fleet of 2 or 4 slots: the sends answered `busy` per call, each a call and an answer
    // sealed, sent and opened for nothing (a call waits in line instead: nats-runtime.ts).
    const busyPerCall = (runtime.stats().noResponders - busyBefore) / (perSecond * SECONDS);
    // In process again, right after: the two rates are compared at the same moment of the host.
    const localRateNow = await rate(local, SECONDS);
    const rateRatio = perSecond / localRateNow;
    rows.push({ name: `NATS, ${count} worker${count > 1 ? 's' : ''}: echo p50`, value: p50, unit: 'ms', against: { name: 'in process, alternating', value: alongside, ratio: p50 / alongside } });
    rows.push({
      name: `NATS, ${count} worker${count > 1 ? 's' : ''}: calls/s, 8 in flight`, value: perSecond, unit: 'calls/s', against: { name: 'in process, just after', value: localRateNow, ratio: rateRatio },
      ...(count === 2 ? { target: { text: '≥ 0.7× in process', met: rateRatio >= 0.7, by: rateRatio < 0.7 ? `${((1 - rateRatio / 0.7) * 100).toFixed(0)}%` : undefined } } : {}),
    });
    rows.push({ name: `NATS, ${count} worker${count > 1 ? 's' : ''}: sends met busy per call, 8 in flight`, value: busyPerCall, unit: 'sends' });
    if (count === 1) {
      // The bus's own floor, in the same moments: one bare request and reply through the same NATS server, which
      // a quick call crosses once (the call, then its outcome).
      const echoSubject = `${prefix}.bench.echo`;
      const echoing = nc.subscribe(echoSubject, { callback: (_error, message) => { message.respond(message.data); } });
      const [floorTimes] = await interleaved(CALLS, 100, [() => nc.request(echoSubject, new Uint8Array(64))]);
      echoing.unsubscribe();
      const busFloor = summarize(floorTimes).p50;
      rows.push({ name: 'NATS: bare request/reply p50 (the bus floor)', value: busFloor, unit: 'ms' });
      const added = p50 - alongside;
      rows.push({ name: 'NATS: added latency per call (p50)', value: added, unit: 'ms', against: { name: 'bus floor', value: busFloor, ratio: added / busFloor }, target: { text: '≤ 0.3 ms', met: added <= 0.3, by: added > 0.3 ? `${(added - 0.3).toFixed(3)} ms` : undefined } });
      // One call at a time: a worker that offers its slot again before it answers is never found full.
      rows.push({ name: 'NATS: sends that met no free worker, 1 at a time', value: resends, unit: 'sends' });
    }
  }
  // What a call puts on the bus, both ways (the replica and the workers share this connection): its claim, its
  // body's pieces when large, the worker's answers; presences are a few hundred bytes a second besides.
  for (const [label, args] of [['small arguments', { hello: 'world' }], ['1 MiB arguments', { text: 'x'.repeat(MiB) }]] as const) {
    const answer = await overNats.call(args);
    if (answer.isError) throw new Error(`the ${label} call failed: ${JSON.stringify(answer).slice(0, 300)}`);
    const before = nc.stats();
    for (let i = 0; i < BYTES_CALLS; i++) await overNats.call(args);
    const after = nc.stats();
    const perCall = (after.outBytes - before.outBytes) / BYTES_CALLS;
    const argumentBytes = Buffer.byteLength(JSON.stringify(args));
    rows.push({ name: `NATS: bytes on the bus per call, ${label} (echoed)`, value: perCall, unit: 'bytes', against: { name: 'arguments + answer', value: 2 * argumentBytes, ratio: perCall / (2 * argumentBytes) } });
    if (label === 'small arguments') {
      // Both ways, one call at a time (presences, a few a second, count in too): the call and its outcome are two.
      const messages = (after.outMsgs - before.outMsgs) / BYTES_CALLS;
      rows.push({ name: 'NATS: messages on the bus per call, small arguments', value: messages, unit: 'messages', target: { text: '2 (one each way)', met: messages < 2.1, by: messages >= 2.1 ? `${(messages - 2).toFixed(2)} messages` : undefined } });
    }
  }
  for (const worker of workers) await worker.close();
  await blobs.destroy();
  await runtime.close(); // closes the connection too
  await inProcess.close();
  rmSync(scratch, { recursive: true, force: true });
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await natsBench()) {
    const against = row.against ? `  ×${row.against.ratio.toFixed(2)} vs ${row.against.name}` : '';
    const target = row.target ? `  target ${row.target.text}: ${row.target.met ? 'met' : `MISSED by ${row.target.by}`}` : '';
    console.log(`${row.name.padEnd(44)} ${row.value.toFixed(3).padStart(10)} ${row.unit}${against}${target}`);
  }
}
