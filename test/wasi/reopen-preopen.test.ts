/**
 * Found by running the WASI test suite's prebuilt tests: a guest that reopens its preopen as "." with the
 * rights fd_fdstat_get reports for it (FD_DATASYNC among them) must get a directory descriptor, not EISDIR.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
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
