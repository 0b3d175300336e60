/**
 * One cache of loaded packages (platform/loaded-packages.ts), used by the in-process runtime and the NATS
 * worker: a package version's module is compiled once for all its calls, released in the sandbox when the
 * version is deleted (its calls over, no other version holding the same module), and the cache holds at most
 * its bound of package versions, the least recently called leaving first.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FunctionHost } from '../../src/function/index.js';
import { ContentStore, DEFAULT_BUNDLE_LIMITS, packBundle } from '../../src/package/index.js';
import { FunctionRuntime } from '../../src/platform/function-runtime.js';
import { LoadedPackages } from '../../src/platform/loaded-packages.js';
import { PackageService } from '../../src/platform/packages.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import type { PackageRecord } from '../../src/platform/store/index.js';
import type { Tool } from '../../src/tool.js';
import { fixture } from '../helpers/paths.js';
import { until } from '../helpers/eventually.js';

const ECHO = readFileSync(fixture('c', 'mcp', 'echo.wasm'));
/** The echo module with a custom section of its own: the same code, distinct bytes (and digest). */
const variant = (n: number): Buffer => {
  const name = Buffer.from(`v${n}`);
  return Buffer.concat([ECHO, Buffer.from([0, name.length + 1, name.length]), name]);
};

const root = mkdtempSync(join(tmpdir(), 'subako-loaded-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;

/** An echo package directory: `module` picks its module's bytes, `version` its manifest's version. */
function packageDir(version: string, module: Buffer): string {
  const dir = join(root, `pkg-${(dirs += 1)}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'echo', description: 'Echoes.', version }));
  writeFileSync(join(dir, 'module.wasm'), module);
  return dir;
}

describe('the in-process runtime, when a package version is deleted', () => {
  let runtime: FunctionRuntime;
  let store: SqliteStore;
  let packages: PackageService;
  // A call mounts directories its caller made (the platform's Volumes does it for a session).
  const tmpDir = join(root, 'tmp');
  mkdirSync(tmpDir, { recursive: true });

  before(async () => {
    runtime = new FunctionRuntime({ poolSize: 1 });
    store = new SqliteStore(join(root, 'subako.db'));
    const blobs = new ContentStore(join(root, 'blobs'), DEFAULT_BUNDLE_LIMITS);
    await blobs.init();
    packages = new PackageService(store, blobs, runtime, join(root, 'scratch'), DEFAULT_BUNDLE_LIMITS);
  });
  after(async () => {
    await runtime.close();
    await store.close();
  });

  const upload = async (version: string, module: Buffer): Promise<PackageRecord> => {
    const { record, created } = await packages.upload(await packBundle(packageDir(version, module)));
    assert.ok(created);
    return record;
  };
  /** The echo tool of a stored version, as a session's toolbox holds it. */
  const echoOf = async (rec: PackageRecord): Promise<Tool> => (await runtime.toolbox(await packages.ref(rec), rec.tools, () => ({ tmpDir }))).echo;
  const echoed = async (tool: Tool, text: string): Promise<void> => {
    const result = await tool.call({ text });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.ok(JSON.stringify(result).includes(text), JSON.stringify(result));
  };

  it('its module is released in the sandbox, and a later call of another version still works', async () => {
    const one = await upload('1.0.0', variant(1));
    const two = await upload('2.0.0', variant(2));
    const echoOne = await echoOf(one);
    const echoTwo = await echoOf(two);
    await echoed(echoOne, 'first');
    await echoed(echoTwo, 'second');
    await echoed(echoOne, 'first again');
    const before = runtime.stats();
    assert.equal(before.loadedPackages, 2);
    assert.equal(before.modules, 2);

    await packages.delete('echo', '1.0.0');
    assert.equal(runtime.stats().loadedPackages, 1);
    await until('the deleted version\'s module is released', () => runtime.stats().modules === 1);
    await echoed(echoTwo, 'second after the delete');
    assert.equal(runtime.stats().modules, 1, 'nothing compiled again for the version that remains');
    assert.equal(runtime.stats().compileCacheMisses, before.compileCacheMisses);
    await packages.delete('echo', '2.0.0');
  });

  it('a version deleted before its first call: the module its upload\'s discovery left compiled is released too', async () => {
    const modules = runtime.stats().modules;
    await upload('3.0.0', variant(3));
    assert.equal(runtime.stats().modules, modules + 1, 'discovery left it compiled for a first call');
    await packages.delete('echo', '3.0.0');
    await until('the module discovery left is released', () => runtime.stats().modules === modules);
  });

  it('a module that another version\'s bytes hold too stays compiled until that version goes as well', async () => {
    const four = await upload('4.0.0', variant(4));
    const five = await upload('5.0.0', variant(4));
    assert.notEqual(four.digest, five.digest, 'two bundles (their manifests differ) of one module');
    const echoFour = await echoOf(four);
    const echoFive = await echoOf(five);
    await echoed(echoFour, 'four');
    await echoed(echoFive, 'five');
    const modules = runtime.stats().modules;
    await packages.delete('echo', '4.0.0');
    await echoed(echoFive, 'five, its module shared with a deleted version');
    assert.equal(runtime.stats().modules, modules, 'still held by version 5.0.0');
    await packages.delete('echo', '5.0.0');
    await until('the shared module is released with its last version', () => runtime.stats().modules === modules - 1);
  });
});

describe('the cache\'s bound', () => {
  let host: FunctionHost;
  before(() => { host = new FunctionHost({ poolSize: 1 }); });
  after(() => host.close());

  it('holds at most its bound of package versions, however many are called; one that left is loaded again when called', async () => {
    const dirsByDigest = new Map<string, string>();
    const cache = new LoadedPackages(host, (key) => dirsByDigest.get(key.digest)!, { maxPackages: 2 });
    const keys = Array.from({ length: 24 }, (_, n) => {
      const key = { digest: `digest-${n}`, name: 'echo', version: `${n}.0.0` };
      dirsByDigest.set(key.digest, packageDir(key.version, variant(100 + n)));
      return key;
    });
    const tmpDir = join(root, 'tmp-bound');
    mkdirSync(tmpDir, { recursive: true });
    for (const key of keys) {
      const lent = await cache.borrow(key);
      const outcome = await host.call(lent.loaded, 'echo', { text: key.version }, { tmpDir });
      assert.equal(outcome.status, 'ok');
      lent.giveBack();
      assert.ok(cache.stats().loadedPackages <= 2, `packages loaded: ${cache.stats().loadedPackages}`);
    }
    // Those that left the cache are the host's idle modules: released past its own bound (16).
    await until('the host holds a bounded number of modules', () => host.stats().modules <= 2 + 16);
    const first = await cache.borrow(keys[0]);
    assert.equal((await host.call(first.loaded, 'echo', { text: 'back' }, { tmpDir })).status, 'ok');
    first.giveBack();
    assert.ok(cache.stats().loadedPackages <= 2);
  });

  it('a package released while a call runs it — in the cache or pushed out of it — is let go only when the call ends', async (t) => {
    // A host of its own: no idle modules of the test before, which the host could release meanwhile.
    const host = new FunctionHost({ poolSize: 1 });
    t.after(() => host.close());
    const dirOf = new Map([['a', packageDir('1.0.0', variant(200))], ['b', packageDir('2.0.0', variant(201))], ['c', packageDir('3.0.0', variant(202))]]);
    const cache = new LoadedPackages(host, (key) => dirOf.get(key.digest)!, { maxPackages: 1 });
    const tmpDir = join(root, 'tmp-lent');
    mkdirSync(tmpDir, { recursive: true });
    const modules = host.stats().modules;
    assert.equal(modules, 0);

    // Released while in the cache and lent.
    const lentA = await cache.borrow({ digest: 'a', name: 'echo', version: '1.0.0' });
    cache.release('a');
    assert.equal((await host.call(lentA.loaded, 'echo', { text: 'still mine' }, { tmpDir })).status, 'ok');
    assert.equal(host.stats().modules, modules + 1, 'held while lent');
    lentA.giveBack();
    lentA.giveBack(); // twice is once
    await until('a\'s module goes once its call gave it back', () => host.stats().modules === modules);

    // Pushed out of the cache (bound 1) while lent, then released.
    const lentB = await cache.borrow({ digest: 'b', name: 'echo', version: '2.0.0' });
    (await cache.borrow({ digest: 'c', name: 'echo', version: '3.0.0' })).giveBack();
    assert.equal(cache.stats().loadedPackages, 1);
    cache.release('b');
    assert.equal((await host.call(lentB.loaded, 'echo', { text: 'mine too' }, { tmpDir })).status, 'ok');
    const withB = host.stats().modules;
    lentB.giveBack();
    await until('b\'s module goes once its call gave it back', () => host.stats().modules === withB - 1);
  });
});
