/**
 * The host itself: its import table is exactly PREVIEW1_SIGNATURES; stdin reads fill across iovecs and
 * block only while nothing is buffered; poll_oneoff sleeps instead of spinning; stdout bytes are copies;
 * args and env are exactly the caller's; garbage input never throws; descriptors are capped and closed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wat } from '../helpers/wat.js';
import { fixture } from '../helpers/paths.js';
import { WasiHost } from '../../src/wasi/host.js';
import { PREVIEW1_SIGNATURES, WASI_MODULE } from '../../src/wasi/preview1.js';
import { ProcExit, type StdinSource } from '../../src/wasi/types.js';
import { WasiSetupError } from '../../src/wasi/errors.js';
import { BufferStdin, ChunkedStdin, CountingBudget, runWasi, sleep } from './runner.js';
import { scratchDir, snapshotTree } from './scratch.js';

const enc = new TextEncoder();
const imp = (name: string): string => {
  const { params, results } = PREVIEW1_SIGNATURES[name];
  return `(import "${WASI_MODULE}" "${name}" (func $${name} (param ${params.join(' ')}) (result ${results.join(' ')})))`;
};
const hostFds = (): number => readdirSync('/proc/self/fd').length;

/** Reads stdin with the iovec list wasi-libc's getline uses ({len 0}, {len 64}) and echoes "[bytes]". */
const ECHO_READS = `(module
  ${imp('fd_read')} ${imp('fd_write')}
  (memory (export "memory") 1)
  (data (i32.const 300) "[]")
  (func (export "_start") (local $n i32)
    (i32.store (i32.const 16) (i32.const 100)) (i32.store (i32.const 20) (i32.const 0))
    (i32.store (i32.const 24) (i32.const 200)) (i32.store (i32.const 28) (i32.const 64))
    (loop $again
      (drop (call $fd_read (i32.const 0) (i32.const 16) (i32.const 2) (i32.const 8)))
      (local.set $n (i32.load (i32.const 8)))
      (i32.store (i32.const 40) (i32.const 300)) (i32.store (i32.const 44) (i32.const 1))
      (i32.store (i32.const 48) (i32.const 200)) (i32.store (i32.const 52) (local.get $n))
      (i32.store (i32.const 56) (i32.const 301)) (i32.store (i32.const 60) (i32.const 1))
      (drop (call $fd_write (i32.const 1) (i32.const 40) (i32.const 3) (i32.const 12)))
      (br_if $again (local.get $n)))))`;

/** poll_oneoff on a 40 ms monotonic clock, plus stdin when $stdin; exits with nevents*1000 + type*100 + userdata. */
const pollModule = (withStdin: boolean): string => `(module
  ${imp('poll_oneoff')} ${imp('proc_exit')}
  (memory (export "memory") 1)
  (func (export "_start")
    (i64.store (i32.const 0) (i64.const 7)) (i32.store8 (i32.const 8) (i32.const 0))
    (i32.store (i32.const 16) (i32.const 1)) (i64.store (i32.const 24) (i64.const 40000000))
    (i64.store (i32.const 48) (i64.const 9)) (i32.store8 (i32.const 56) (i32.const 1))
    (i32.store (i32.const 64) (i32.const 0))
    (drop (call $poll_oneoff (i32.const 0) (i32.const 200) (i32.const ${withStdin ? 2 : 1}) (i32.const 400)))
    (call $proc_exit (i32.add (i32.mul (i32.load (i32.const 400)) (i32.const 1000))
      (i32.add (i32.mul (i32.load8_u (i32.const 210)) (i32.const 100)) (i32.load (i32.const 200)))))))`;

describe('the import object', () => {
  test('holds exactly the functions of PREVIEW1_SIGNATURES, and a module importing all of them links', async () => {
    const host = new WasiHost({ args: [], env: [], preopens: [], stdin: new BufferStdin(new Uint8Array()),
      stdout: () => {}, stderr: () => {}, writeBudget: new CountingBudget(), sleep });
    try {
      assert.deepEqual(Object.keys(host.imports).sort(), Object.keys(PREVIEW1_SIGNATURES).sort());
      const all = Object.keys(PREVIEW1_SIGNATURES).map((name) => {
        const { params, results } = PREVIEW1_SIGNATURES[name];
        return `(import "${WASI_MODULE}" "${name}" (func (param ${params.join(' ')}) (result ${results.join(' ')})))`;
      }).join('\n');
      const module = new WebAssembly.Module(await wat(`(module ${all} (memory (export "memory") 1) (func (export "_start")))`));
      const instance = new WebAssembly.Instance(module, { [WASI_MODULE]: host.imports });
      assert.equal(host.start(instance), 0);
    } finally {
      host.close();
    }
  });
});

describe('stdin', () => {
  test('fd_read fills across iovecs (the first empty), blocks only while nothing is buffered, 0 only at EOF', async () => {
    const stdin = new ChunkedStdin([enc.encode('hello\n'), enc.encode('wor'), enc.encode('ld\n')]);
    const result = runWasi(new WebAssembly.Module(await wat(ECHO_READS)), { stdin });
    assert.equal(result.stdout, '[hello\n][wor][ld\n][]');
    assert.equal(stdin.blockingReads, 3, 'one blocking read per chunk, never one while data was in hand');
  });

  test('getline in C reads lines that arrive in pieces', () => {
    const stdin = new ChunkedStdin(['ab', 'c\nde', 'f\n', 'tail'].map((s) => enc.encode(s)));
    const result = runWasi(fixture('c', 'wasi', 'stdio.wasm'), { stdin });
    assert.match(result.stdout, /1:ABC\n2:DEF\n3:TAIL\nlines=3 bytes=12 eof=1\n/);
  });

  test('stdout and stderr receive copies the guest cannot change afterwards', async () => {
    const module = new WebAssembly.Module(await wat(`(module ${imp('fd_write')}
      (memory (export "memory") 1) (data (i32.const 100) "abc")
      (func (export "_start")
        (i32.store (i32.const 0) (i32.const 100)) (i32.store (i32.const 4) (i32.const 3))
        (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
        (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
        (i32.store8 (i32.const 100) (i32.const 120))
        (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))`));
    const result = runWasi(module);
    assert.equal(result.stdout, 'abcxbc');
    assert.equal(result.stderr, 'abc');
  });

  test('an error thrown by the stdout callback (a stdout limit) ends the run as thrown', async () => {
    const module = new WebAssembly.Module(await wat(`(module ${imp('fd_write')}
      (memory (export "memory") 1)
      (func (export "_start") (i32.store (i32.const 4) (i32.const 1))
        (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))`));
    const limit = new Error('stdout limit');
    const host = new WasiHost({ args: [], env: [], preopens: [], stdin: new BufferStdin(new Uint8Array()),
      stdout: () => { throw limit; }, stderr: () => {}, writeBudget: new CountingBudget(), sleep });
    try {
      assert.throws(() => host.start(new WebAssembly.Instance(module, { [WASI_MODULE]: host.imports })), (e) => e === limit);
    } finally {
      host.close();
    }
  });
});

describe('poll_oneoff sleeps, never spins', () => {
  test('a clock subscription sleeps through the caller\'s sleep in one or two calls', async () => {
    const calls: number[] = [];
    const module = new WebAssembly.Module(await wat(pollModule(false)));
    const host = new WasiHost({ args: [], env: [], preopens: [], stdin: new BufferStdin(new Uint8Array()),
      stdout: () => {}, stderr: () => {}, writeBudget: new CountingBudget(),
      sleep: (ms) => { calls.push(ms); sleep(ms); } });
    try {
      assert.equal(host.start(new WebAssembly.Instance(module, { [WASI_MODULE]: host.imports })), 1007);
    } finally {
      host.close();
    }
    assert.ok(calls.length >= 1 && calls.length <= 3, `sleep called ${calls.length} times: ${calls}`);
    assert.ok(calls.every((ms) => ms > 0 && ms <= 40), `sleeps: ${calls}`);
  });

  test('with stdin watched and silent, it waits in the stdin source with the clock as timeout', async () => {
    const waits: number[] = [];
    const silent: StdinSource = {
      read: () => { throw new Error('nothing to read'); },
      waitReadable: (ms) => { waits.push(ms); if (ms > 0) sleep(ms); return false; },
    };
    const result = runWasi(new WebAssembly.Module(await wat(pollModule(true))), { stdin: silent });
    assert.equal(result.exitCode, 1007); // one event, the clock
    const blocking = waits.filter((ms) => ms > 0);
    assert.ok(blocking.length >= 1 && blocking.length <= 3, `waits: ${waits}`);
    assert.ok(blocking.every((ms) => Number.isFinite(ms) && ms <= 40));
  });

  test('with stdin readable, the fd_read event comes at once', async () => {
    const result = runWasi(new WebAssembly.Module(await wat(pollModule(true))), { stdin: 'x' });
    assert.equal(result.exitCode, 1109); // one event, type fd_read, userdata 9
  });
});

describe('args and environment are exactly the caller\'s', () => {
  test('argv and environ, with spaces, empty strings, "=", and non-ASCII; nothing added', () => {
    const args = ['prog', 'a b', '', '=x=', 'ünï ✓'];
    const env = ['A=1', 'EMPTY=', 'WEIRD=a=b=c', 'NOVALUE', 'Ü=ß'];
    const result = runWasi(fixture('c', 'wasi', 'stdio.wasm'), { args, env });
    const expected = [`argc=${args.length}`, ...args.map((a, i) => `argv[${i}]=[${a}]`),
      ...env.map((e, i) => `env[${i}]=[${e}]`), `envc=${env.length}`, 'GREETING=(unset)'].join('\n');
    assert.ok(result.stdout.startsWith(`${expected}\n`), result.stdout);
  });
});

describe('robustness', () => {
  test('garbage arguments to every import answer an errno and never throw (proc_exit aside)', async () => {
    const scratch = scratchDir('subako-fuzz-');
    mkdirSync(join(scratch.path, 'root'));
    mkdirSync(join(scratch.path, 'outside'));
    writeFileSync(join(scratch.path, 'outside', 'keep.txt'), 'keep');
    const outsideBefore = snapshotTree(join(scratch.path, 'outside'));
    const host = new WasiHost({ args: ['x'], env: ['Y=1'], stdin: new BufferStdin(enc.encode('input')),
      preopens: [{ guestPath: '/s', hostPath: join(scratch.path, 'root'), readOnly: false }],
      stdout: () => {}, stderr: () => {}, writeBudget: new CountingBudget(1 << 20), sleep });
    const module = new WebAssembly.Module(await wat('(module (memory (export "memory") 1) (func (export "_start")))'));
    host.start(new WebAssembly.Instance(module, {}));
    let seed = 12345;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) >>> 0);
    const i32 = (): number => [0, 1, 3, 4, -1, 65530, 65536, 0x7fffffff, -0x80000000, rand() % 70000, rand() | 0][rand() % 11];
    const i64 = (): bigint => [0n, 1n, -1n, 1n << 62n, BigInt(rand())][rand() % 5];
    try {
      for (const [name, { params }] of Object.entries(PREVIEW1_SIGNATURES)) {
        if (name === 'poll_oneoff' || name === 'proc_exit') continue; // a random clock may sleep for years
        const fn = host.imports[name] as unknown as (...args: unknown[]) => unknown;
        for (let round = 0; round < 300; round++) {
          const result = fn(...params.map((p) => (p === 'i32' ? i32() : i64())));
          assert.ok(typeof result === 'number' && result >= 0 && result <= 76, `${name} answered ${String(result)}`);
        }
      }
      assert.throws(() => (host.imports.proc_exit as unknown as (c: number) => void)(3), (e) => e instanceof ProcExit && e.code === 3);
      assert.deepEqual(snapshotTree(join(scratch.path, 'outside')), outsideBefore);
    } finally {
      host.close();
      scratch.remove();
    }
  });

  test('a guest holds at most 512 descriptors (EMFILE), and close() returns every host fd', async () => {
    const scratch = scratchDir();
    const before = hostFds();
    const module = new WebAssembly.Module(await wat(`(module ${imp('path_open')} ${imp('proc_exit')}
      (memory (export "memory") 1) (data (i32.const 100) ".")
      (func (export "_start") (local $e i32)
        (loop $more
          (local.set $e (call $path_open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 1) (i32.const 2)
            (i64.const 0x4000) (i64.const 0) (i32.const 0) (i32.const 8)))
          (br_if $more (i32.eqz (local.get $e))))
        (call $proc_exit (local.get $e))))`));
    const host = new WasiHost({ args: [], env: [], preopens: [{ guestPath: '/s', hostPath: scratch.path, readOnly: false }],
      stdin: new BufferStdin(new Uint8Array()), stdout: () => {}, stderr: () => {}, writeBudget: new CountingBudget(), sleep });
    const code = host.start(new WebAssembly.Instance(module, { [WASI_MODULE]: host.imports }));
    assert.equal(code, 33); // EMFILE
    assert.ok(hostFds() >= before + 500);
    host.close();
    assert.equal(hostFds(), before);
    scratch.remove();
  });

  test('a preopen that cannot be opened is a WasiSetupError naming it', () => {
    const make = (hostPath: string) => () => new WasiHost({ args: [], env: [], stdin: new BufferStdin(new Uint8Array()),
      preopens: [{ guestPath: '/data', hostPath, readOnly: false }], stdout: () => {}, stderr: () => {},
      writeBudget: new CountingBudget(), sleep });
    assert.throws(make('/nonexistent/subako/dir'), (e) => e instanceof WasiSetupError && e.code === 'wasi.preopen');
    assert.throws(make('relative/dir'), (e) => e instanceof WasiSetupError && e.code === 'wasi.preopen');
  });
});
