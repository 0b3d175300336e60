#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js), each as `node --test <file>` in a process group of
// its own, two files at a time (these machines have two cores). Arguments filter the files by substring:
// `npm test -- wasi`.
//
// A file that runs past its ceiling is ended with its whole group (every server and guest it started), and so
// is every running file when this runner gets SIGINT or SIGTERM: nothing a test started outlives its file.
// The output of a file that failed or timed out is shown whole; a file that passed is one line, with its wall
// time and the CPU time it and every process it waited for used (on a shared machine the wall time says how
// busy the machine was; the CPU time says what the file costs). The end is a summary: how many passed, failed
// and timed out, each with its duration, the ten slowest files and the ten costliest.
//
// Each file's durations are kept in dist/test/.durations.json (dist/ is the build's, never committed): the next
// run starts the files that took longest first. A clean clone has none, and orders by the ceilings below.
import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
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
/**
 * Files that take a minute or more even on a quiet machine but stay under the default ceiling: started before
 * the many short files, so none of them starts last and leaves a core idle at the end of a clean clone's run.
 */
const SLOW_FILES = [
  'dist/test/wasi/remove-tree.test.js',
  'dist/test/sdk/c.test.js',
  'dist/test/cli/platform-ops.test.js',
  'dist/test/cli/platform-commands.test.js',
];
/**
 * SUBAKO_TEST_LOG_DIR: every file's whole output (the spec reporter's, each test with its duration) is written
 * there too, passed or not: what a slow file waits on, without running it again.
 */
const LOG_DIR = process.env.SUBAKO_TEST_LOG_DIR;
if (LOG_DIR) mkdirSync(LOG_DIR, { recursive: true });
/** After SIGTERM, how long a group has to end before SIGKILL. */
const GRACE_MS = 10_000;

/**
 * Where the run's folder goes: SUBAKO_TEST_TMPDIR when set, else /dev/shm when it is a memory file system with
 * room to spare, else the system's temporary folder. The tests write much (stores that fsync, package uploads,
 * volumes, a clone with its `npm ci`, cargo's builds) and keep little: in memory a file operation costs no disk
 * I/O, which a shared machine's disk is slow at (a walk that removes 3 000 entries: 3 s in memory, 12 s on
 * this ext4 at load 20). A run keeps about a gigabyte there at most, removed as it goes and at its end.
 */
const MEMORY_FS_ROOM = 4 * 1024 ** 3;
function scratchParent() {
  if (process.env.SUBAKO_TEST_TMPDIR) return process.env.SUBAKO_TEST_TMPDIR;
  try {
    const fs = statfsSync('/dev/shm');
    const TMPFS_MAGIC = 0x01021994;
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= MEMORY_FS_ROOM) {
      accessSync('/dev/shm', constants.W_OK);
      return '/dev/shm';
    }
  } catch {
    // no /dev/shm here, or not ours to write: the system's temporary folder
  }
  return tmpdir();
}

// Every temporary directory the tests and the processes they start make goes under one folder of this run
// (TMPDIR), removed when the run ends: a test killed mid-way, or a child that outlived it, leaves nothing in
// /tmp. Mode 0711: the PostgreSQL instances of the fault tests run as their own user and must pass through it.
const scratch = mkdtempSync(join(scratchParent(), 'subako-tests-'));
chmodSync(scratch, 0o711);
console.log(`the test files' TMPDIR: ${scratch}`);

/** Where each file's last durations are kept: { file: { ms, cpuMs } }. */
const DURATIONS_FILE = 'dist/test/.durations.json';
function readDurations() {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
  } catch {
    return {}; // a clean clone, or a file from an older runner: the ceilings order the run
  }
}
const lastDurations = readDurations();

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

/**
 * The longest first, so a long file does not start last and leave one core idle at the end: by the wall time of
 * the last run when every file has one, otherwise the long ceilings, then the known slow files, then the rest.
 */
const rank = (file) => (CEILINGS_MS[file] !== undefined ? 0 : SLOW_FILES.includes(file) ? 1 : 2);
const known = files.every((file) => typeof lastDurations[file]?.ms === 'number');
const queue = [...files].sort(known
  ? (a, b) => lastDurations[b].ms - lastDurations[a].ms || a.localeCompare(b)
  : (a, b) => rank(a) - rank(b) || ceilingOf(b) - ceilingOf(a) || SLOW_FILES.indexOf(a) - SLOW_FILES.indexOf(b) || a.localeCompare(b));

/** `times`' second line (the children's user and system time, as `1m2.345s 0m0.678s`), in ms. */
function childrenCpuMs(text) {
  const line = text.trim().split('\n')[1] ?? '';
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)];
  return parts.length === 2 ? parts.reduce((sum, [, m, sec]) => sum + (Number(m) * 60 + Number(sec)) * 1000, 0) : undefined;
}

function runFile(file) {
  return new Promise((resolveRun) => {
    const ceiling = ceilingOf(file);
    const started = Date.now();
    // --test-timeout a little under the ceiling: a test that hangs is named by the runner before the group ends.
    // bash leads the group and, once the file ends, writes on fd 3 the CPU time of the processes it waited for
    // (node's, and through it every child a test reaped).
    const node = [process.execPath, '--test', '--test-reporter=spec', `--test-timeout=${Math.round(ceiling * 0.95)}`, file];
    const child = spawn('bash', ['-c', '"$@"; status=$?; times >&3; exit $status', 'bash', ...node], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: scratch, FORCE_COLOR: '0' },
    });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    let times = '';
    child.stdio[3].on('data', (chunk) => { times += chunk; });
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
      const cpuMs = childrenCpuMs(times);
      const outcome = timedOut ? 'timed out' : code === 0 ? 'passed' : interrupted ? 'interrupted' : 'failed';
      results.push({ file, ms, cpuMs, outcome });
      if (LOG_DIR) writeFileSync(join(LOG_DIR, `${file.replace(/^dist\/test\//, '').replaceAll('/', '_')}.log`), Buffer.concat(chunks));
      const took = `${(ms / 1000).toFixed(1)} s${cpuMs === undefined ? '' : `, cpu ${(cpuMs / 1000).toFixed(1)} s`}`;
      if (outcome === 'passed') {
        console.log(`ok    ${file} (${took})`);
      } else {
        const why = timedOut ? `ended at its ceiling of ${ceiling / 60_000} min` : interrupted ? `ended on ${interrupted}` : `exit ${code ?? signal}`;
        console.log(`\n===== ${outcome.toUpperCase()}: ${file} (${took}, ${why}); its output:\n`);
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

// Only what ran whole is kept: a file ended early says nothing of how long it takes.
const durations = { ...lastDurations };
for (const { file, ms, cpuMs, outcome } of results) if (outcome === 'passed' || outcome === 'failed') durations[file] = { ms, cpuMs };
try {
  // Whole or not at all: a second run on this clone may be reading it.
  writeFileSync(`${DURATIONS_FILE}.${process.pid}`, `${JSON.stringify(durations, null, 1)}\n`);
  renameSync(`${DURATIONS_FILE}.${process.pid}`, DURATIONS_FILE);
} catch (error) {
  console.log(`(the durations were not kept: ${error.message})`);
}

const seconds = (ms) => `${((ms ?? 0) / 1000).toFixed(1).padStart(7)} s`;
const format = ({ file, ms, cpuMs }) => `  ${seconds(ms)}  cpu ${seconds(cpuMs)}  ${file}`;
const by = (outcome) => results.filter((r) => r.outcome === outcome);
const cpuTotal = results.reduce((sum, r) => sum + (r.cpuMs ?? 0), 0);
console.log(`\n${results.length} of ${files.length} test files in ${((Date.now() - runStarted) / 60_000).toFixed(1)} min ` +
  `(cpu ${(cpuTotal / 60_000).toFixed(1)} min): ` +
  `${by('passed').length} passed, ${by('failed').length} failed, ${by('timed out').length} timed out` +
  `${interrupted ? `, ${by('interrupted').length} ended and ${files.length - results.length} not run (${interrupted})` : ''}`);
for (const outcome of ['failed', 'timed out', 'interrupted']) {
  if (by(outcome).length > 0) console.log(`${outcome}:\n${by(outcome).map(format).join('\n')}`);
}
console.log(`slowest:\n${[...results].sort((a, b) => b.ms - a.ms).slice(0, 10).map(format).join('\n')}`);
console.log(`costliest (cpu):\n${[...results].sort((a, b) => (b.cpuMs ?? 0) - (a.cpuMs ?? 0)).slice(0, 10).map(format).join('\n')}`);
const failed = results.some((r) => r.outcome !== 'passed') || results.length < files.length;
process.exit(interrupted ? (interrupted === 'SIGINT' ? 130 : 143) : failed ? 1 : 0);
