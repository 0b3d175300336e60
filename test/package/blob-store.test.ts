import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Objm } from '@nats-io/obj';
import type { NatsConnection } from '@nats-io/transport-node';
import { BLOB_ERRORS, BlobError, DirectoryBlobStore, NatsBlobStore, type BlobStore } from '../../src/package/index.js';
import { connectShared, runName } from '../helpers/nats.js';

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

interface BackEnd {
  name: string;
  open(): Promise<BlobStore>;
  /** Stores `bytes` under `digest` behind the store's back (a damaged disk or bucket). */
  plant(digest: string, bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

function directoryBackEnd(): BackEnd {
  const dir = mkdtempSync(join(tmpdir(), 'subako-blobs-'));
  return {
    name: 'the local content-addressed directory',
    async open() {
      const store = new DirectoryBlobStore(dir);
      await store.init();
      return store;
    },
    async plant(digest, bytes) {
      writeFileSync(join(dir, `${digest}.tar.gz`), bytes);
    },
    async close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function natsBackEnd(): BackEnd {
  const bucket = runName('subako_blobs');
  let nc: NatsConnection | null = null;
  let store: NatsBlobStore | null = null;
  return {
    name: 'the NATS JetStream object store',
    async open() {
      nc ??= await connectShared();
      store = await NatsBlobStore.open(nc, bucket);
      return store;
    },
    async plant(digest, bytes) {
      const raw = await new Objm(nc!).open(bucket);
      await raw.putBlob({ name: digest }, bytes);
    },
    async close() {
      await store?.destroy();
      await nc?.close();
    },
  };
}

for (const make of [directoryBackEnd, natsBackEnd]) {
  const backEnd = make();
  describe(`blobs in ${backEnd.name}`, () => {
    let store: BlobStore;
    before(async () => { store = await backEnd.open(); });
    after(() => backEnd.close());

    it('a blob is stored under the sha-256 of its bytes and read back whole', async () => {
      const bytes = randomBytes(300_000);
      const digest = await store.put(bytes);
      assert.equal(digest, sha(bytes));
      assert.equal(await store.has(digest), true);
      assert.deepEqual(await store.get(digest), bytes);
    });

    it('storing the same bytes twice answers the same digest', async () => {
      const bytes = randomBytes(1000);
      assert.equal(await store.put(bytes), await store.put(bytes));
    });

    it('an empty blob is a blob', async () => {
      const digest = await store.put(new Uint8Array(0));
      assert.equal((await store.get(digest)).length, 0);
    });

    it('a digest nothing is stored under is refused as blob.missing', async () => {
      const digest = sha(randomBytes(16));
      assert.equal(await store.has(digest), false);
      await assert.rejects(store.get(digest), (err: unknown) => err instanceof BlobError && err.code === BLOB_ERRORS.missing);
    });

    it('a blob whose bytes do not hash to its name is refused as blob.corrupt', async () => {
      const named = sha(randomBytes(16));
      await backEnd.plant(named, Buffer.from('other bytes'));
      await assert.rejects(store.get(named), (err: unknown) => err instanceof BlobError && err.code === BLOB_ERRORS.corrupt
        && err.message.includes(named) && err.message.includes(sha(Buffer.from('other bytes'))));
    });

    it('a name that is not a sha-256 digest is refused before any read', async () => {
      for (const name of ['../secret', 'ABC', sha(Buffer.from('x')).toUpperCase()]) {
        await assert.rejects(store.get(name), (err: unknown) => err instanceof BlobError && err.code === BLOB_ERRORS.digest);
      }
    });

    it('a removed blob is gone', async () => {
      const digest = await store.put(randomBytes(64));
      await store.remove(digest);
      assert.equal(await store.has(digest), false);
      await assert.rejects(store.get(digest), (err: unknown) => err instanceof BlobError && err.code === BLOB_ERRORS.missing);
      await store.remove(digest);
    });
  });
}

describe('the directory store sweeps what its own start-up finds', () => {
  it('temporary blobs and unreferenced blobs go, referenced ones stay', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'subako-blobs-'));
    try {
      const store = new DirectoryBlobStore(dir);
      await store.init();
      const kept = await store.put(Buffer.from('kept'));
      const orphan = await store.put(Buffer.from('orphan'));
      writeFileSync(join(dir, `${orphan}.tar.gz.tmp-0123456789ab`), 'half');
      writeFileSync(join(dir, 'not-ours.txt'), 'x');
      assert.deepEqual(await store.sweep(new Set([kept])), { partial: 1, orphans: 1 });
      assert.deepEqual(readdirSync(dir).sort(), [`${kept}.tar.gz`, 'not-ours.txt'].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
