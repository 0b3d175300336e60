/**
 * The README stays true: its library example type-checks against the package as published (the `subako`
 * self-reference), and every subcommand its CLI table names exists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from './helpers/paths.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

test('the README\'s library example compiles with tsc --strict', () => {
  const start = README.indexOf('```ts\nimport {');
  assert.ok(start >= 0, 'the README has a TypeScript example');
  const code = README.slice(start + 6, README.indexOf('```', start + 6));
  // Names the example leaves to the reader.
  const declarations = 'declare const moduleBytes: Uint8Array; declare const url: string; declare const token: string;\n' +
    'declare function handToTheAgent(url: string): Promise<void>;\n';
  const importEnd = code.indexOf('\n', code.indexOf("from 'subako';")) + 1;
  const dir = mkdtempSync(join(REPO_ROOT, 'test', '.readme-'));
  try {
    const file = join(dir, 'example.ts');
    writeFileSync(file, `${code.slice(0, importEnd)}${declarations}${code.slice(importEnd)}\nexport {};\n`);
    const tsc = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '--strict',
      '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck', file], { encoding: 'utf8' });
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every command in the README\'s CLI table exists', () => {
  const commands = [...README.matchAll(/^\| `subako ([a-z][a-z-]*)(?: ([a-z]+))?/gm)].map((m) => (m[1] === 'mcp' ? ['mcp', m[2]] : [m[1]]));
  assert.ok(commands.length >= 10);
  for (const words of commands) {
    const run = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), ...words, '--help'], { encoding: 'utf8' });
    assert.equal(run.status, 0, `subako ${words.join(' ')} --help: ${run.stderr}`);
    assert.match(run.stdout, /Usage: subako/);
  }
});
