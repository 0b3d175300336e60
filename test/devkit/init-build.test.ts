/**
 * `subako init` and `subako build` as a person meets them when something is wrong: a directory with files,
 * a name the manifest would refuse, an unknown template, a missing toolchain (one line naming the Debian
 * packages, no stack trace, from init as from build), a compiler error (as the compiler wrote it), a module
 * the checks refuse. Those that compile need clang and skip without it, saying what to install.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cRecipe } from '../../src/devkit/recipes/c.js';
import { toolchainMissing } from '../helpers/toolchains.js';
import { scratchDir, subako } from './helpers.js';

const NO_CLANG = toolchainMissing(cRecipe);

describe('subako init', () => {
  test('refuses a directory that holds files, exit 1, and writes nothing into it', async () => {
    const dir = scratchDir('full');
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const run = await subako(['init', dir, '--name', 'full']);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /is not empty \(it holds notes\.txt\)/);
    assert.deepEqual(readdirSync(dir), ['notes.txt']);
  });

  test('without the toolchain, says before the first build what to install, in the one line build would print', async () => {
    const dir = join(scratchDir('bare'), 'bare-machine');
    const run = await subako(['init', dir], { env: { PATH: '/nonexistent' } });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^before the first build: the c build needs clang, wasm-ld \(lld\), not found on this machine; install them with: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32$/m);
    assert.match(run.stdout, /^next: cd /m);
  });

  test('with the toolchain there, says nothing of it', { skip: NO_CLANG }, async () => {
    const run = await subako(['init', join(scratchDir('ready'), 'ready')]);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /before the first build/);
  });

  test('writes into an empty directory that exists', async () => {
    const dir = join(scratchDir('empty'), 'my-tool');
    mkdirSync(dir);
    const run = await subako(['init', dir]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(readFileSync(join(dir, 'subako-package.json'), 'utf8')).name, 'my-tool', 'the name is the directory\'s');
  });

  test('a name the manifest rule refuses is a usage error (exit 2) naming the rule, and nothing is written', async () => {
    const dir = join(scratchDir('name'), 'Not A Name');
    const run = await subako(['init', dir]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /lowercase letters, digits/);
    assert.match(run.stderr, /pass --name/);
    assert.equal(existsSync(dir), false);
    const flagged = await subako(['init', join(scratchDir('name'), 'x'), '--name', '-bad']);
    assert.equal(flagged.code, 2);
  });

  test('an unknown template is a usage error naming the templates', async () => {
    const run = await subako(['init', join(scratchDir('tpl'), 'x'), '--template', 'cobol']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /choose one of c, assemblyscript, rust/);
  });

  test('placeholders are filled and escaped where they land in a string: a description with quotes keeps the manifest JSON', async () => {
    const dir = join(scratchDir('desc'), 'quoted');
    const run = await subako(['init', dir, '--description', 'Says "hi" \\ back']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(readFileSync(join(dir, 'subako-package.json'), 'utf8')).description, 'Says "hi" \\ back');
    for (const file of ['src/main.c', 'README.md', 'subako-package.json']) {
      assert.doesNotMatch(readFileSync(join(dir, file), 'utf8'), /\{\{(name|description|sdk_dir)\}\}/, file);
    }
  });
});

describe('subako build', () => {
  const cProject = async (): Promise<string> => {
    const dir = join(scratchDir('build'), 'proj');
    const run = await subako(['init', dir, '--name', 'proj']);
    assert.equal(run.code, 0, run.stderr);
    return dir;
  };

  test('a missing toolchain is one line naming the Debian packages, exit 1, no stack trace', async () => {
    const dir = await cProject();
    const run = await subako(['build', dir], { env: { PATH: '/nonexistent' } });
    assert.equal(run.code, 1);
    const lines = run.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0], /^subako build: the c build needs clang, wasm-ld \(lld\), not found on this machine; install them with: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32$/);
    assert.equal(existsSync(join(dir, 'module.wasm')), false);
  });

  test('a compiler error is printed as the compiler wrote it, then one line of ours; exit 1', { skip: NO_CLANG }, async () => {
    const dir = await cProject();
    const path = join(dir, 'src', 'main.c');
    writeFileSync(path, readFileSync(path, 'utf8').replace('subako_structured(call, out);', 'subako_structured(call, out) oops;'));
    const run = await subako(['build', dir]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /src\/main\.c:\d+:\d+: error: use of undeclared identifier 'oops'/);
    assert.match(run.stderr, /subako build: clang exited with status 1; the build stopped \(its output is above\)\n$/);
    assert.doesNotMatch(run.stderr, /\n {4}at /);
  });

  test('a module the checks refuse (a WASI command that is no MCP server) is refused as check refuses it', { skip: NO_CLANG }, async () => {
    const dir = await cProject();
    writeFileSync(join(dir, 'src', 'main.c'), 'int main(void) { return 0; }\n');
    const run = await subako(['build', dir]);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^refused: package "proj" 0\.1\.0/);
    const check = await subako(['check', dir]);
    assert.equal(check.code, 1);
    assert.equal(run.stdout.replace(/^refused: package "proj" 0\.1\.0 \([^)]*\)/, ''), check.stdout.replace(/^refused: package "proj" 0\.1\.0 \([^)]*\)/, ''));
  });

  test('a directory that is no project says how to start one', async () => {
    const dir = scratchDir('none');
    const run = await subako(['build', dir]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /is not a package project subako can build .* subako init <dir>/);
  });
});
