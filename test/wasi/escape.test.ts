/**
 * "No guest path can ever reach outside its preopen": `..`, absolute symlinks, relative symlinks that
 * climb out, symlink loops, rename or hard link out of the tree, creating through dangling links, a
 * link swapped between two opens, a directory descriptor whose directory moved, NUL bytes. Each attempt
 * must fail with the named errno, nothing from outside may reach the guest's output, and the tree
 * outside the preopen must be byte-for-byte, timestamp-for-timestamp unchanged.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixture } from '../helpers/paths.js';
import { runWasi, type RunResult } from './runner.js';
import { scratchDir, snapshotTree } from './scratch.js';

const SECRET = 'TOP-SECRET';

describe('no guest path reaches outside its preopen', () => {
  let scratch: ReturnType<typeof scratchDir>;
  let root: string;
  let outsideBefore: string[];
  let result: RunResult;
  let outcomes: Map<string, string>;

  before(() => {
    scratch = scratchDir('subako-escape-');
    const outside = join(scratch.path, 'outside');
    root = join(scratch.path, 'root');
    mkdirSync(join(outside, 'dir'), { recursive: true });
    writeFileSync(join(outside, 'secret.txt'), SECRET);
    mkdirSync(join(root, 'sub'), { recursive: true });
    writeFileSync(join(root, 'file.txt'), 'inside');
    writeFileSync(join(root, 'sub', 'inner.txt'), 'inner');
    const link = (target: string, name: string): void => symlinkSync(target, join(root, name));
    link(join(outside, 'secret.txt'), 'abs-link');
    link(outside, 'abs-dir');
    link('../outside/secret.txt', 'up-link');
    link('../outside', 'up-dir');
    link('sub/../../outside/secret.txt', 'deep-up');
    link('../../outside/secret.txt', 'sub/climb');
    link('../outside/new.txt', 'dangling-out');
    link(join(outside, 'new-abs.txt'), 'dangling-abs');
    link('loop2', 'loop1');
    link('loop1', 'loop2');
    link('self', 'self');
    link('sub', 'sub-link');
    link('.', 'root-link');
    outsideBefore = snapshotTree(outside);
    result = runWasi(fixture('c', 'wasi', 'escape.wasm'), {
      preopens: [{ guestPath: '/sandbox', hostPath: root, readOnly: false }],
    });
    outcomes = new Map();
    for (const line of result.stdout.split('\n')) {
      const match = /^([^ ].*): (\S+)$/.exec(line);
      if (match) outcomes.set(match[1], match[2]);
    }
  });
  after(() => scratch.remove());

  const expect = (attempts: Record<string, string>): void => {
    for (const [attempt, errno] of Object.entries(attempts)) {
      assert.equal(outcomes.get(attempt), errno, `${attempt}: expected ${errno}, got ${outcomes.get(attempt)}`);
    }
  };

  test('the guest ran to the end', () => {
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(outcomes.size >= 70, `only ${outcomes.size} attempts reported`);
  });

  test('`..` above the preopen and absolute paths are ENOTCAPABLE; `..` inside works', () => {
    expect({
      'dotdot file': 'ENOTCAPABLE', 'dotdot after descent': 'ENOTCAPABLE', 'dotdot zigzag': 'ENOTCAPABLE',
      'dotdot dir': 'ENOTCAPABLE', 'dotdot trailing slash': 'ENOTCAPABLE', 'absolute path': 'ENOTCAPABLE',
      'legit dotdot inside': 'SUCCESS',
    });
  });

  test('absolute symlinks are never followed', () => {
    expect({
      'abs link': 'ENOTCAPABLE', 'abs link nofollow': 'ELOOP', 'abs dir link': 'ENOTCAPABLE',
      'abs dir link slash': 'ENOTCAPABLE', 'stat following abs link': 'ENOTCAPABLE', 'stat abs link itself': 'SUCCESS',
    });
  });

  test('relative symlinks that climb out fail, wherever the climb happens', () => {
    expect({
      'up link': 'ENOTCAPABLE', 'up dir link': 'ENOTCAPABLE', 'up dir link slash': 'ENOTCAPABLE',
      'link climbing after descent': 'ENOTCAPABLE', 'nested link climbing': 'ENOTCAPABLE',
      'dotdot through dir link': 'ENOTCAPABLE', 'dotdot after self link': 'ENOTCAPABLE', 'legit link inside': 'SUCCESS',
    });
  });

  test('symlink loops are ELOOP', () => {
    expect({ loop: 'ELOOP', 'self loop': 'ELOOP', 'loop in the middle': 'ELOOP' });
  });

  test('nothing is created, truncated or made outside, through `..` or dangling links', () => {
    expect({
      'create dotdot': 'ENOTCAPABLE', 'create through dangling link out': 'ENOTCAPABLE',
      'create through dangling abs link': 'ENOTCAPABLE', 'create excl on dangling link': 'EEXIST',
      'truncate through abs link': 'ENOTCAPABLE', 'create in abs dir link': 'ENOTCAPABLE',
      'mkdir dotdot': 'ENOTCAPABLE', 'mkdir through up dir link': 'ENOTCAPABLE',
      'mkdir through abs dir link': 'ENOTCAPABLE', 'symlink placed outside': 'ENOTCAPABLE',
    });
    assert.equal(existsSync(join(scratch.path, 'outside', 'new.txt')), false);
    assert.equal(existsSync(join(scratch.path, 'outside', 'new-abs.txt')), false);
    assert.equal(existsSync(join(scratch.path, 'outside', 'created.txt')), false);
  });

  test('rename and hard link cannot move anything out of (or into) the tree', () => {
    expect({
      'rename out': 'ENOTCAPABLE', 'rename into up dir link': 'ENOTCAPABLE', 'rename into abs dir link': 'ENOTCAPABLE',
      'rename from outside': 'ENOTCAPABLE', 'rename from up dir link': 'ENOTCAPABLE', 'link out': 'ENOTCAPABLE',
      'link into up dir link': 'ENOTCAPABLE', 'link from outside': 'ENOTCAPABLE',
      'link following abs link': 'ENOTCAPABLE', 'link following up link': 'ENOTCAPABLE',
    });
    assert.equal(readFileSync(join(root, 'file.txt'), 'utf8'), 'inside');
    for (const name of ['taken.txt', 'hard.txt', 'hard2.txt', 'hard3.txt']) assert.equal(existsSync(join(root, name)), false);
  });

  test('nothing outside is removed, stamped or read through a link', () => {
    expect({
      'unlink outside': 'ENOTCAPABLE', 'unlink through up dir link': 'ENOTCAPABLE', 'rmdir outside': 'ENOTCAPABLE',
      'rmdir through abs dir link': 'ENOTCAPABLE', 'stat outside': 'ENOTCAPABLE',
      'set times following up link': 'ENOTCAPABLE', 'set times outside': 'ENOTCAPABLE', 'readlink outside': 'ENOTCAPABLE',
    });
  });

  test('a link whose text points out, counted from its own directory, is not made, nor an absolute one', () => {
    expect({
      'make link pointing out': 'ENOTCAPABLE', 'follow own link': 'ENOENT',
      'make link pointing out from below': 'ENOTCAPABLE', 'make link climbing mid-way': 'ENOTCAPABLE',
      'make link climbing back in': 'SUCCESS', 'make abs link': 'ENOTCAPABLE', 'follow own abs link': 'ENOENT',
    });
    for (const name of ['mine', 'sub/mine', 'sub/mine2', 'mine-abs']) assert.equal(existsSync(join(root, name)), false, name);
    assert.equal(readlinkSync(join(root, 'sub', 'mine3')), '../sub/inner.txt');
  });

  test('a link made deeper and renamed up points out all the same, and following it fails', () => {
    expect({ 'make link inside lift': 'SUCCESS', 'make climbing link': 'SUCCESS', 'follow own link': 'ENOENT' });
    assert.equal(readlinkSync(join(root, 'swap')), '../outside/secret.txt');
  });

  test('a link swapped between two opens is checked again', () => {
    expect({ 'open harmless link': 'SUCCESS', 'make climbing link': 'SUCCESS', 'open swapped link': 'ENOTCAPABLE' });
  });

  test('a directory descriptor is its own root, even after its directory is moved and replaced by a link', () => {
    expect({
      'open d': 'SUCCESS', 'dirfd dotdot': 'ENOTCAPABLE', 'dirfd dotdot out': 'ENOTCAPABLE',
      'move d away': 'SUCCESS', 'make link to put there': 'SUCCESS', 'put link where d was': 'SUCCESS',
      'open via replaced d': 'ENOTCAPABLE',
      'create via moved dirfd': 'SUCCESS', 'dirfd dotdot after move': 'ENOTCAPABLE', 'moved dir keeps file': 'SUCCESS',
    });
    assert.equal(existsSync(join(root, 'e', 'made.txt')), true);
  });

  test('NUL bytes, pointers past memory and non-directory descriptors are refused', () => {
    expect({
      'nul in path': 'EINVAL', 'nul in mkdir': 'EINVAL', 'path past memory': 'EFAULT',
      'stat on a file descriptor': 'ENOTDIR', 'open on a closed descriptor': 'EBADF',
    });
  });

  test('nothing outside the preopen was read, created or changed', () => {
    assert.ok(!result.stdout.includes(SECRET), 'the secret reached the guest');
    assert.deepEqual(snapshotTree(join(scratch.path, 'outside')), outsideBefore);
  });
});
