/**
 * `npm run bench`: how fast a call is, each figure against a floor measured in the same run (these machines
 * are shared and noisy, so absolute times drift; ratios hold). Prints a table and writes
 * bench/results/latest.json. Not part of `npm test`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FunctionHost } from '../src/function/host.js';
import { buildRequest } from '../src/function/protocol.js';
import { readPackageDir } from '../src/package/package-dir.js';
import { REPO_ROOT, fixture } from '../test/helpers/paths.js';
import { interleaved, sample, summarize, type Summary } from './stats.js';
import { egressBench } from './egress.js';
import { endpointBench } from './endpoint.js';
import { natsBench } from './nats.js';
import { endpointPeersBench } from './endpoint-peers.js';
import { coldStartBench } from './cold-start.js';
import { peersBench } from './peers/index.js';
import { soakBench } from './soak.js';

export interface Row {
  name: string;
  value: number;
  unit: string;
  /** The figure this one is compared with, and the ratio value / against. */
  against?: { name: string; value: number; ratio: number };
  /** A target from the issue, and whether it was met. */
  target?: { text: string; met: boolean; by?: string };
}

const rows: Row[] = [];
const ms = (x: number) => Math.round(x * 1000) / 1000;
const scratch = mkdtempSync(join(tmpdir(), 'subako-bench-'));
const ECHO = readFileSync(fixture('c', 'mcp', 'echo.wasm'));
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);

function add(row: Row): void {
  rows.push(row);
  const against = row.against ? `  ×${row.against.ratio.toFixed(2)} vs ${row.against.name} (${ms(row.against.value)} ${row.unit})` : '';
  const target = row.target ? `  target ${row.target.text}: ${row.target.met ? 'met' : `MISSED${row.target.by ? ` by ${row.target.by}` : ''}`}` : '';
  console.log(`${row.name.padEnd(44)} ${String(ms(row.value)).padStart(10)} ${row.unit.padEnd(8)}${against}${target}`);
}

function atMost(value: number, limit: number, unit: string): Row['target'] {
  return { text: `≤ ${limit} ${unit}`, met: value <= limit, by: value > limit ? `${ms(value - limit)} ${unit} (${((value / limit - 1) * 100).toFixed(0)}%)` : undefined };
}

/** The floor worker, fed the same module and the same request line: one call of it per `call()`. */
async function startFloor(requestLine: string): Promise<{ call(): Promise<void>; close(): Promise<number> }> {
  const worker = new Worker(new URL('./floor-worker.js', import.meta.url));
  const module = await WebAssembly.compile(ECHO);
  const next = () => new Promise<void>((resolve) => worker.once('message', () => resolve()));
  worker.postMessage({ module, stdin: Buffer.from(requestLine) });
  await next();
  return {
    call: () => {
      const answered = next();
      worker.postMessage({});
      return answered;
    },
    close: () => worker.terminate(),
  };
}

async function throughput(host: FunctionHost, loaded: Awaited<ReturnType<FunctionHost['load']>>, inFlight: number, seconds: number): Promise<number> {
  const tmpDir = join(scratch, `tp-${inFlight}`);
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (performance.now() < until) {
      await host.call(loaded, 'echo', { i: done }, { tmpDir });
      done += 1;
    }
  }));
  return done / seconds;
}

async function naiveBench(requestLine: string, runs: number): Promise<Summary> {
  const stdinPath = join(scratch, 'naive-stdin');
  writeFileSync(stdinPath, requestLine);
  const modulePath = fixture('c', 'mcp', 'echo.wasm');
  const child = new URL('./naive-child.js', import.meta.url).pathname;
  return summarize(await sample(runs, 2, () => new Promise<void>((resolve, reject) => {
    const fd = openSync(stdinPath, 'r');
    const proc = spawn(process.execPath, ['--no-warnings', child, modulePath, '0'], { stdio: [fd, 'pipe', 'inherit'] });
    proc.stdout?.resume();
    proc.on('exit', (code) => {
      closeSync(fd);
      if (code === 0) resolve();
      else reject(new Error(`naive host exited ${code}`));
    });
  })));
}

async function main(): Promise<void> {
  console.log(`subako bench — node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, ${Math.round(totalmem() / 2 ** 30)} GiB\n`);
  const request = buildRequest('call', 'tools/call', { name: 'echo', arguments: { hello: 'world' } });

  // 1. Call latency through the library, warm pool, guests in the sandbox process; 2. the floor, same module, same
  // request; 2b. the same calls with guests in worker threads of this process (no confinement by process): taken
  // in turn, so that the three see the same moments of the host and the cost of the process boundary is one number.
  const host = new FunctionHost({ poolSize: 2 });
  const loaded = await host.load({ name: 'echo', moduleBytes: ECHO, assetsDir: null });
  const threaded = new FunctionHost({ poolSize: 2, isolation: 'thread' });
  const threadedLoaded = await threaded.load({ name: 'echo', moduleBytes: ECHO, assetsDir: null });
  const floorWorker = await startFloor(request.line);
  const tmpDir = join(scratch, 'latency');
  mkdirSync(tmpDir);
  const [callTimes, floorTimes, threadTimes] = await interleaved(CALLS, 200, [
    () => host.call(loaded, 'echo', { hello: 'world' }, { tmpDir }),
    () => floorWorker.call(),
    () => threaded.call(threadedLoaded, 'echo', { hello: 'world' }, { tmpDir }),
  ]);
  await floorWorker.close();
  const call = summarize(callTimes);
  const floor = summarize(floorTimes);
  const inThreads = summarize(threadTimes);
  add({ name: 'floor: instantiate + run, no-op host (p50)', value: floor.p50, unit: 'ms' });
  add({ name: 'full call p50 (echo, warm pool)', value: call.p50, unit: 'ms', against: { name: 'floor p50', value: floor.p50, ratio: call.p50 / floor.p50 }, target: atMost(call.p50 / floor.p50, 2, '× floor') });
  add({ name: 'full call p99', value: call.p99, unit: 'ms', against: { name: 'floor p99', value: floor.p99, ratio: call.p99 / floor.p99 } });
  add({ name: 'full call p50, guests in this process', value: inThreads.p50, unit: 'ms', against: { name: 'floor p50', value: floor.p50, ratio: inThreads.p50 / floor.p50 } });
  add({ name: 'sandbox process: cost per call (p50)', value: call.p50 - inThreads.p50, unit: 'ms', against: { name: 'guests in this process', value: inThreads.p50, ratio: call.p50 / inThreads.p50 } });
  const threadedRate = await throughput(threaded, threadedLoaded, 8, 2);
  await threaded.close();

  // 3. Throughput and memory per in-flight call.
  const single = await throughput(host, loaded, 1, 2);
  for (const inFlight of [1, 2, 8]) {
    const rate = inFlight === 1 ? single : await throughput(host, loaded, inFlight, 2);
    add({ name: `throughput, ${inFlight} in flight`, value: rate, unit: 'calls/s', against: { name: '1 in flight', value: single, ratio: rate / single } });
    if (inFlight === 8) add({ name: 'throughput, 8 in flight, guests in this process', value: threadedRate, unit: 'calls/s', against: { name: 'sandbox process', value: rate, ratio: threadedRate / rate } });
  }
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const wide = new FunctionHost({ poolSize: 8 });
  const wideLoaded = await wide.load({ name: 'echo', moduleBytes: ECHO, assetsDir: null });
  await Promise.all(Array.from({ length: 64 }, (_, i) => wide.call(wideLoaded, 'echo', { i }, { tmpDir })));
  const rssAfter = process.memoryUsage().rss;
  add({ name: 'RSS growth per in-flight call (8 workers)', value: (rssAfter - rssBefore) / 8 / 2 ** 20, unit: 'MiB' });
  await wide.close();

  // 4. Cold path: a package just loaded (compile included), and discovery of the examples.
  const coldHost = new FunctionHost({ poolSize: 1 });
  const coldStart = performance.now();
  const fresh = await coldHost.load({ name: 'echo-cold', moduleBytes: Buffer.concat([ECHO]), assetsDir: null });
  await coldHost.call(fresh, 'echo', {}, { tmpDir });
  add({ name: 'cold: load (compile) + first call', value: performance.now() - coldStart, unit: 'ms', against: { name: 'warm p50', value: call.p50, ratio: (performance.now() - coldStart) / call.p50 } });
  const examples = join(REPO_ROOT, 'examples', 'packages');
  for (const name of readdirSync(examples).sort()) {
    const read = await readPackageDir(join(examples, name));
    if (!read.ok) continue;
    const pkg = await coldHost.load({ name: read.manifest.name, moduleBytes: read.moduleBytes, assetsDir: read.assetsDir });
    const discovery = await coldHost.discover(pkg);
    add({ name: `discovery: examples/packages/${name}`, value: discovery.durationMs, unit: 'ms' });
  }
  await coldHost.close();
  // 4b. The first call of the example package just loaded, warm and in fresh processes (cache empty, filled).
  for (const row of await coldStartBench()) add(row);

  // 5. A naive host: a new Node process per call with node:wasi.
  const naive = await naiveBench(request.line, Number(process.env.BENCH_NAIVE_RUNS ?? 20));
  add({ name: 'naive host (process per call, node:wasi) p50', value: naive.p50, unit: 'ms', against: { name: 'ours p50', value: call.p50, ratio: naive.p50 / call.p50 } });

  // 6. Egress overhead, and 7. the MCP endpoint (each adds its own rows).
  for (const row of await egressBench(host, scratch)) add(row);
  for (const row of await endpointBench(host, loaded, call.p50)) add(row);
  // 7b. The same endpoint against the official SDK's own server, driven by autocannon from outside.
  for (const row of await endpointPeersBench(host, loaded)) add(row);

  // 10. Calls through NATS to workers against in process (its own rows; needs the machine's NATS server).
  for (const row of await natsBench()) add(row);

  // 9. Steady state: RSS, descriptors and p99 over many calls.
  for (const row of await soakBench(host, loaded, tmpDir)) add(row);

  await host.close();

  // 8. Peers, each in a process of its own, in rounds (their own rows, as ratios to ours).
  for (const row of await peersBench()) add(row);

  rmSync(scratch, { recursive: true, force: true });
  const out = join(REPO_ROOT, 'bench', 'results', 'latest.json');
  mkdirSync(join(REPO_ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: availableParallelism(), cpu: cpus()[0]?.model, rows }, null, 2)}\n`);
  console.log(`\nwritten: ${out}`);
}

await main();
