#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js), each as `node --test <file>` in a process group of
// its own, two files at a time (these machines have two cores). Arguments filter the files by substring:
// `npm test -- wasi`.
//
// A file that runs past its ceiling is ended with its whole group (every server and guest it started), and so
// is every running file when this runner gets SIGINT or SIGTERM: nothing a test started outlives its file.
// The output of a file that failed or timed out is shown whole; a file that passed is one line. The end is a
// summary: how many passed, failed and timed out, each with its duration, and the ten slowest files.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

function collect(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...collect(path));
    else if (name.endsWith('.test.js')) found.push(path);
  }
  return found;
}

const filters = process.argv.slice(2);
const files = collect('dist/test')
  .filter((f) => filters.length === 0 || filters.some((needle) => f.includes(needle)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(', ') || 'dist/test/**/*.test.js'}`);
  process.exit(1);
}

/** Files at once: the machines have two cores. */
const PARALLEL = Number(process.env.SUBAKO_TEST_PARALLEL ?? 2);
/**
 * How long a file may run before it is ended: a guard against a hang, several times what a file takes on a
 * quiet machine, since these machines are shared (a file that takes 30 s alone can take 3 min beside a build).
 * SUBAKO_TEST_CEILING_MS sets it for a run.
 */
const DEFAULT_CEILING_MS = Number(process.env.SUBAKO_TEST_CEILING_MS ?? 8 * 60_000);
/**
 * The files that start many processes or build guests take longer, more so on a loaded machine: the README
 * walk-through (a clone, `npm ci` with its native build, servers, and builds in C, AssemblyScript and Rust),
 * the templates' builds (cargo's first build compiles the crates), the stderr-tail table through
 * `subako call` (a process per row), and the console driven in Chromium.
 */
const CEILINGS_MS = {
  'dist/test/readme-run.test.js': 45 * 60_000,
  'dist/test/server/stderr-tail-cli.test.js': 25 * 60_000,
  'dist/test/devkit/template-rust.test.js': 20 * 60_000,
  'dist/test/devkit/template-c.test.js': 15 * 60_000,
  'dist/test/devkit/template-assemblyscript.test.js': 15 * 60_000,
  'dist/test/devkit/dev.test.js': 15 * 60_000,
  'dist/test/sdk/rust.test.js': 20 * 60_000,
  'dist/test/console/console-browser.test.js': 15 * 60_000,
  'dist/test/console/console-calls-pages.test.js': 15 * 60_000,
  'dist/test/console/console-worker-browser.test.js': 15 * 60_000,
  'dist/test/console/held-call-browser.test.js': 15 * 60_000,
};
const ceilingOf = (file) => CEILINGS_MS[file] ?? DEFAULT_CEILING_MS;
/** After SIGTERM, how long a group has to end before SIGKILL. */
const GRACE_MS = 10_000;

// Every temporary directory the tests and the processes they start make goes under one folder of this run
// (TMPDIR), removed when the run ends: a test killed mid-way, or a child that outlived it, leaves nothing in
// /tmp. Mode 0711: the PostgreSQL instances of the fault tests run as their own user and must pass through it.
const scratch = mkdtempSync(join(tmpdir(), 'subako-tests-'));
chmodSync(scratch, 0o711);

/** Signals a whole process group; a group already gone is not an error. */
function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if (error.code !== 'ESRCH') throw error;
  }
}

const running = new Map(); // pid → { file, stop }
const results = [];

/** The longest first, so a long file does not start last and leave one core idle at the end. */
const queue = [...files].sort((a, b) => ceilingOf(b) - ceilingOf(a) || a.localeCompare(b));

function runFile(file) {
  return new Promise((resolveRun) => {
    const ceiling = ceilingOf(file);
    const started = Date.now();
    // --test-timeout a little under the ceiling: a test that hangs is named by the runner before the group ends.
    const child = spawn(process.execPath, ['--test', '--test-reporter=spec', `--test-timeout=${Math.round(ceiling * 0.95)}`, file], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: scratch, FORCE_COLOR: '0' },
    });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    let timedOut = false;
    let killer;
    const stop = () => {
      signalGroup(child.pid, 'SIGTERM');
      killer ??= setTimeout(() => signalGroup(child.pid, 'SIGKILL'), GRACE_MS);
    };
    const ceilingTimer = setTimeout(() => {
      timedOut = true;
      stop();
    }, ceiling);
    running.set(child.pid, { file, stop });
    child.on('close', (code, signal) => {
      clearTimeout(ceilingTimer);
      clearTimeout(killer);
      // Whatever the file left in its group (a server a test forgot) ends with it.
      signalGroup(child.pid, 'SIGKILL');
      running.delete(child.pid);
      const ms = Date.now() - started;
      const outcome = timedOut ? 'timed out' : code === 0 ? 'passed' : interrupted ? 'interrupted' : 'failed';
      results.push({ file, ms, outcome });
      const seconds = (ms / 1000).toFixed(1);
      if (outcome === 'passed') {
        console.log(`ok    ${file} (${seconds} s)`);
      } else {
        const why = timedOut ? `ended at its ceiling of ${ceiling / 60_000} min` : interrupted ? `ended on ${interrupted}` : `exit ${code ?? signal}`;
        console.log(`\n===== ${outcome.toUpperCase()}: ${file} (${seconds} s, ${why}); its output:\n`);
        process.stdout.write(Buffer.concat(chunks));
        console.log(`===== end of ${file}\n`);
      }
      resolveRun();
    });
  });
}

let interrupted = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = signal;
    queue.length = 0;
    console.log(`\n${signal}: ending ${running.size} running test file(s) with their process groups`);
    for (const { stop } of running.values()) stop();
  });
}

const runStarted = Date.now();
async function worker() {
  while (queue.length > 0) await runFile(queue.shift());
}
try {
  await Promise.all(Array.from({ length: Math.min(PARALLEL, files.length) }, worker));
} finally {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
}

const format = ({ file, ms }) => `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file}`;
const by = (outcome) => results.filter((r) => r.outcome === outcome);
console.log(`\n${results.length} of ${files.length} test files in ${((Date.now() - runStarted) / 60_000).toFixed(1)} min: ` +
  `${by('passed').length} passed, ${by('failed').length} failed, ${by('timed out').length} timed out` +
  `${interrupted ? `, ${by('interrupted').length} ended and ${files.length - results.length} not run (${interrupted})` : ''}`);
for (const outcome of ['failed', 'timed out', 'interrupted']) {
  if (by(outcome).length > 0) console.log(`${outcome}:\n${by(outcome).map(format).join('\n')}`);
}
console.log(`slowest:\n${[...results].sort((a, b) => b.ms - a.ms).slice(0, 10).map(format).join('\n')}`);
const failed = results.some((r) => r.outcome !== 'passed') || results.length < files.length;
process.exit(interrupted ? (interrupted === 'SIGINT' ? 130 : 143) : failed ? 1 : 0);
