/**
 * Finding 9, the vanished linked file: a `volume:///` link whose file is there when the result is checked
 * but gone when it is read made the whole call fail with an ENOENT stack trace. A racer thread creates and
 * removes the linked file as fast as it can while results linking it are rendered, directly and through
 * real calls of a guest: before the fix rendering threw; now every link is the image or a note, and the
 * call is ok.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { FunctionHost } from '../../src/function/host.js';
import { renderForModel } from '../../src/function/render.js';
import { probe } from '../function/guests.js';

const RENDERS = 300;
const LINKS = 16;
const CALLS = 40;

let tmp: string;
let image: Buffer;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'subako-hostile-vanish-'));
  image = await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 0, g: 90, b: 0 } } }).png().toBuffer();
});
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A thread that writes `<dir>/<name>` and removes it again, over and over, until stopped. */
async function flicker(dir: string, name: string, bytes: Buffer): Promise<() => Promise<number>> {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(`
    const { writeFileSync, unlinkSync } = require('node:fs');
    const { parentPort, workerData } = require('node:worker_threads');
    const path = require('node:path').join(workerData.dir, workerData.name);
    parentPort.postMessage('ready');
    let flips = 0;
    while (Atomics.load(workerData.flag, 0) === 0) {
      writeFileSync(path, workerData.bytes);
      try { unlinkSync(path); } catch {}
      flips++;
    }
    parentPort.postMessage(flips);
  `, { eval: true, workerData: { dir, name, bytes, flag } });
  await new Promise((resolve) => worker.once('message', resolve));
  return () => new Promise<number>((resolve) => {
    Atomics.store(flag, 0, 1);
    worker.once('message', (flips: number) => void worker.terminate().then(() => resolve(flips)));
  });
}

/** Gone, or caught half written (the racer truncates and rewrites it): a note either way. */
const LEFT_OUT = /^\[(link volume:\/\/\/tmp\/v\.png|the file \/volume\/tmp\/v\.png) was left out: [^\]]+\]$/;

describe('finding 9: a linked file that vanishes before it is read', () => {
  it('rendering never throws: each link is the image or a note', async () => {
    const stop = await flicker(tmp, 'v.png', image);
    const content = Array.from({ length: LINKS }, () => ({ type: 'resource_link', uri: 'volume:///tmp/v.png', name: 'v' }));
    let images = 0;
    let notes = 0;
    let flips: number;
    try {
      for (let i = 0; i < RENDERS; i++) {
        for (const block of await renderForModel({ content }, { tmp })) {
          if (block.type === 'image') images++;
          else {
            assert.match(block.text as string, LEFT_OUT);
            notes++;
          }
        }
      }
    } finally {
      flips = await stop();
    }
    assert.ok(notes > 0 && images > 0, `images ${images}, notes ${notes}, flips ${flips}: the race was not contested`);
    console.log(`# vanishing file: ${RENDERS * LINKS} links rendered (${images} images, ${notes} notes), ${flips} flips`);
  });

  it('a real call whose linked file is missing or vanishing is ok, with a note for the model', async () => {
    const host = new FunctionHost({ poolSize: 2, limits: { callTimeoutMs: 10_000, memoryBytes: 64 << 20 } });
    try {
      const loaded = await host.load(probe());
      const link = (uri: string) => ({ result: { content: [{ type: 'resource_link', uri, name: 'x' }] } });
      const missing = await host.call(loaded, 'raw', link('volume:///tmp/missing.png'), { tmpDir: tmp });
      assert.equal(missing.status, 'ok', JSON.stringify(missing.crash));
      assert.deepEqual(missing.model, [{ type: 'text', text: '[link volume:///tmp/missing.png was left out: the file does not exist]' }]);

      const stop = await flicker(tmp, 'v.png', image);
      try {
        for (let i = 0; i < CALLS; i++) {
          const outcome = await host.call(loaded, 'raw', link('volume:///tmp/v.png'), { tmpDir: tmp });
          assert.equal(outcome.status, 'ok', JSON.stringify(outcome.crash));
          const [block] = outcome.model;
          if (block.type !== 'image') assert.match(block.text as string, LEFT_OUT);
        }
      } finally {
        await stop();
      }
    } finally {
      await host.close();
    }
  });
});
