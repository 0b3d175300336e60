/**
 * The README stays true: its library example type-checks against the package as published (the `subako`
 * self-reference), every subcommand its CLI table names exists, and neither it nor a template sends a reader
 * to the npm registry for subako (`npx subako` asks the registry for a package of that name outside a clone).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** Every file under `dir`, as paths. */
const filesUnder = (dir: string): string[] => readdirSync(dir, { withFileTypes: true, recursive: true })
  .filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));

test('the README and the templates run subako from PATH, never through npx, and link to nothing that does not exist', () => {
  for (const file of [join(REPO_ROOT, 'README.md'), ...filesUnder(join(REPO_ROOT, 'templates'))]) {
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /\bnpx subako\b/, `${file} runs subako through npx`);
    assert.doesNotMatch(text, /npmjs\.com\/package\/subako|github\.com\/subako\b/, `${file} links to a subako page that does not exist`);
  }
});

test('the README\'s set-up puts subako on PATH first, then runs the tests', () => {
  const first = /^```bash\n([\s\S]*?)^```$/m.exec(README);
  assert.ok(first, 'the README starts with a bash block');
  const commands = first[1].split('\n').filter((line) => line.trim() !== '').map((line) => line.replace(/\s+#.*$/, '').trim());
  assert.deepEqual(commands, ['npm ci && npm link', 'npm test']);
});
