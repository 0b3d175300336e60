import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EgressError } from '../../src/egress/index.js';
import { openVolumeFileForRead, openVolumeFileForWrite, resolveVolumePath, type VolumeMount } from '../../src/egress/volume-path.js';

let root: string;
let mounts: VolumeMount[];
let outside: string;

before(() => {
  root = mkdtempSync(join(tmpdir(), 'subako-egress-vol-'));
  mkdirSync(join(root, 'tmp'));
  mkdirSync(join(root, 'data'));
  outside = join(root, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'host secret');
  writeFileSync(join(root, 'tmp', 'in.bin'), 'payload');
  symlinkSync(outside, join(root, 'tmp', 'escape'));
  symlinkSync(join(outside, 'secret.txt'), join(root, 'tmp', 'link.txt'));
  mounts = [{ guestPath: '/volume/tmp', hostPath: join(root, 'tmp') }, { guestPath: '/volume/data', hostPath: join(root, 'data') }];
});
after(() => rmSync(root, { recursive: true, force: true }));

const isBadPath = (e: unknown): boolean => e instanceof EgressError && e.kind === 'bad_path';

describe('volume paths: only under /volume/tmp and /volume/data', () => {
  it('maps a path onto its mount', () => {
    const resolved = resolveVolumePath('/volume/tmp/./a//b.bin', mounts);
    assert.deepEqual([resolved.mount.guestPath, resolved.segments, resolved.guestPath], ['/volume/tmp', ['a', 'b.bin'], '/volume/tmp/a/b.bin']);
    assert.equal(resolveVolumePath('/volume/data/x', mounts).mount.guestPath, '/volume/data');
  });
  it('refuses relative paths, "..", other directories, the volume directories themselves, and NUL', () => {
    for (const path of ['volume/tmp/a', '/volume/tmp/../data/x', '/volume/tmp/a/../../x', '/package/x', '/volume/x', '/volume/tmpx/a', '/volume/tmp', '/volume/tmp/', '/volume/tmp/a\0b', '/etc/passwd', '']) {
      assert.throws(() => resolveVolumePath(path, mounts), isBadPath, JSON.stringify(path));
    }
  });
  it('/volume/data is refused when it is not mounted', () => {
    assert.throws(() => resolveVolumePath('/volume/data/x', mounts.slice(0, 1)), isBadPath);
  });
  it('a mount other than /volume/tmp or /volume/data is never used', () => {
    assert.throws(() => resolveVolumePath('/package/x', [{ guestPath: '/package', hostPath: outside }]), isBadPath);
  });
});

describe('volume files: no symbolic link leads out', () => {
  it('reads a regular file', async () => {
    const { handle, size } = await openVolumeFileForRead('/volume/tmp/in.bin', mounts);
    assert.equal(size, 7);
    await handle.close();
  });
  it('refuses reading through a symlinked directory, a symlinked file, a missing file or a directory', async () => {
    for (const path of ['/volume/tmp/escape/secret.txt', '/volume/tmp/link.txt', '/volume/tmp/missing', '/volume/tmp/escape', '/volume/tmp/nodir/x']) {
      await assert.rejects(openVolumeFileForRead(path, mounts), isBadPath, path);
    }
  });
  it('writes create parents and overwrite an existing file', async () => {
    writeFileSync(join(root, 'data', 'old.txt'), 'old and longer content');
    for (const path of ['/volume/tmp/new/deep/out.bin', '/volume/data/old.txt']) {
      const file = await openVolumeFileForWrite(path, mounts);
      await file.handle.write(Buffer.from('new'));
      await file.finish(false);
    }
    assert.equal(readFileSync(join(root, 'tmp', 'new', 'deep', 'out.bin'), 'utf8'), 'new');
    assert.equal(readFileSync(join(root, 'data', 'old.txt'), 'utf8'), 'new');
  });
  it('refuses writing through a symlinked directory or onto a symlink, and leaves the target alone', async () => {
    await assert.rejects(openVolumeFileForWrite('/volume/tmp/escape/secret.txt', mounts), isBadPath);
    await assert.rejects(openVolumeFileForWrite('/volume/tmp/escape/new.txt', mounts), isBadPath);
    await assert.rejects(openVolumeFileForWrite('/volume/tmp/link.txt', mounts), isBadPath);
    await assert.rejects(openVolumeFileForWrite('/volume/tmp/in.bin/x', mounts), isBadPath, 'a file is not a directory');
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'host secret');
    assert.equal(existsSync(join(outside, 'new.txt')), false);
  });
});
