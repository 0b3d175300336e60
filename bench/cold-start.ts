/**
 * Cold start (issue 17, point 5): the first call of the example package just loaded, module bytes to first
 * answer. Warm: in this process, on a host whose sandbox is up and has served calls, each run loading bytes
 * it has never seen (the module with a custom section of its own appended, so no compiled-module cache
 * helps). Fresh: a new Node process per run that loads and calls once, as `subako call` does
 * (bench/cold-child.ts), with the directory of instrumented modules (sandbox/prepared-cache.ts) empty, and
 * then filled by an earlier run: the difference is the instrumentation walk the cache saves.
 * BENCH_COLD_RUNS (default 10) sets the runs of each.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FunctionHost } from '../src/function/index.js';
import { readPackageDir } from '../src/package/package-dir.js';
import { REPO_ROOT } from '../test/helpers/paths.js';
import type { Row } from './run.js';
import type { ColdFigures, ColdSteps } from './cold-child.js';
import { median, summarize } from './stats.js';

const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 10);
/** This tree (the bench runs from its dist/bench/). */
const BENCH_ROOT = REPO_ROOT;
/** Another checkout, built, whose fresh-process figure is taken in the same turns: a before/after in one run. */
const BASELINE = process.env.BENCH_BASELINE;
const PACKAGE = join(REPO_ROOT, 'examples', 'packages', 'greet');
const TOOL = 'greet';
const ARGS = { name: 'Ada' };

/** The module with a custom section named after `n` appended: the same code, bytes (and digest) never seen. */
function unseen(bytes: Uint8Array, n: number): Uint8Array {
  const name = Buffer.from(`subako-bench-${n}`);
  // Custom section: id 0, size (one LEB byte: the name is short), name length, name.
  return Buffer.concat([bytes, Buffer.from([0, name.length + 1, name.length]), name]);
}

async function warmRuns(moduleBytes: Uint8Array, assetsDir: string | null): Promise<number[]> {
  const host = new FunctionHost({ poolSize: 2 });
  const tmpDir = mkdtempSync(join(tmpdir(), 'subako-bench-cold-'));
  try {
    const warm = await host.load({ name: 'greet', moduleBytes, assetsDir });
    for (let i = 0; i < 20; i += 1) await host.call(warm, TOOL, ARGS, { tmpDir });
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      const start = performance.now();
      const loaded = await host.load({ name: 'greet', moduleBytes: unseen(moduleBytes, i), assetsDir });
      const outcome = await host.call(loaded, TOOL, ARGS, { tmpDir });
      if (outcome.status !== 'ok') throw new Error(`warm cold call ended ${outcome.status}`);
      samples.push(performance.now() - start);
    }
    return samples;
  } finally {
    await host.close();
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

/** What a baseline's older child prints may lack the steps. */
type FreshFigures = Pick<ColdFigures, 'bytesToAnswerMs' | 'processToAnswerMs'> & { steps?: ColdSteps };

/** The node binary, its flags, and a line of the child's JSON: one fresh process, start to exit. */
function runJson<T>(args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    proc.on('error', reject);
    proc.on('exit', (code) => {
      if (code !== 0) reject(new Error(`${args.join(' ')} exited ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!) as T);
    });
  });
}

/** The cold-start child of `root` (this tree's, or BENCH_BASELINE's for a before/after in the same run). */
function freshRun(cacheDir: string, root = BENCH_ROOT): Promise<FreshFigures> {
  return runJson<FreshFigures>(['--no-warnings', join(root, 'dist', 'bench', 'cold-child.js'), PACKAGE, TOOL, JSON.stringify(ARGS), cacheDir]);
}

/** Milliseconds from spawning `args` to its exit, as a person at a shell sees it. */
function wallClock(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    proc.on('error', reject);
    proc.on('exit', (code) => {
      if (code !== 0) reject(new Error(`${args.join(' ')} exited ${code}`));
      else resolve(performance.now() - started);
    });
  });
}


export async function coldStartBench(): Promise<Row[]> {
  const read = await readPackageDir(PACKAGE);
  if (!read.ok) throw new Error(`${PACKAGE} is not a package`);
  const warm = summarize(await warmRuns(read.moduleBytes, read.assetsDir));
  const scratch = mkdtempSync(join(tmpdir(), 'subako-bench-cold-cache-'));
  const empty: FreshFigures[] = [];
  const filled: FreshFigures[] = [];
  const baseline: FreshFigures[] = [];
  const nodeAlone: number[] = [];
  const cli: number[] = [];
  try {
    const kept = join(scratch, 'kept');
    await freshRun(kept); // fills the cache the "filled" runs read
    if (BASELINE) await freshRun(kept, BASELINE);
    // `subako call` keeps its instrumented modules in the data home: a home of the bench's own, filled by a first call.
    const cliEnv = { ...process.env, SUBAKO_HOME: join(scratch, 'home') };
    const cliArgs = ['--no-warnings', join(BENCH_ROOT, 'bin', 'subako.js'), 'call', PACKAGE, TOOL, JSON.stringify(ARGS)];
    await wallClock(cliArgs, cliEnv);
    // In turns, so that the machine's drift falls on all alike.
    for (let i = 0; i < RUNS; i += 1) {
      empty.push(await freshRun(join(scratch, `empty-${i}`)));
      filled.push(await freshRun(kept));
      if (BASELINE) baseline.push(await freshRun(kept, BASELINE));
      nodeAlone.push(await wallClock(['-e', '']));
      cli.push(await wallClock(cliArgs, cliEnv));
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const p50 = (xs: FreshFigures[], key: 'bytesToAnswerMs' | 'processToAnswerMs') => median(xs.map((x) => x[key]));
  const step = (key: keyof ColdSteps) => median(filled.map((x) => x.steps![key]));
  const atMost = (value: number, limit: number) => ({ text: `≤ ${limit} ms`, met: value <= limit, ...(value > limit ? { by: `${(value - limit).toFixed(1)} ms (${((value / limit - 1) * 100).toFixed(0)}%)` } : {}) });
  const emptyP50 = p50(empty, 'processToAnswerMs');
  const filledP50 = p50(filled, 'processToAnswerMs');
  const nodeP50 = median(nodeAlone);
  const rows: Row[] = [
    { name: 'cold start, warm host: new package, first call (p50)', value: warm.p50, unit: 'ms', target: atMost(warm.p50, 10) },
    { name: 'cold start, fresh process, cache filled: process start to first answer (p50)', value: filledP50, unit: 'ms', against: { name: 'cache empty', value: emptyP50, ratio: filledP50 / emptyP50 }, target: atMost(filledP50, 80) },
    // Where it goes, step by step (each the median of its own; they add up to about the whole).
    { name: '  node start (what any Node program pays)', value: step('nodeStart'), unit: 'ms', against: { name: 'the whole', value: filledP50, ratio: step('nodeStart') / filledP50 } },
    { name: '  importing subako\'s modules', value: step('imports'), unit: 'ms', against: { name: 'the whole', value: filledP50, ratio: step('imports') / filledP50 } },
    { name: '  host started, package read', value: step('hostAndRead'), unit: 'ms', against: { name: 'the whole', value: filledP50, ratio: step('hostAndRead') / filledP50 } },
    { name: '  then waiting for the sandbox process\'s Node to start', value: step('sandboxProcess'), unit: 'ms', against: { name: 'the whole', value: filledP50, ratio: step('sandboxProcess') / filledP50 } },
    { name: '  then for the compile there', value: step('compile'), unit: 'ms', against: { name: 'the whole', value: filledP50, ratio: step('compile') / filledP50 } },
    { name: '  then for its first worker to boot and open its lane', value: step('workerStart'), unit: 'ms', against: { name: 'the whole', value: filledP50, ratio: step('workerStart') / filledP50 } },
    { name: '  the call itself', value: step('call'), unit: 'ms', against: { name: 'the whole', value: filledP50, ratio: step('call') / filledP50 } },
    { name: '  module bytes to first answer, cache filled', value: p50(filled, 'bytesToAnswerMs'), unit: 'ms', against: { name: 'cache empty', value: p50(empty, 'bytesToAnswerMs'), ratio: p50(filled, 'bytesToAnswerMs') / p50(empty, 'bytesToAnswerMs') } },
    { name: 'subako call, spawn to exit (discovery, then the call)', value: median(cli), unit: 'ms', against: { name: 'node -e "" alone', value: nodeP50, ratio: median(cli) / nodeP50 } },
  ];
  if (BASELINE) {
    const before = p50(baseline, 'processToAnswerMs');
    rows.push({ name: '  fresh process, cache filled: this tree against BENCH_BASELINE', value: filledP50, unit: 'ms', against: { name: 'baseline', value: before, ratio: filledP50 / before } });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await coldStartBench()) console.log(row.name.padEnd(60), row.value.toFixed(2), row.unit, row.against ? `×${row.against.ratio.toFixed(2)} vs ${row.against.name} (${row.against.value.toFixed(2)})` : '', row.target ? `target ${row.target.text}: ${row.target.met ? 'met' : `MISSED by ${row.target.by}`}` : '');
}
