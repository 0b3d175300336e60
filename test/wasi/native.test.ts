/**
 * "C programs using the standard library's file, directory, time and random functions produce the same
 * output here as the same source compiled natively": each program is built with the system `cc` at test
 * time, run natively on one scratch directory and under WasiHost on another, and the outputs compared.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fixture } from '../helpers/paths.js';
import { runWasi } from './runner.js';
import { scratchDir } from './scratch.js';

const hasCc = spawnSync('cc', ['--version']).status === 0;
const skip = hasCc ? false : 'the system C compiler `cc` is not installed: the native comparison needs it';

describe('C programs behave as they do natively', { skip }, () => {
  let build: ReturnType<typeof scratchDir>;
  const binaries = new Map<string, string>();

  before(() => {
    build = scratchDir('subako-native-');
  });
  after(() => build.remove());

  function native(name: string): string {
    let binary = binaries.get(name);
    if (binary === undefined) {
      binary = join(build.path, name);
      const result = spawnSync('cc', ['-O2', '-o', binary, fixture('c', 'wasi', `${name}.c`)], { encoding: 'utf8' });
      assert.equal(result.status, 0, `cc failed for ${name}.c: ${result.stderr}`);
      binaries.set(name, binary);
    }
    return binary;
  }

  /** Runs `name` natively and as WASI on fresh scratch directories with the same arguments. */
  function compare(name: string, extraArgs: string[]): void {
    const nativeDir = scratchDir();
    const guestDir = scratchDir();
    try {
      const expected = spawnSync(native(name), [nativeDir.path, ...extraArgs], { encoding: 'utf8', env: {} });
      const actual = runWasi(fixture('c', 'wasi', `${name}.wasm`), {
        args: [name, '/scratch', ...extraArgs],
        preopens: [{ guestPath: '/scratch', hostPath: guestDir.path, readOnly: false }],
      });
      assert.equal(expected.status, 0, `native ${name} failed: ${expected.stderr}`);
      assert.equal(actual.stdout, expected.stdout);
      assert.equal(actual.exitCode, expected.status);
    } finally {
      nativeDir.remove();
      guestDir.remove();
    }
  }

  test('files: stdio and POSIX I/O, append, seek, pread/pwrite, truncate, rename, links, symlinks', () => {
    compare('files', []);
  });

  test('directories: a 2,000-entry readdir, rewinddir, telldir/seekdir, chdir, rmdir', () => {
    compare('dirs', ['2000']);
  });

  test('time and randomness: utimensat/futimens, clocks, nanosleep, getentropy', () => {
    compare('times', []);
  });

  test('stdio: argv, environ, getline, stderr and the exit status', () => {
    const args = ['stdio', 'two words', '', 'ünïcode ✓', 'exit=3'];
    const input = 'first line\nsecond\n\nno newline at end';
    const expected = spawnSync(native('stdio'), args.slice(1), {
      argv0: 'stdio', encoding: 'utf8', input, env: { GREETING: 'hi=there', EMPTY: '' },
    });
    const actual = runWasi(fixture('c', 'wasi', 'stdio.wasm'), { args, env: ['GREETING=hi=there', 'EMPTY='], stdin: input });
    assert.equal(actual.stdout, expected.stdout);
    assert.equal(actual.stderr, expected.stderr);
    assert.equal(actual.exitCode, 3);
    assert.equal(expected.status, 3);
  });
});
