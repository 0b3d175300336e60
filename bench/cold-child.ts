/**
 * The fresh-process half of the cold-start rows (bench/cold-start.ts spawns it), doing what `subako call`
 * does, in its order: start a host (its sandbox process starts at once), read a package directory, load the
 * module, call one tool once, exit. Prints one JSON line of milliseconds: from the module bytes read to the first
 * answer, from the process's start (Node's own time origin) to that answer, and the steps between, each from
 * the end of the one before (`ColdSteps`). argv: the package directory, the tool, its arguments as JSON, and the
 * directory of instrumented modules ("" for none).
 *
 * subako's own modules are imported here, after the first timestamp, so that Node's start and ours are told apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where a fresh process's time goes, in order, each step from the end of the one before (ms), so that they add up
 * to the whole. The sandbox process boots beside this one from the moment the host is made: a step after
 * `hostAndRead` is the wait for what came last on the path to the answer (the sandbox's own steps from its start
 * marks, sandbox/start-marks.ts), and is 0 when that was done before the step before it ended.
 */
export interface ColdSteps {
  /** Node's start, up to this file's first line: what any Node program pays. */
  nodeStart: number;
  /** Importing subako's modules that the call needs (the function room and the package reader). */
  imports: number;
  /** Starting the host (the sandbox process is forked, not waited for) and reading the package directory. */
  hostAndRead: number;
  /** Waiting for the sandbox process's Node to start (it says it is ready as it starts its workers). */
  sandboxProcess: number;
  /** Waiting for the module to be compiled there (instrumented here first, unless the cache has it). */
  compile: number;
  /** Waiting for the sandbox's first worker to boot, load its modules and open its lane to this process. */
  workerStart: number;
  /** The call itself: a fresh instance, `tools/call`, the answer, rendered. */
  call: number;
}

export interface ColdFigures {
  bytesToAnswerMs: number;
  processToAnswerMs: number;
  steps: ColdSteps;
}

const nodeStarted = performance.now();
const [dir, tool, args, cacheDir] = process.argv.slice(2);
const [{ FunctionHost }, { readPackageDir }, { START_MARKS }] = await Promise.all([
  import('../src/function/index.js'), import('../src/package/package-dir.js'), import('../src/sandbox/index.js'),
]);
const imported = performance.now();
const host = new FunctionHost({ poolSize: 1, ...(cacheDir ? { preparedCacheDir: cacheDir } : {}) });
const tmpDir = mkdtempSync(join(tmpdir(), 'subako-bench-cold-'));
try {
  const read = await readPackageDir(dir);
  if (!read.ok) throw new Error(`${dir}: ${read.problems.map((p) => p.message).join('; ')}`);
  const bytesRead = performance.now();
  const loaded = await host.load({ name: read.manifest.name, moduleBytes: read.moduleBytes, assetsDir: read.assetsDir });
  const compiled = performance.now();
  const outcome = await host.call(loaded, tool, JSON.parse(args) as Record<string, unknown>, { tmpDir });
  const answered = performance.now();
  if (outcome.status !== 'ok') throw new Error(`the cold call ended ${outcome.status}`);
  const marked = (name: string): number => performance.getEntriesByName(name, 'mark')[0]?.startTime ?? Number.NaN;
  // The path to the answer, each point no earlier than the one before it.
  const ready = Math.max(bytesRead, marked(START_MARKS.ready));
  const done = Math.max(ready, compiled);
  const laneOpen = Math.max(done, marked(START_MARKS.firstLane));
  const steps: ColdSteps = {
    nodeStart: nodeStarted, imports: imported - nodeStarted, hostAndRead: bytesRead - imported,
    sandboxProcess: ready - bytesRead, compile: done - ready, workerStart: laneOpen - done, call: answered - laneOpen,
  };
  const figures: ColdFigures = { bytesToAnswerMs: answered - bytesRead, processToAnswerMs: answered, steps };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} finally {
  await host.close();
  rmSync(tmpDir, { recursive: true, force: true });
}
