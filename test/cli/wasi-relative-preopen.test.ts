import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, fixture } from '../helpers/paths.js';

test('subako wasi --dir NAME preopens a relative guest name, as the WASI test suite runs its tests', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'subako-wasi-rel-'));
  try {
    mkdirSync(join(cwd, 'fs-tests.dir'));
    writeFileSync(join(cwd, 'fs-tests.dir', 'file'), 'hello\n');
    const run = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'wasi', fixture('c', 'sandbox', 'read_relative.wasm'), '--dir', 'fs-tests.dir'], { cwd, encoding: 'utf8' });
    assert.equal(run.stderr, '');
    assert.equal(run.stdout, 'read hello\n');
    assert.equal(run.status, 0);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
