/**
 * A reused host (what a warm worker does: one import object, reset for every run): nothing of a run
 * is reachable from the next one — not its args, env or stdin, not its descriptors, not its memory.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { wat } from '../helpers/wat.js';
import { fixture } from '../helpers/paths.js';
import { WasiHost } from '../../src/wasi/host.js';
import { PREVIEW1_SIGNATURES, WASI_MODULE } from '../../src/wasi/preview1.js';
import type { PreopenSpec, WasiOptions } from '../../src/wasi/types.js';
import { BufferStdin, CountingBudget, loadModule, sleep } from './runner.js';
import { scratchDir } from './scratch.js';

const EFAULT = 21;
const EMFILE = 33;
const hostFds = (): number => readdirSync('/proc/self/fd').length;
const imp = (name: string): string => {
  const { params, results } = PREVIEW1_SIGNATURES[name];
  return `(import "${WASI_MODULE}" "${name}" (func $${name} (param ${params.join(' ')}) (result ${results.join(' ')})))`;
};

function options(out: Uint8Array[], overrides: Partial<WasiOptions>): WasiOptions {
  return {
    args: ['guest'], env: [], preopens: [], stdin: new BufferStdin(new Uint8Array()),
    stdout: (bytes) => out.push(bytes), stderr: () => {}, writeBudget: new CountingBudget(), sleep, ...overrides,
  };
}

const text = (chunks: Uint8Array[]): string => Buffer.concat(chunks).toString('utf8');

/** Opens "." under fd 3 until the descriptor table is full, then exits with the errno (EMFILE). */
const OPEN_ALL = `(module ${imp('path_open')} ${imp('proc_exit')}
  (memory (export "memory") 1) (data (i32.const 100) ".")
  (func (export "_start") (local $e i32)
    (loop $more
      (local.set $e (call $path_open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 1) (i32.const 2)
        (i64.const 0x4000) (i64.const 0) (i32.const 0) (i32.const 8)))
      (br_if $more (i32.eqz (local.get $e))))
    (call $proc_exit (local.get $e))))`;

/** Writes the name fd 3 is preopened as to stdout. */
const PRINT_PREOPEN = `(module ${imp('fd_prestat_get')} ${imp('fd_prestat_dir_name')} ${imp('fd_write')}
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (call $fd_prestat_get (i32.const 3) (i32.const 0)))
    (drop (call $fd_prestat_dir_name (i32.const 3) (i32.const 100) (i32.load (i32.const 4))))
    (i32.store (i32.const 16) (i32.const 100))
    (i32.store (i32.const 20) (i32.load (i32.const 4)))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24)))))`;

describe('a host reset for another run', () => {
  test('runs the next guest with its own args, env and stdin, on the same import object', () => {
    const module = loadModule(fixture('c', 'wasi', 'stdio.wasm'));
    const first: Uint8Array[] = [];
    const host = new WasiHost(options(first, {
      args: ['one'], env: ['GREETING=first'], stdin: new BufferStdin(Buffer.from('a\n')),
    }));
    const imports = host.imports;
    assert.equal(host.start(new WebAssembly.Instance(module, { [WASI_MODULE]: imports })), 0);
    host.close();
    const second: Uint8Array[] = [];
    host.reset(options(second, {
      args: ['two', 'x'], env: ['GREETING=second'], stdin: new BufferStdin(Buffer.from('b\n')),
    }));
    assert.equal(host.imports, imports);
    assert.equal(host.start(new WebAssembly.Instance(module, { [WASI_MODULE]: host.imports })), 0);
    host.close();
    assert.match(text(first), /argv\[0\]=\[one\]\n.*GREETING=first\n1:A\n/s);
    const out = text(second);
    assert.match(out, /argc=2\nargv\[0\]=\[two\]\nargv\[1\]=\[x\]\n.*GREETING=second\n1:B\n/s);
    assert.doesNotMatch(out, /one|first|1:A/);
  });

  test('closes every descriptor the previous run left open, and opens only the new preopens', async () => {
    const a = scratchDir();
    const b = scratchDir();
    try {
      const before = hostFds();
      const out: Uint8Array[] = [];
      const preopen = (guestPath: string, hostPath: string): PreopenSpec[] => [{ guestPath, hostPath, readOnly: false }];
      const host = new WasiHost(options(out, { preopens: preopen('/a', a.path) }));
      const greedy = new WebAssembly.Module(await wat(OPEN_ALL));
      assert.equal(host.start(new WebAssembly.Instance(greedy, { [WASI_MODULE]: host.imports })), EMFILE);
      assert.ok(hostFds() >= before + 500);
      host.reset(options(out, { preopens: preopen('/b', b.path) })); // no close() first: reset does it
      assert.equal(hostFds(), before + 1);
      const print = new WebAssembly.Module(await wat(PRINT_PREOPEN));
      assert.equal(host.start(new WebAssembly.Instance(print, { [WASI_MODULE]: host.imports })), 0);
      assert.equal(text(out), '/b');
      host.close();
      assert.equal(hostFds(), before);
    } finally {
      a.remove();
      b.remove();
    }
  });

  test('after close the guest memory is let go: a host function called then answers EFAULT', () => {
    const module = loadModule(fixture('c', 'wasi', 'stdio.wasm'));
    const out: Uint8Array[] = [];
    const host = new WasiHost(options(out, {}));
    host.start(new WebAssembly.Instance(module, { [WASI_MODULE]: host.imports }));
    host.close();
    const fdWrite = host.imports.fd_write as unknown as (fd: number, iovs: number, len: number, nw: number) => number;
    assert.equal(fdWrite(1, 0, 1, 64), EFAULT);
  });
});
