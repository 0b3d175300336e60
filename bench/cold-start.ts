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
import { summarize } from './stats.js';

const RUNS = Number(process.env.BENCH_COLD_RUNS ?? 10);
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

interface FreshFigures {
  bytesToAnswerMs: number;
  processToAnswerMs: number;
}

function freshRun(cacheDir: string): Promise<FreshFigures> {
  const child = new URL('./cold-child.js', import.meta.url).pathname;
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--no-warnings', child, PACKAGE, TOOL, JSON.stringify(ARGS), cacheDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8'); });
    proc.on('error', reject);
    proc.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the cold-start child exited ${code}`));
      else resolve(JSON.parse(out.trim()) as FreshFigures);
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
  try {
    const kept = join(scratch, 'kept');
    await freshRun(kept); // fills the cache the "filled" runs read
    // In turns, so that the machine's drift falls on both alike.
    for (let i = 0; i < RUNS; i += 1) {
      empty.push(await freshRun(join(scratch, `empty-${i}`)));
      filled.push(await freshRun(kept));
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const p50 = (xs: FreshFigures[], key: keyof FreshFigures) => summarize(xs.map((x) => x[key])).p50;
  const atMost = (value: number, limit: number) => ({ text: `≤ ${limit} ms`, met: value <= limit, ...(value > limit ? { by: `${(value - limit).toFixed(1)} ms (${((value / limit - 1) * 100).toFixed(0)}%)` } : {}) });
  const emptyP50 = p50(empty, 'bytesToAnswerMs');
  const filledP50 = p50(filled, 'bytesToAnswerMs');
  return [
    { name: 'cold start, warm host: new package, first call (p50)', value: warm.p50, unit: 'ms', target: atMost(warm.p50, 15) },
    { name: 'cold start, fresh process, cache empty (p50)', value: emptyP50, unit: 'ms', target: atMost(emptyP50, 30) },
    { name: 'cold start, fresh process, cache filled (p50)', value: filledP50, unit: 'ms', against: { name: 'cache empty', value: emptyP50, ratio: filledP50 / emptyP50 }, target: atMost(filledP50, 30) },
    { name: '  fresh process: node start to first answer, cache filled', value: p50(filled, 'processToAnswerMs'), unit: 'ms', against: { name: 'cache empty', value: p50(empty, 'processToAnswerMs'), ratio: p50(filled, 'processToAnswerMs') / p50(empty, 'processToAnswerMs') } },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await coldStartBench()) console.log(row.name.padEnd(60), row.value.toFixed(2), row.unit, row.against ? `×${row.against.ratio.toFixed(2)} vs ${row.against.name} (${row.against.value.toFixed(2)})` : '', row.target ? `target ${row.target.text}: ${row.target.met ? 'met' : `MISSED by ${row.target.by}`}` : '');
}
