/**
 * A NATS worker keeps the packages it loaded in the one cache of loaded packages (platform/loaded-packages.ts)
 * with its bound: a deleted version cannot be announced on the bus, so however many versions its calls name,
 * it holds at most `maxLoadedPackages` of them, and one that left is fetched and loaded again when called.
 * Real NATS (the machine's shared server, under a prefix of this run's own), a replica's NatsRuntime and a
 * NatsWorker in this process, real sandboxes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContentStore, DEFAULT_BUNDLE_LIMITS, NatsBlobStore, packBundle } from '../../src/package/index.js';
import { FunctionRuntime } from '../../src/platform/function-runtime.js';
import { PackageService } from '../../src/platform/packages.js';
import { NatsRuntime, NatsWorker } from '../../src/platform/scale-out/index.js';
import { natsSubjects } from '../../src/platform/scale-out/nats-calls.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import type { PackageRecord } from '../../src/platform/store/index.js';
import { fixture } from '../helpers/paths.js';
import { connectShared, removeBuckets, runName } from '../helpers/nats.js';

const ECHO = readFileSync(fixture('c', 'mcp', 'echo.wasm'));
/** The echo module with a custom section of its own: the same code, distinct bytes (and digest). */
const variant = (n: number): Buffer => {
  const name = Buffer.from(`v${n}`);
  return Buffer.concat([ECHO, Buffer.from([0, name.length + 1, name.length]), name]);
};

describe('a NATS worker\'s loaded packages', () => {
  const prefix = runName('subako');
  const root = mkdtempSync(join(tmpdir(), 'subako-worker-packages-'));
  const volumesDir = join(root, 'volumes');
  const tmpDir = join(volumesDir, 'sessions', `ses_${randomBytes(14).toString('hex')}`, 'tmp');
  // The replica makes a session's volume on the shared mount before it sends a call (Volumes).
  mkdirSync(tmpDir, { recursive: true });
  const sealingKey = randomBytes(32);
  let runtime: NatsRuntime;
  let worker: NatsWorker;
  let workerNc: Awaited<ReturnType<typeof connectShared>> | undefined;
  let store: SqliteStore;
  let packages: PackageService;

  before(async () => {
    const subjects = natsSubjects(prefix);
    const replicaNc = await connectShared();
    workerNc = await connectShared();
    runtime = new NatsRuntime({ nc: replicaNc, prefix, volumesRoot: volumesDir, sealingKey, local: new FunctionRuntime({ poolSize: 1 }) });
    worker = new NatsWorker({
      nc: workerNc, prefix, blobs: await NatsBlobStore.open(workerNc, subjects.packagesBucket), pool: 1, volumesDir,
      dataDir: join(root, 'worker'), sealingKey, maxLoadedPackages: 2,
    });
    await worker.start();
    store = new SqliteStore(join(root, 'subako.db'));
    const blobs = new ContentStore(join(root, 'replica-blobs'), DEFAULT_BUNDLE_LIMITS, await NatsBlobStore.open(replicaNc, subjects.packagesBucket));
    await blobs.init();
    packages = new PackageService(store, blobs, runtime, join(root, 'scratch'), DEFAULT_BUNDLE_LIMITS);
  });

  after(async () => {
    await worker?.close();
    await workerNc?.close();
    await runtime?.close();
    await store?.close();
    await removeBuckets(prefix);
    rmSync(root, { recursive: true, force: true });
  });

  const upload = async (n: number): Promise<PackageRecord> => {
    const dir = join(root, `pkg-${n}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'echo', description: 'Echoes.', version: `${n}.0.0` }));
    writeFileSync(join(dir, 'module.wasm'), variant(n));
    return (await packages.upload(await packBundle(dir))).record;
  };
  const callEcho = async (rec: PackageRecord, text: string): Promise<void> => {
    const tool = (await runtime.toolbox(await packages.ref(rec), rec.tools, () => ({ tmpDir }))).echo;
    const result = await tool.call({ text });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.ok(JSON.stringify(result).includes(text), JSON.stringify(result));
  };

  it('holds at most its bound however many versions its calls name; one that left is loaded again when called', async () => {
    const versions: PackageRecord[] = [];
    for (let n = 1; n <= 6; n++) versions.push(await upload(n));
    for (const [i, rec] of versions.entries()) {
      await callEcho(rec, `call ${i}`);
      assert.ok(worker.stats().loadedPackages <= 2, `packages loaded: ${worker.stats().loadedPackages}`);
    }
    assert.equal(worker.stats().loadedPackages, 2);
    const misses = worker.stats().sandbox.compileCacheMisses;
    assert.equal(misses, 6, 'each version compiled once');
    // The first left the cache (its module stayed idle in the host): called again, it is read again, not compiled.
    await callEcho(versions[0], 'back again');
    assert.equal(worker.stats().loadedPackages, 2);
    assert.equal(worker.stats().sandbox.compileCacheMisses, misses);
    assert.equal(worker.stats().calls.ok, 7);
  });
});
