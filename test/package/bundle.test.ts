import { describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import {
  BUNDLE_PROBLEMS, BundleError, bundleDigest, normalizeEntryPath, packBundle, readBundle, unpackBundle,
} from '../../src/package/index.js';
import { ContentStore } from '../../src/package/store.js';
import { tarEntry, tarArchive } from '../platform/helpers/tar-builder.js';

const scratch = (): string => mkdtempSync(join(tmpdir(), 'subako-bundle-'));

function packageDir(): string {
  const dir = scratch();
  writeFileSync(join(dir, 'subako-package.json'), '{"abi":1,"name":"x","description":"d"}');
  writeFileSync(join(dir, 'module.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  mkdirSync(join(dir, 'assets', 'deep'), { recursive: true });
  writeFileSync(join(dir, 'assets', 'deep', 'data.txt'), 'hello');
  return dir;
}

async function refusal(archive: Uint8Array, limits?: Parameters<typeof readBundle>[1]): Promise<string[]> {
  try {
    await readBundle(archive, limits);
  } catch (err) {
    assert.ok(err instanceof BundleError, `expected a BundleError, got ${String(err)}`);
    return err.problems.map((p) => p.code);
  }
  assert.fail('the bundle was accepted');
}

describe('packing', () => {
  it('packs a directory and reads back every file with its bytes', async () => {
    const contents = await readBundle(await packBundle(packageDir()));
    assert.deepEqual(contents.files.map((f) => f.path), ['assets/deep/data.txt', 'module.wasm', 'subako-package.json']);
    assert.equal(contents.files[0].data.toString(), 'hello');
  });

  it('is deterministic: the same directory gives the same bytes, so the same content address', async () => {
    const dir = packageDir();
    const a = await packBundle(dir);
    const b = await packBundle(dir);
    assert.equal(bundleDigest(a), bundleDigest(b));
  });

  it('refuses a directory holding a symbolic link', async () => {
    const dir = packageDir();
    symlinkSync('/etc/passwd', join(dir, 'assets', 'link'));
    await assert.rejects(packBundle(dir), (err: unknown) => err instanceof BundleError && err.problems.some((p) => p.code === BUNDLE_PROBLEMS.link));
  });

  it('leaves out dot-directories such as .git', async () => {
    const dir = packageDir();
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, '.git', 'HEAD'), 'ref');
    const contents = await readBundle(await packBundle(dir));
    assert.ok(!contents.files.some((f) => f.path.startsWith('.git')));
  });
});

describe('entry paths', () => {
  const refused = ['../evil', 'a/../../evil', '/etc/passwd', 'C:/windows', 'a\\b', 'a\0b', '..'];
  for (const path of refused) {
    it(`refuses ${JSON.stringify(path)}`, () => {
      assert.ok('problem' in normalizeEntryPath(path));
    });
  }
  it('normalizes ./ prefixes and trailing slashes', () => {
    assert.deepEqual(normalizeEntryPath('./a/b/'), { path: 'a/b' });
    assert.deepEqual(normalizeEntryPath('a//b'), { path: 'a/b' });
  });
});

describe('malicious and broken archives are refused with clear problems', () => {
  it('an entry climbing out with ../', async () => {
    const archive = tarArchive([tarEntry('ok.txt', 'fine'), tarEntry('../../escape.txt', 'owned')]);
    assert.deepEqual(await refusal(archive), [BUNDLE_PROBLEMS.path]);
  });

  it('an absolute path', async () => {
    assert.deepEqual(await refusal(tarArchive([tarEntry('/tmp/abs.txt', 'x')])), [BUNDLE_PROBLEMS.path]);
  });

  it('a symbolic link', async () => {
    const archive = tarArchive([tarEntry('link', '', { type: '2', linkname: '/etc/passwd' })]);
    assert.deepEqual(await refusal(archive), [BUNDLE_PROBLEMS.link]);
  });

  it('a hard link', async () => {
    const archive = tarArchive([tarEntry('a.txt', 'x'), tarEntry('b.txt', '', { type: '1', linkname: 'a.txt' })]);
    assert.deepEqual(await refusal(archive), [BUNDLE_PROBLEMS.link]);
  });

  it('a character device and a FIFO', async () => {
    const archive = tarArchive([tarEntry('dev', '', { type: '3' }), tarEntry('fifo', '', { type: '6' })]);
    assert.deepEqual(await refusal(archive), [BUNDLE_PROBLEMS.entryType, BUNDLE_PROBLEMS.entryType]);
  });

  it('a path given twice, and a file where a directory is needed', async () => {
    const archive = tarArchive([tarEntry('a', 'x'), tarEntry('a', 'y'), tarEntry('a/b', 'z')]);
    const codes = await refusal(archive);
    assert.ok(codes.includes(BUNDLE_PROBLEMS.duplicate));
  });

  it('an archive over the size limit', async () => {
    const archive = tarArchive([tarEntry('a', randomBytes(4000))]);
    assert.deepEqual(await refusal(archive, { maxArchiveBytes: 100, maxUnpackedBytes: 1e6, maxEntries: 10 }), [BUNDLE_PROBLEMS.tooLarge]);
  });

  it('a gzip bomb: small compressed, huge unpacked, stopped while decompressing', async () => {
    const archive = tarArchive([tarEntry('zeros', Buffer.alloc(8 * 1024 * 1024))]);
    assert.ok(archive.length < 100 * 1024);
    assert.deepEqual(await refusal(archive, { maxArchiveBytes: 1e6, maxUnpackedBytes: 1024 * 1024, maxEntries: 10 }), [BUNDLE_PROBLEMS.unpackedTooLarge]);
  });

  it('too many entries', async () => {
    const archive = tarArchive(Array.from({ length: 12 }, (_, i) => tarEntry(`f${i}`, 'x')));
    assert.deepEqual(await refusal(archive, { maxArchiveBytes: 1e6, maxUnpackedBytes: 1e6, maxEntries: 10 }), [BUNDLE_PROBLEMS.tooManyEntries]);
  });

  it('bytes that are not gzip', async () => {
    assert.deepEqual(await refusal(Buffer.from('PK\x03\x04 a zip file')), [BUNDLE_PROBLEMS.notGzip]);
  });

  it('gzip of something that is not tar', async () => {
    assert.deepEqual(await refusal(gzipSync(Buffer.from('just some text, not a tar archive at all'.repeat(20)))), [BUNDLE_PROBLEMS.corrupt]);
  });

  it('an archive without files', async () => {
    assert.deepEqual(await refusal(tarArchive([tarEntry('dir/', '', { type: '5' })])), [BUNDLE_PROBLEMS.empty]);
  });

  it('unpacking a refused bundle writes nothing', async () => {
    const dest = join(scratch(), 'out');
    await assert.rejects(unpackBundle(tarArchive([tarEntry('fine.txt', 'x'), tarEntry('../bad', 'y')]), dest), BundleError);
    assert.equal(existsSync(dest), false);
  });
});

describe('unpacking', () => {
  it('writes the files into a fresh directory, regular files only', async () => {
    const dest = join(scratch(), 'out');
    await unpackBundle(tarArchive([tarEntry('./a/b.txt', 'bee'), tarEntry('c.txt', 'see', { mode: 0o4777 })]), dest);
    assert.equal(readFileSync(join(dest, 'a', 'b.txt'), 'utf8'), 'bee');
    assert.equal(readFileSync(join(dest, 'c.txt'), 'utf8'), 'see');
  });
});

describe('the content-addressed store', () => {
  it('stores a bundle under its digest once, and re-creates its tree from the blob', async () => {
    const store = new ContentStore(join(scratch(), 'packages'));
    await store.init();
    const archive = await packBundle(packageDir());
    const contents = await readBundle(archive);
    const digest = await store.put(archive, contents);
    assert.equal(digest, bundleDigest(archive));
    assert.equal(await store.put(archive, contents), digest);
    const tree = await store.tree(digest);
    assert.equal(readFileSync(join(tree, 'assets', 'deep', 'data.txt'), 'utf8'), 'hello');
    await store.remove(digest);
    assert.equal(await store.has(digest), false);
  });
});
