/**
 * The limits a guest meets: read-only preopens (EROFS), the write budget (EDQUOT), fd_allocate
 * (ENOTSUP), sockets (ENOTSOCK / EBADF), proc_raise (ENOSYS), proc_exit's status.
 */
import { ENTRY_COST_BYTES } from '../../src/wasi/index.js';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixture } from '../helpers/paths.js';
import { CountingBudget, runWasi } from './runner.js';
import { scratchDir, snapshotTree } from './scratch.js';

function outcomes(stdout: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const match = /^([^ ].*?): (.*)$/.exec(line);
    if (match) map.set(match[1], match[2].trim());
  }
  return map;
}

describe('a read-only preopen refuses every change with EROFS', () => {
  test('writes, creation, removal, rename, link, symlink, set_size and set_times, also across preopens', () => {
    const scratch = scratchDir();
    try {
      const ro = join(scratch.path, 'ro');
      const rw = join(scratch.path, 'rw');
      mkdirSync(join(ro, 'sub'), { recursive: true });
      mkdirSync(rw);
      writeFileSync(join(ro, 'file.txt'), 'read me');
      writeFileSync(join(ro, 'sub', 'inner.txt'), 'i');
      writeFileSync(join(rw, 'mine.txt'), 'm');
      const before = snapshotTree(ro);
      const result = runWasi(fixture('c', 'wasi', 'readonly.wasm'), {
        preopens: [{ guestPath: '/ro', hostPath: ro, readOnly: true }, { guestPath: '/rw', hostPath: rw, readOnly: false }],
      });
      assert.equal(result.exitCode, 0, result.stderr);
      const got = outcomes(result.stdout);
      assert.equal(got.get('open for reading'), 'SUCCESS');
      assert.match(result.stdout, /\[read me\]/);
      assert.equal(got.get('write to it'), 'EBADF');
      for (const attempt of ['set size', 'set times', 'open for writing', 'create', 'truncate', 'mkdir', 'rmdir',
        'unlink', 'rename', 'link', 'symlink', 'path set times', 'rename to writable preopen',
        'link to writable preopen', 'rename from writable preopen', 'symlink into it from rw',
        'mkdir in sub', 'create in sub', 'unlink in sub']) {
        assert.equal(got.get(attempt), 'EROFS', attempt);
      }
      assert.equal(got.get('allocate'), 'ENOTSUP');
      assert.match(result.stdout, /can create files: 0, can read dirs: 1/);
      assert.equal(got.get('writable preopen still writable'), 'SUCCESS');
      assert.deepEqual(snapshotTree(ro), before);
    } finally {
      scratch.remove();
    }
  });
});

describe('a read-only preopen refuses an open for writing at the open, as a read-only mount does', () => {
  test('open(O_WRONLY / O_RDWR / O_APPEND / O_CREAT / O_TRUNC) and fopen("w" / "a" / "r+") answer EROFS; reading works', () => {
    const scratch = scratchDir();
    try {
      const ro = join(scratch.path, 'ro');
      mkdirSync(join(ro, 'sub'), { recursive: true });
      writeFileSync(join(ro, 'file.txt'), 'read me');
      writeFileSync(join(ro, 'sub', 'inner.txt'), 'i');
      const before = snapshotTree(ro);
      const result = runWasi(fixture('c', 'wasi', 'readonly-libc.wasm'), {
        args: ['readonly-libc', '/package'],
        preopens: [{ guestPath: '/package', hostPath: ro, readOnly: true }],
      });
      assert.equal(result.exitCode, 0, result.stderr);
      const got = outcomes(result.stdout);
      for (const attempt of ['open O_RDONLY', 'fopen r', 'open sub', 'openat O_RDONLY in sub']) {
        assert.equal(got.get(attempt), 'OK', attempt);
      }
      for (const attempt of ['open O_WRONLY', 'open O_RDWR', 'open O_WRONLY|O_APPEND', 'open O_CREAT', 'open O_TRUNC',
        'fopen w', 'fopen a', 'fopen r+', 'fopen r+ in sub', 'openat O_WRONLY in sub']) {
        assert.equal(got.get(attempt), 'EROFS', attempt);
      }
      assert.deepEqual(snapshotTree(ro), before);
    } finally {
      scratch.remove();
    }
  });
});

describe('limits', () => {
  const scratch = scratchDir();
  // The file the guest creates is an entry, charged ENTRY_COST_BYTES first; its writes have 10,000 bytes.
  const budget = new CountingBudget(10_000 + ENTRY_COST_BYTES);
  const result = runWasi(fixture('c', 'wasi', 'limits.wasm'), {
    budget, preopens: [{ guestPath: '/scratch', hostPath: scratch.path, readOnly: false }],
  });
  const size = statSync(join(scratch.path, 'quota.bin')).size;
  scratch.remove();
  const got = outcomes(result.stdout);

  test('writes past the write budget answer EDQUOT and write nothing; bytes written and gaps count', () => {
    assert.equal(got.get('write 1'), '4096');
    assert.equal(got.get('write 2'), '4096');
    assert.equal(got.get('write 3 over budget'), '-1 EDQUOT');
    assert.equal(got.get('write small'), '1000');
    assert.equal(got.get('pwrite overwrite'), '500');
    assert.equal(got.get('pwrite far past end'), '-1 EDQUOT');
    assert.equal(got.get('ftruncate grow'), '-1 EDQUOT');
    assert.equal(got.get('ftruncate shrink'), '0');
    assert.equal(got.get('write 300'), '300');
    assert.equal(got.get('write 9 more'), '-1 EDQUOT');
    assert.equal(got.get('write 8 fits'), '8');
    assert.equal(got.get('empty write'), '0');
    assert.equal(budget.used, 10_000 + ENTRY_COST_BYTES);
    assert.equal(size, 408);
  });

  test('fd_allocate answers ENOTSUP (EBADF for a closed descriptor)', () => {
    assert.equal(got.get('posix_fallocate'), 'ENOTSUP');
    assert.equal(got.get('fd_allocate'), 'ENOTSUP');
    assert.equal(got.get('fd_allocate closed'), 'EBADF');
  });

  test('sock_* answer ENOTSOCK for every open descriptor and EBADF for a closed one', () => {
    for (const fd of [0, 1, 2, 3]) {
      assert.equal(got.get(`fd ${fd}`), 'accept ENOTSOCK recv ENOTSOCK send ENOTSOCK shutdown ENOTSOCK');
    }
    assert.equal(got.get('fd 77'), 'accept EBADF recv EBADF send EBADF shutdown EBADF');
  });

  test('proc_raise answers ENOSYS, sched_yield succeeds, proc_exit ends the run with its status', () => {
    assert.equal(got.get('proc_raise'), 'ENOSYS');
    assert.equal(got.get('sched_yield'), 'SUCCESS');
    assert.equal(result.exitCode, 7);
  });
});
