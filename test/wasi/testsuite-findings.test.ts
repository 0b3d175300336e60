/**
 * What running the WebAssembly WASI test suite's prebuilt tests (branch prod/testsuite-base) with
 * `subako wasi` taught us, each as a test of its own: reopening a preopen with its own rights, the directory
 * descriptor's rights bounding path_open, fd_allocate on a directory, and no absolute symlinks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wat } from '../helpers/wat.js';
import { runWasi } from './runner.js';
import { scratchDir } from './scratch.js';

test('a preopen reopened as "." with its own reported rights is a directory', async () => {
  const module = await wat(`(module
    (import "wasi_snapshot_preview1" "fd_fdstat_get" (func $fdstat (param i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "path_open"
      (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
    (memory (export "memory") 1)
    (data (i32.const 100) ".")
    (func (export "_start")
      (if (call $fdstat (i32.const 3) (i32.const 0)) (then (call $exit (i32.const 90))))
      ;; fdstat: filetype u8, flags u16 at 2, rights_base u64 at 8, rights_inheriting u64 at 16
      (call $exit (call $open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 1)
        (i32.const 2) (i64.load (i32.const 8)) (i64.load (i32.const 16)) (i32.const 0) (i32.const 200)))))`);
  const scratch = scratchDir();
  try {
    const result = runWasi(new WebAssembly.Module(module), { preopens: [{ guestPath: '/', hostPath: scratch.path, readOnly: false }] });
    assert.equal(result.exitCode, 0, `path_open answered errno ${result.exitCode}`);
  } finally {
    scratch.remove();
  }
});

const IMPORTS = `
  (import "wasi_snapshot_preview1" "fd_fdstat_get" (func $fdstat (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_set_rights" (func $setRights (param i32 i64 i64) (result i32)))
  (import "wasi_snapshot_preview1" "fd_allocate" (func $allocate (param i32 i64 i64) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)`;

async function errnoOf(body: string, files: Record<string, string> = {}): Promise<number> {
  const module = await wat(`(module ${IMPORTS}
    (data (i32.const 100) "file")
    (data (i32.const 120) "/etc/passwd")
    (data (i32.const 140) "abs")
    (func (export "_start") ${body}))`);
  const scratch = scratchDir();
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(scratch.path, name), text);
    return runWasi(new WebAssembly.Module(module), { preopens: [{ guestPath: '/', hostPath: scratch.path, readOnly: false }] }).exitCode;
  } finally {
    scratch.remove();
  }
}

test('truncating through a directory descriptor whose PATH_FILESTAT_SET_SIZE right was dropped is refused', async () => {
  const PATH_FILESTAT_SET_SIZE = 1n << 19n;
  const errno = await errnoOf(`
    (drop (call $fdstat (i32.const 3) (i32.const 0)))
    (drop (call $setRights (i32.const 3)
      (i64.and (i64.load (i32.const 8)) (i64.const ${~PATH_FILESTAT_SET_SIZE})) (i64.load (i32.const 16))))
    (call $exit (call $open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 4)
      (i32.const 8) (i64.const 0) (i64.const 0) (i32.const 0) (i32.const 200)))`, { file: 'keep me' });
  assert.equal(errno, 76, 'ENOTCAPABLE');
});

test('fd_allocate answers ENOTSUP for a file and EISDIR for a directory', async () => {
  assert.equal(await errnoOf(`(call $exit (call $allocate (i32.const 3) (i64.const 0) (i64.const 1)))`), 31);
  const onFile = await errnoOf(`
    (drop (call $open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 4)
      (i32.const 0) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 200)))
    (call $exit (call $allocate (i32.load (i32.const 200)) (i64.const 0) (i64.const 1)))`, { file: 'x' });
  assert.equal(onFile, 58, 'ENOTSUP');
});

test('a symlink to an absolute path is not made', async () => {
  const errno = await errnoOf(`(call $exit (call $symlink (i32.const 120) (i32.const 11) (i32.const 3) (i32.const 140) (i32.const 3)))`);
  assert.equal(errno, 76, 'ENOTCAPABLE');
});
