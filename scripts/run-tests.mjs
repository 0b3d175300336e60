#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with Node's own test runner, two files at a
// time (these machines have two cores). Arguments filter the files by substring: `npm test -- wasi`.
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

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
// Every file gets five minutes: a guard against a hang, far above what a file takes on a quiet machine (the
// longest, ~2 min on a loaded one), since these machines are shared. Files that start many processes take
// longer still on a loaded machine: the walk through the whole README as pasted (servers, and builds in C, AssemblyScript and Rust), and
// the stderr-tail table through `subako call` (a process per row). They run after the others, with a timeout
// of their own, so the others keep theirs.
const LONG = new Set(['dist/test/readme-run.test.js', 'dist/test/server/stderr-tail-cli.test.js']);
// Every temporary directory the tests and the processes they start make goes under one folder of this run
// (TMPDIR), removed when the run ends: a test killed mid-way, or a child that outlived it, leaves nothing in
// /tmp. Mode 0711: the PostgreSQL instances of the fault tests run as their own user and must pass through it.
const scratch = mkdtempSync(join(tmpdir(), 'subako-tests-'));
chmodSync(scratch, 0o711);
const run = (group, timeoutMs) => group.length === 0 ? 0 : spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', `--test-timeout=${timeoutMs}`, ...group],
  { stdio: 'inherit', env: { ...process.env, TMPDIR: scratch } },
).status ?? 1;
let status;
try {
  const short = run(files.filter((f) => !LONG.has(f)), 300_000);
  const long = run(files.filter((f) => LONG.has(f)), 30 * 60_000);
  status = short || long;
} finally {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
}
process.exit(status);
