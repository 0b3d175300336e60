#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with Node's own test runner, two files at a
// time (these machines have two cores). Arguments filter the files by substring: `npm test -- wasi`.
import { readdirSync, statSync } from 'node:fs';
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
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-timeout=120000', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
