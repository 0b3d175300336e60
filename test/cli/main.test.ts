/**
 * The `subako` command line as a whole: an unknown command is a usage error (exit 2) that names it, with or
 * without --help; the main help and a known command's help still exit 0.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import { unknownCommandIn } from '../../src/cli/main.js';

function subako(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const ran = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
  return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

describe('an unknown command is a usage error that names it', () => {
  for (const line of [['bogus'], ['bogus', '--help'], ['--help', 'bogus'], ['help', 'bogus'], ['constructor']]) {
    test(`subako ${line.join(' ')} exits 2 naming the command, and prints no help on stdout`, () => {
      const ran = subako(...line);
      const name = line.find((word) => !word.startsWith('-') && word !== 'help')!;
      assert.equal(ran.status, 2, ran.stderr);
      assert.match(ran.stderr, new RegExp(`unknown command "${name}"; the commands are check, wasi, `));
      assert.equal(ran.stdout, '');
    });
  }

  test('subako --help, subako help and subako wasi --help still print their help and exit 0', () => {
    for (const line of [['--help'], ['help'], ['wasi', '--help']]) {
      const ran = subako(...line);
      assert.equal(ran.status, 0, `${line.join(' ')}: ${ran.stderr}`);
      assert.match(ran.stdout, /^Usage: subako/);
    }
  });

  test('only the first word that is not an option is read as the command', () => {
    assert.equal(unknownCommandIn(['wasi', 'bogus.wasm', '--help']), undefined);
    assert.equal(unknownCommandIn(['-V']), undefined);
    assert.equal(unknownCommandIn(['help']), undefined);
    assert.equal(unknownCommandIn(['help', 'call']), undefined);
    assert.equal(unknownCommandIn(['toString']), 'toString');
  });
});

describe('an error no command explains is one line, its stack only when asked', () => {
  test('subako mcp call --url "" exits 1 with one line naming what is wrong and how to see more', () => {
    const ran = subako('mcp', 'call', '--url', '', 'echo');
    assert.equal(ran.status, 1, ran.stderr);
    assert.equal(ran.stderr, 'subako: "" is not a URL (run it again with SUBAKO_DEBUG=1 to see where it failed)\n');
  });

  test('with SUBAKO_DEBUG=1 the stack follows the line', () => {
    const ran = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'mcp', 'call', '--url', '', 'echo'], {
      cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, SUBAKO_DEBUG: '1' },
    });
    assert.equal(ran.status, 1);
    const [line, ...stack] = ran.stderr.split('\n');
    assert.equal(line, 'subako: "" is not a URL');
    assert.match(stack.join('\n'), /\n {4}at /);
  });
});
