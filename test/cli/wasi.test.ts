/**
 * `subako wasi` end to end, as a person or the WASI test suite's runner would use it: a real
 * `node bin/subako.js wasi …` process with stdin, stdout, stderr and the exit status passing through.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, fixture } from '../helpers/paths.js';
import { wat } from '../helpers/wat.js';
import { WASI_EXIT, parseWasiCommandLine } from '../../src/cli/wasi.js';

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

function subako(args: string[], stdin?: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), ...args], { cwd: REPO_ROOT });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (status) =>
      resolve({ status, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
    );
    if (stdin !== undefined) child.stdin.end(stdin);
    else child.stdin.end();
  });
}

const command = fixture('c', 'sandbox', 'command.wasm');

describe('subako wasi', () => {
  let dir: string;
  let trap: string;
  let threads: string;
  let growUntilRefused: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'subako-cli-wasi-'));
    writeFileSync(join(dir, 'data.txt'), 'from the host\n');
    trap = join(dir, 'trap.wasm');
    writeFileSync(trap, await wat('(module (memory (export "memory") 1) (func (export "_start") unreachable))'));
    // Grows one page at a time until memory.grow answers -1, then exits with its size in pages: a guest that
    // meets the cap, handles it, and ends by itself.
    growUntilRefused = join(dir, 'grow-until-refused.wasm');
    writeFileSync(growUntilRefused, await wat(`(module
      (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 1)
      (func (export "_start")
        (block $refused (loop $grow
          (br_if $refused (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
          (br $grow)))
        (call $exit (memory.size))))`));
    threads = join(dir, 'threads.wasm');
    writeFileSync(threads, await wat('(module (memory (export "memory") 1 1 shared) (func (export "_start")))'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('args, environment, --dir and stdin reach the module; its stdout, stderr and exit status come back', async () => {
    const ran = await subako(
      ['wasi', command, '5', '-n', 'two words', '--dir', `${dir}::/data`, '--env', 'GREETING=hello'],
      'piped through\n',
    );
    assert.equal(ran.status, 5);
    assert.equal(
      ran.stdout,
      'arg[0]=command.wasm\narg[1]=5\narg[2]=-n\narg[3]=two words\nGREETING=hello\n' +
        'data.txt=from the host\npiped through\n',
    );
    assert.equal(ran.stderr, 'stdin had 14 bytes\n');
    assert.equal(readFileSync(join(dir, 'out.txt'), 'utf8'), 'written by the guest\n');
  });

  test('words after -- all go to the module, options before it are subako\'s', async () => {
    const ran = await subako(['wasi', '--env=GREETING=early', command, '0', '--', '--dir', 'x']);
    assert.equal(ran.status, 0);
    assert.match(ran.stdout, /^arg\[0\]=command\.wasm\narg\[1\]=0\narg\[2\]=--dir\narg\[3\]=x\nGREETING=early\ndata\.txt=\(missing\)\n$/);
  });

  test('a trap exits 134 with the reason on stderr', async () => {
    const ran = await subako(['wasi', trap]);
    assert.equal(ran.status, WASI_EXIT.trap);
    assert.match(ran.stderr, /^subako: the module trapped: .*unreachable/m);
  });

  test('--timeout stops a module sleeping for ever: exit 124', async () => {
    const ran = await subako(['wasi', '--timeout', '300', fixture('c', 'sandbox', 'sleep-forever.wasm')]);
    assert.equal(ran.status, WASI_EXIT.timeout);
    assert.match(ran.stderr, /subako: the module ran past its deadline of 300 ms/);
  });

  test('--memory caps the module: a memory hog exits 137', async () => {
    const ran = await subako(['wasi', '--memory', '32', fixture('c', 'sandbox', 'memory-hog.wasm')]);
    assert.equal(ran.status, WASI_EXIT.outOfMemory);
    assert.match(ran.stderr, /memory refused after \d+ MiB\nsubako: the module ran out of memory/);
  });

  test('a module that handles a refused memory.grow and exits is not out of memory: its own status comes back', async () => {
    const ran = await subako(['wasi', '--memory', '8', growUntilRefused]);
    assert.equal(ran.stderr, '');
    assert.equal(ran.status, 8 * 16, 'the module exits with its size in 64 KiB pages: 8 MiB');
  });

  test('a module the checks refuse is not run: exit 1 with the problems', async () => {
    const ran = await subako(['wasi', threads]);
    assert.equal(ran.status, 1);
    assert.match(ran.stderr, /was refused:\n  feature\.threads: /);
  });

  test('a reader that closes stdout early (| head) stops the module: exit 141, no error from the host', async () => {
    const flood = join(dir, 'flood.wasm');
    writeFileSync(flood, await wat(`(module
      (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (data (i32.const 16) "a line of output\\n")
      (func (export "_start")
        (i32.store (i32.const 0) (i32.const 16))
        (i32.store (i32.const 4) (i32.const 17))
        (loop (drop (call $write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))) (br 0))))`));
    const ran = await new Promise<{ status: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'wasi', flood, '--timeout', '20000'], { cwd: REPO_ROOT });
      const err: Buffer[] = [];
      child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
      child.stdout.once('data', () => child.stdout.destroy());
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, stderr: Buffer.concat(err).toString() }));
      child.stdin.end();
    });
    assert.equal(ran.stderr, '');
    assert.equal(ran.status, WASI_EXIT.stdoutClosed);
  });

  test('no module is a usage error (exit 2); --help prints the usage', async () => {
    assert.equal((await subako(['wasi'])).status, 2);
    const help = await subako(['wasi', '--help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Usage: subako wasi <module\.wasm> \[args\.\.\.\] \[--dir HOST::GUEST\]/);
  });
});

describe('the words of subako wasi', () => {
  test('options anywhere until --, everything else in order for the module', () => {
    const line = parseWasiCommandLine(['--dir', 'a::/x', 'm.wasm', '-v', '--env', 'K=V', 'b', '--dir=c', '--', '--env', 'Z']);
    assert.equal(line.modulePath, 'm.wasm');
    assert.deepEqual(line.args, ['-v', 'b', '--env', 'Z']);
    assert.deepEqual(line.dirs, [
      { hostPath: 'a', guestPath: '/x' },
      { hostPath: 'c', guestPath: 'c' },
    ]);
    assert.deepEqual(line.env, ['K=V']);
  });

  test('--timeout and --memory take positive numbers; --env takes K=V; a flag needs its value', () => {
    assert.equal(parseWasiCommandLine(['m', '--timeout=250', '--memory', '1.5']).timeoutMs, 250);
    for (const words of [['m', '--timeout', '0'], ['m', '--memory', 'x'], ['m', '--env', 'NOEQUALS'], ['m', '--dir'], ['m', '--dir', '::/g'], []]) {
      assert.throws(() => parseWasiCommandLine(words), { code: 'usage' }, words.join(' '));
    }
  });
});
