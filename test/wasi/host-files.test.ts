/**
 * host-files: the confined host operations other rooms use on guest paths. Each refusal has its reason;
 * links are followed only inside the root (or refused outright), and nothing outside is ever opened,
 * created or removed. (The races are in test/hostile/.)
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  HostPathError, MAX_HOST_PATH_BYTES, openFileForReading, openFileForWriting, readFileUnder, statFile, type HostPathProblem, type PathUnder,
} from '../../src/wasi/index.js';
import { scratchDir, snapshotTree } from './scratch.js';

let scratch: ReturnType<typeof scratchDir>;
let root: string;
let outside: string;
let outsideBefore: string[];

before(() => {
  scratch = scratchDir('subako-host-files-');
  root = join(scratch.path, 'root');
  outside = join(scratch.path, 'outside');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'host file');
  writeFileSync(join(root, 'file.txt'), 'inside');
  writeFileSync(join(root, 'sub', 'inner.txt'), 'inner');
  symlinkSync('sub', join(root, 'sub-link'));
  symlinkSync('sub/inner.txt', join(root, 'inner-link'));
  symlinkSync('../outside/secret.txt', join(root, 'up-link'));
  symlinkSync('../outside', join(root, 'up-dir'));
  symlinkSync(join(outside, 'secret.txt'), join(root, 'abs-link'));
  symlinkSync('loop', join(root, 'loop'));
  execFileSync('mkfifo', [join(root, 'fifo')]);
  outsideBefore = snapshotTree(outside);
});
after(() => {
  assert.deepEqual(snapshotTree(outside), outsideBefore, 'nothing outside the root changed');
  scratch.remove();
});

const follow = (path: string): PathUnder => ({ root, path, links: 'follow' });
const refuse = (path: string): PathUnder => ({ root, path, links: 'refuse' });

async function reason(action: () => unknown): Promise<HostPathProblem | 'none'> {
  try {
    await action();
    return 'none';
  } catch (error) {
    assert.ok(error instanceof HostPathError, String(error));
    assert.equal(error.code, 'wasi.host_path');
    return error.reason;
  }
}

describe('reading', () => {
  test('a file, and links inside the root when they are followed', async () => {
    assert.equal((await readFileUnder(follow('file.txt'), 100)).toString(), 'inside');
    assert.equal((await readFileUnder(follow('sub-link/inner.txt'), 100)).toString(), 'inner');
    assert.equal((await readFileUnder(follow('inner-link'), 100)).toString(), 'inner');
    assert.equal((await readFileUnder(follow('sub/../file.txt'), 100)).toString(), 'inside');
    assert.deepEqual(statFile(follow('inner-link')), { size: 5 });
  });

  test('each refusal names its reason', async () => {
    const cases: [PathUnder, HostPathProblem][] = [
      [follow('up-link'), 'outside'], [follow('up-dir/secret.txt'), 'outside'], [follow('abs-link'), 'outside'],
      [follow('../outside/secret.txt'), 'outside'], [follow('loop'), 'too_many_links'],
      [refuse('sub-link/inner.txt'), 'link_in_path'], [refuse('inner-link'), 'link'], [refuse('up-dir/secret.txt'), 'link_in_path'],
      [follow('missing'), 'missing'], [follow('nodir/x'), 'missing_directory'], [follow('file.txt/x'), 'not_directory'],
      [follow('sub'), 'not_file'], [follow('fifo'), 'not_file'], [follow('.'), 'bad_path'], [follow(''), 'bad_path'],
      [follow('a/'.repeat(MAX_HOST_PATH_BYTES)), 'bad_path'],
      [{ root: join(scratch.path, 'no-root'), path: 'x', links: 'follow' }, 'missing_directory'],
    ];
    for (const [target, expected] of cases) {
      assert.equal(await reason(() => openFileForReading(target)), expected, `${target.path.slice(0, 40)} (${target.links})`);
    }
    assert.equal(await reason(() => readFileUnder(follow('file.txt'), 3)), 'too_large');
    assert.equal(await reason(() => statFile(follow('up-link'))), 'outside');
  });
});

describe('writing', () => {
  test('creates missing directories inside the root, truncates, and removes only the file it wrote', async () => {
    const file = await openFileForWriting(refuse('made/deeper/out.bin'), { createDirectories: true });
    await file.handle.write(Buffer.from('x'));
    assert.equal(await file.finish(false), false);
    assert.equal(readFileSync(join(root, 'made', 'deeper', 'out.bin'), 'utf8'), 'x');
    const again = await openFileForWriting(refuse('made/deeper/out.bin'), { createDirectories: false });
    assert.equal(await again.finish(true), true);
    assert.equal(existsSync(join(root, 'made', 'deeper', 'out.bin')), false);
  });

  test('never through a link, onto one, onto something else, or without its directory when not asked', async () => {
    const cases: [PathUnder, HostPathProblem][] = [
      [refuse('up-dir/new.txt'), 'link_in_path'], [refuse('up-link'), 'link'], [refuse('abs-link'), 'link'],
      [refuse('sub'), 'not_file'], [refuse('fifo'), 'not_file'], [refuse('file.txt/x'), 'not_directory'],
    ];
    for (const [target, expected] of cases) {
      assert.equal(await reason(() => openFileForWriting(target, { createDirectories: true })), expected, target.path);
    }
    assert.equal(await reason(() => openFileForWriting(refuse('absent/x'), { createDirectories: false })), 'missing_directory');
    assert.equal(existsSync(join(outside, 'new.txt')), false);
  });
});
