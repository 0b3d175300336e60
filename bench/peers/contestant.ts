/**
 * One contestant of the peer benchmark in a process of its own (so that no contestant's heap, threads or
 * V8 flags touch another's): `node contestant.js <name>`, driven over IPC by peers.ts. It builds its host
 * once, then answers `{op: 'latency', calls}` with the p50 of that many calls one after another, and
 * `{op: 'rate', seconds, inFlight}` with calls per second at that many in flight.
 *
 * Names: `subako` (FunctionHost, 2 sandbox workers), or `<runner>@main` / `<runner>@<N>` for a peer runner on
 * the main thread or in N worker threads (runners.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import wabt from 'wabt';
import { FunctionHost } from '../../src/function/index.js';
import { buildRequest } from '../../src/function/protocol.js';
import { fixture } from '../../test/helpers/paths.js';
import { summarize } from '../stats.js';
import { EXTISM_ECHO_WAT, makeRunner, type RunnerKind } from './runners.js';

type Call = () => Promise<unknown>;

const ECHO = readFileSync(fixture('c', 'mcp', 'echo.wasm'));
const REQUEST = buildRequest('call', 'tools/call', { name: 'echo', arguments: { hello: 'world' } }).line;

async function extismModule(): Promise<WebAssembly.Module> {
  const parsed = (await wabt()).parseWat('echo.wat', EXTISM_ECHO_WAT);
  return WebAssembly.compile(new Uint8Array(parsed.toBinary({}).buffer));
}

/** A fixed pool of worker threads, each running one call at a time; calls queue in order. */
async function workerPool(kind: RunnerKind, module: WebAssembly.Module, size: number): Promise<{ call: Call; close(): Promise<void> }> {
  const url = new URL('./runner-worker.js', import.meta.url);
  const idle: Worker[] = [];
  const waiting: Array<(worker: Worker) => void> = [];
  const workers = await Promise.all(Array.from({ length: size }, () => new Promise<Worker>((resolve, reject) => {
    const worker = new Worker(url, { workerData: { kind, module, requestLine: REQUEST } });
    worker.once('message', () => resolve(worker));
    worker.once('error', reject);
  })));
  idle.push(...workers);
  const release = (worker: Worker) => {
    const next = waiting.shift();
    if (next) next(worker);
    else idle.push(worker);
  };
  return {
    call: async () => {
      const worker = idle.pop() ?? await new Promise<Worker>((resolve) => waiting.push(resolve));
      const answered = new Promise<unknown>((resolve) => worker.once('message', resolve));
      worker.postMessage(null);
      const answer = await answered;
      release(worker);
      if (answer && typeof answer === 'object' && 'error' in answer) throw new Error(String((answer as { error: string }).error));
    },
    close: async () => {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}

async function build(name: string): Promise<{ call: Call; close(): Promise<void> }> {
  if (name === 'subako') {
    const host = new FunctionHost({ poolSize: 2 });
    const loaded = await host.load({ name: 'echo', moduleBytes: ECHO, assetsDir: null });
    const tmpDir = mkdtempSync(join(tmpdir(), 'subako-peer-'));
    return {
      call: () => host.call(loaded, 'echo', { hello: 'world' }, { tmpDir }),
      close: async () => {
        await host.close();
        rmSync(tmpDir, { recursive: true, force: true });
      },
    };
  }
  const [kind, where] = name.split('@') as [RunnerKind, string];
  const module = kind.startsWith('extism') ? await extismModule() : await WebAssembly.compile(ECHO);
  if (where === 'main') {
    const run = await makeRunner({ kind, module, requestLine: REQUEST });
    return { call: async () => run(), close: async () => {} };
  }
  return workerPool(kind, module, Number(where));
}

const name = process.argv[2] ?? 'subako';
const contestant = await build(name);

async function latency(calls: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < calls; i += 1) {
    const start = performance.now();
    await contestant.call();
    samples.push(performance.now() - start);
  }
  return summarize(samples).p50;
}

async function rate(seconds: number, inFlight: number): Promise<number> {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (performance.now() < until) {
      await contestant.call();
      done += 1;
    }
  }));
  return done / seconds;
}

process.on('message', (message: { op: string; calls?: number; seconds?: number; inFlight?: number }) => {
  const answer = message.op === 'latency' ? latency(message.calls ?? 500)
    : message.op === 'rate' ? rate(message.seconds ?? 1, message.inFlight ?? 8)
      : contestant.close().then(() => 0);
  void answer.then((value) => {
    process.send!({ value });
    if (message.op === 'close') process.disconnect();
  }, (error: unknown) => {
    process.send!({ error: String(error) });
  });
});
process.send!({ ready: true });
