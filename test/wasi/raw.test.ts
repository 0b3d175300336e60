/**
 * Preview 1 details a libc hides, through raw calls: struct layouts (fdstat, filestat, prestat,
 * dirent, event), readdir paging with cookies and a cut last entry, fd_renumber, rights, MTIM_NOW,
 * poll_oneoff with clock and fd subscriptions, and the errno for bad descriptors and pointers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixture } from '../helpers/paths.js';
import { runWasi } from './runner.js';
import { scratchDir } from './scratch.js';

describe('raw preview 1 calls', () => {
  const scratch = scratchDir();
  mkdirSync(join(scratch.path, 'one'));
  mkdirSync(join(scratch.path, 'two'));
  writeFileSync(join(scratch.path, 'one', 'a.txt'), 'hello');
  const result = runWasi(fixture('c', 'wasi', 'rawcalls.wasm'), {
    stdin: 'data\n',
    preopens: [
      { guestPath: '/scratch', hostPath: join(scratch.path, 'one'), readOnly: false },
      { guestPath: '/second', hostPath: join(scratch.path, 'two'), readOnly: false },
    ],
  });
  scratch.remove();
  const lines = result.stdout.split('\n');
  const has = (line: string): void => assert.ok(lines.includes(line), `missing line: ${line}\n${result.stdout}`);

  test('the guest ran to the end', () => {
    assert.equal(result.exitCode, 0, result.stderr);
  });

  test('preopens are fds 3, 4, … in the order given, with their guest paths; then EBADF', () => {
    has('prestat 3: SUCCESS tag=0 [/scratch]');
    has('prestat 4: SUCCESS tag=0 [/second]');
    has('prestat 5: EBADF tag=-1 []');
    has('dir name too short: ENAMETOOLONG');
  });

  test('fdstat reports filetypes, flags and rights; set_flags sets APPEND', () => {
    has('stdin filetype=2');
    has('preopen filetype=3 readdir=1');
    has('file filetype=4 flags=0 read=1 write=1');
    has('flags now=1');
    has('filetype=4 size=11 nlink=1');
    has('position=11');
  });

  test('seek and advise errors, sync', () => {
    has('seek stdout: ESPIPE');
    has('bad whence: EINVAL');
    has('advise: SUCCESS');
    has('bad advice: EINVAL');
    has('sync: SUCCESS');
    has('datasync: SUCCESS');
  });

  test('set_times with MTIM_NOW stamps the current time; ATIM with ATIM_NOW is EINVAL', () => {
    has('set mtime now: SUCCESS');
    has('mtime near now=1');
    has('both atim flags: EINVAL');
  });

  test('rights can be dropped, not taken back, and a dropped FD_WRITE refuses writes', () => {
    has('drop write right: SUCCESS');
    has('write without the right: EBADF');
    has('take it back: ENOTCAPABLE');
  });

  test('fd_renumber moves a descriptor onto an open number and closes the old one', () => {
    has('renumber: SUCCESS');
    has('old number closed: EBADF');
    has('renumber onto closed: EBADF');
    has('  [hello world]');
    has('close again: EBADF');
  });

  test('readdir cuts the last entry at the buffer end and pages by d_next cookies', () => {
    has('used=30 (header 24 + 6 of the name)');
    has('entries=8 dirs=7');
    assert.ok(!result.stdout.includes('unexpected cookie') && !result.stdout.includes('no progress'));
    has('readdir on a file: ENOTDIR');
  });

  test('poll_oneoff: the earliest clock fires, absolute deadlines are kept, files are ready, closed fds are EBADF', () => {
    has('events=1 userdata=11 type=0 error=0');
    has('absolute deadline reached=1');
    has('events=2 [11 type=1 error=SUCCESS nbytes=11] [33 type=2 error=EBADF nbytes=0]');
    has('events=1 userdata=11 type=1');
    has('poll nothing: EINVAL');
    has('poll bad tag: EINVAL');
  });

  test('bad clock ids are EINVAL, bad pointers EFAULT, wrong-direction stdio EBADF', () => {
    has('clock_res_get monotonic: SUCCESS');
    has('clock_time_get bad id: EINVAL');
    has('random_get zero bytes: SUCCESS');
    has('random_get past memory: EFAULT');
    has('fd_write bad iovec: EFAULT');
    has('fd_write to stdin: EBADF');
    has('fd_read from stdout: EBADF');
    has('fd_read bad fd: EBADF');
  });
});
