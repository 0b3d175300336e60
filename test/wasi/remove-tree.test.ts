/**
 * removeTree: a directory tree removed without ever following a link, holding one descriptor whatever the
 * depth. (The race against a guest swapping directories for links mid-way is test/hostile/delete-during-call.)
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, readdirSync, rmdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { MAX_EXTRA_PASSES, removeTree } from '../../src/wasi/remove-tree.js';
import { scratchDir, snapshotTree } from './scratch.js';

let scratch: ReturnType<typeof scratchDir>;
let outside: string;
let outsideBefore: string[];

before(() => {
  scratch = scratchDir('subako-remove-tree-');
  outside = join(scratch.path, 'outside');
  mkdirSync(join(outside, 'dir'), { recursive: true });
  writeFileSync(join(outside, 'secret.txt'), 'host file');
  writeFileSync(join(outside, 'dir', 'inner.txt'), 'host file');
  outsideBefore = snapshotTree(outside);
});
after(() => scratch.remove());

describe('removeTree', () => {
  test('removes files, links (not their targets), hard links, empty and nested directories, and a FIFO', async () => {
    const tree = join(scratch.path, 'trash', 'tree');
    mkdirSync(join(tree, 'a', 'b', 'c'), { recursive: true });
    mkdirSync(join(tree, 'empty'));
    writeFileSync(join(tree, 'a', 'file'), 'x');
    writeFileSync(join(tree, 'a', 'b', 'c', 'deep'), 'x');
    symlinkSync(outside, join(tree, 'abs-dir-link'));
    symlinkSync('../../outside/secret.txt', join(tree, 'a', 'rel-link'));
    symlinkSync(join(outside, 'dir'), join(tree, 'a', 'b', 'dir-link'));
    linkSync(join(tree, 'a', 'file'), join(tree, 'hard'));
    execFileSync('mkfifo', [join(tree, 'fifo')]);
    const result = await removeTree(join(scratch.path, 'trash'), 'tree');
    assert.deepEqual(result, { complete: true, removed: 12 }); // 5 directories, 4 files, 3 links
    assert.deepEqual(readdirSync(join(scratch.path, 'trash')), []);
    assert.deepEqual(snapshotTree(outside), outsideBefore);
  });

  test('a tree that is itself a link: the link goes, its target stays', async () => {
    const trash = join(scratch.path, 'trash2');
    mkdirSync(trash);
    symlinkSync(outside, join(trash, 'entry'));
    assert.deepEqual(await removeTree(trash, 'entry'), { complete: true, removed: 1 });
    assert.deepEqual(snapshotTree(outside), outsideBefore);
  });

  test('nothing there is nothing to do', async () => {
    assert.deepEqual(await removeTree(scratch.path, 'missing'), { complete: true, removed: 0 });
  });

  test('a directory larger than one listing batch goes whole, its listings continued, not counted as passes', async () => {
    const trash = join(scratch.path, 'trash4');
    mkdirSync(join(trash, 'entry', 'wide'), { recursive: true });
    const listingBatch = 64;
    const files = listingBatch * (MAX_EXTRA_PASSES + 4);
    for (let i = 0; i < files; i++) writeFileSync(join(trash, 'entry', 'wide', `f${i}`), '');
    for (let i = 0; i < 50; i++) mkdirSync(join(trash, 'entry', 'wide', `d${i}`));
    assert.deepEqual(await removeTree(trash, 'entry', { listingBatch }), { complete: true, removed: files + 50 + 2 });
  });

  test('1000 levels deep under a limit of 40 descriptors: one descriptor per walk, not one per level', () => {
    const script = join(import.meta.dirname, 'helpers', 'deep-tree-process.js');
    const out = execFileSync('bash', ['-c', 'ulimit -n 40 && exec "$0" "$1" 1000 "$2"', process.execPath, script, outside], { encoding: 'utf8' });
    const result = JSON.parse(out) as { complete: boolean; removed: number; parent: string };
    assert.deepEqual([result.complete, result.removed], [true, 1000 * 3 + 1]);
    assert.deepEqual(readdirSync(result.parent), []);
    rmdirSync(result.parent);
    assert.deepEqual(snapshotTree(outside), outsideBefore);
  });

  test('a tree a guest keeps refilling: the walk ends (whole, or reported incomplete), and a sweep after finishes it', async () => {
    const trash = join(scratch.path, 'trash3');
    mkdirSync(join(trash, 'entry', 'busy'), { recursive: true });
    const flag = new Int32Array(new SharedArrayBuffer(4));
    // The guest: holds the directory by descriptor and makes entries in it without pause.
    const refiller = new Worker(`
      const { closeSync, constants, mkdirSync, openSync, writeFileSync } = require('node:fs');
      const { parentPort, workerData } = require('node:worker_threads');
      const fd = openSync(workerData.dir, constants.O_RDONLY | constants.O_DIRECTORY);
      for (let n = 0; Atomics.load(workerData.flag, 0) === 0; n++) {
        try { writeFileSync('/proc/self/fd/' + fd + '/f' + n, 'x'); } catch {}
        try { mkdirSync('/proc/self/fd/' + fd + '/d' + n); } catch {}
        if (n === 200) parentPort.postMessage('ready'); // under way before the removal starts
      }
      closeSync(fd);
      parentPort.postMessage('stopped');
    `, { eval: true, workerData: { dir: join(trash, 'entry', 'busy'), flag } });
    await new Promise((resolve) => refiller.once('message', resolve));
    let first;
    try {
      // A budget five times the 400 entries the guest made before the walk began: the walk ends by it or by its
      // passes. (The guest writes for as long as the walk lasts, and the sweep below removes all it wrote: a
      // budget of 20 000 made this one test a hundred thousand file operations, minutes on a loaded machine.)
      first = await removeTree(trash, 'entry', { maxEntries: 2_000 });
    } finally {
      Atomics.store(flag, 0, 1);
      await new Promise((resolve) => refiller.once('message', resolve));
      await refiller.terminate();
    }
    // Either the walk caught the directory empty once (a removed directory cannot be refilled), or it gave
    // up after MAX_EXTRA_PASSES re-listings or its budget of entries; it never chases the guest for ever.
    assert.ok(first.removed > 200, `${first.removed} entries removed`);
    if (first.complete) assert.deepEqual(readdirSync(trash), []);
    // Once the guest has stopped, the next sweep finishes whatever is left.
    assert.equal((await removeTree(trash, 'entry')).complete, true);
    assert.deepEqual(readdirSync(trash), []);
  });
});
