import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPackage, readPackageDir } from '../../src/package/index.js';
import { fixture, REPO_ROOT } from '../helpers/paths.js';
import { wat } from '../helpers/wat.js';

const MANIFEST = { abi: 1, name: 'upper', description: 'Upper-cases its input.', version: '0.1.0' };
let root: string;
let cModule: Buffer;
let counter = 0;

async function makePackage(files: { manifest?: unknown; module?: Uint8Array | 'dir'; assets?: 'dir' | 'file' }): Promise<string> {
  const dir = join(root, `pkg-${++counter}`);
  await mkdir(dir);
  if (files.manifest !== undefined) {
    const text = typeof files.manifest === 'string' ? files.manifest : JSON.stringify(files.manifest);
    await writeFile(join(dir, 'subako-package.json'), text);
  }
  if (files.module === 'dir') await mkdir(join(dir, 'module.wasm'));
  else if (files.module) await writeFile(join(dir, 'module.wasm'), files.module);
  if (files.assets === 'dir') {
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'assets', 'words.txt'), 'hello\n');
  } else if (files.assets === 'file') {
    await writeFile(join(dir, 'assets'), 'not a directory');
  }
  return dir;
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'subako-package-test-'));
  cModule = await readFile(fixture('c', 'toolchain', 'wasi-command.wasm'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('readPackageDir', () => {
  test('a manifest, a module and an assets directory are read', async () => {
    const dir = await makePackage({ manifest: MANIFEST, module: cModule, assets: 'dir' });
    const read = await readPackageDir(dir);
    assert.equal(read.ok, true);
    if (!read.ok) return;
    assert.deepEqual(read.manifest, MANIFEST);
    assert.deepEqual(Buffer.from(read.moduleBytes), cModule);
    assert.equal(read.assetsDir, join(dir, 'assets'));
  });

  test('without assets/, assetsDir is null', async () => {
    const read = await readPackageDir(await makePackage({ manifest: MANIFEST, module: cModule }));
    assert.equal(read.ok && read.assetsDir, null);
  });

  test('no manifest is manifest.missing; no module is package.module-missing; both are reported', async () => {
    const read = await readPackageDir(await makePackage({}));
    assert.equal(read.ok, false);
    assert.deepEqual(!read.ok && read.problems.map((p) => p.code), ['manifest.missing', 'package.module-missing']);
  });

  test('module.wasm that is a directory is package.module-missing', async () => {
    const read = await readPackageDir(await makePackage({ manifest: MANIFEST, module: 'dir' }));
    assert.deepEqual(!read.ok && read.problems.map((p) => p.code), ['package.module-missing']);
  });

  test('assets that is a file is package.assets-not-dir', async () => {
    const read = await readPackageDir(await makePackage({ manifest: MANIFEST, module: cModule, assets: 'file' }));
    assert.deepEqual(!read.ok && read.problems.map((p) => p.code), ['package.assets-not-dir']);
  });

  test('a manifest that is not UTF-8 or not JSON is manifest.json', async () => {
    const notJson = await readPackageDir(await makePackage({ manifest: '{abi: 1}', module: cModule }));
    assert.deepEqual(!notJson.ok && notJson.problems.map((p) => p.code), ['manifest.json']);
    const dir = await makePackage({ module: cModule });
    await writeFile(join(dir, 'subako-package.json'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    const notUtf8 = await readPackageDir(dir);
    assert.deepEqual(!notUtf8.ok && notUtf8.problems.map((p) => p.code), ['manifest.json']);
  });

  test('a manifest larger than 64 KiB is refused without being parsed', async () => {
    const huge = JSON.stringify({ ...MANIFEST, description: 'x'.repeat(70 * 1024) });
    const read = await readPackageDir(await makePackage({ manifest: huge, module: cModule }));
    assert.ok(!read.ok && /larger than 65536 bytes/.test(read.problems[0].message));
  });
});

describe('checkPackage', () => {
  test('a valid package directory is accepted and returns its manifest', async () => {
    const result = await checkPackage(await makePackage({ manifest: MANIFEST, module: cModule, assets: 'dir' }));
    assert.deepEqual(result.problems, []);
    assert.equal(result.ok, true);
    assert.deepEqual(result.manifest, MANIFEST);
    assert.equal(result.module?.kind, 'module');
  });

  test('the example package that ships with the project is accepted', async () => {
    const result = await checkPackage(join(REPO_ROOT, 'examples', 'packages', 'greet'));
    assert.deepEqual(result.problems, []);
  });

  test('a .wasm file is checked as a module, with no manifest', async () => {
    const result = await checkPackage(fixture('as', 'wasi-command.wasm'));
    assert.equal(result.ok, true);
    assert.equal(result.manifest, null);
  });

  test('manifest problems and module problems are reported together', async () => {
    const refused = await wat('(module (import "env" "f" (func)) (memory (export "memory") 1) (func (export "_start")))');
    const dir = await makePackage({ manifest: { ...MANIFEST, abi: 2 }, module: refused });
    const result = await checkPackage(dir);
    assert.equal(result.ok, false);
    assert.deepEqual(result.problems.map((p) => p.code), ['manifest.abi', 'import.module']);
    assert.equal(result.manifest, null);
  });

  test('a valid manifest is returned even when the module is refused', async () => {
    const dir = await makePackage({ manifest: MANIFEST, module: new TextEncoder().encode('not wasm') });
    const result = await checkPackage(dir);
    assert.deepEqual(result.problems.map((p) => p.code), ['format.not-wasm']);
    assert.deepEqual(result.manifest, MANIFEST);
  });

  test('a path that does not exist is package.not-found', async () => {
    const result = await checkPackage(join(root, 'nothing-here'));
    assert.deepEqual(result.problems.map((p) => p.code), ['package.not-found']);
  });
});
