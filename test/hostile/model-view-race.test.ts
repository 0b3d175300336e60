/**
 * Finding 8 (low): the model view's `volume:///` reader had the race of finding 1 (realpath, then readFile
 * by name). A racer thread swaps the linked file's directory `/volume/tmp/d` for a relative symlink
 * `d -> ../../..` whose target holds an image of the host's, while results linking
 * `volume:///tmp/d/img.png` are rendered. Before the fix the host's image reached the model (the issue saw
 * it after 926 tries); now it never does, over many more tries, and every block is the volume's own image
 * or a note.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { renderForModel } from '../../src/function/render.js';
import { startSwapRacer } from './helpers/swap-racer.js';

/** Links per rendered result, and results rendered (each link is one try). */
const LINKS = 16;
const RENDERS = 400;
// A hang guard, not a margin: the count ends an attack; on a loaded machine it takes longer.
const TIME_BOUND_MS = 120_000;

let base: string;
let tmp: string;
let hostImage: string;
let volumeImage: Buffer;

const png = (width: number, height: number, r: number) =>
  sharp({ create: { width, height, channels: 3, background: { r, g: 0, b: 0 } } }).png().toBuffer();

before(async () => {
  base = mkdtempSync(join(tmpdir(), 'subako-hostile-view-'));
  tmp = join(base, 'vol', 'ses', 'tmp');
  mkdirSync(tmp, { recursive: true });
  const secret = await png(7, 5, 250);
  writeFileSync(join(base, 'img.png'), secret);
  hostImage = secret.toString('base64');
  volumeImage = await png(3, 3, 10);
});
after(() => rmSync(base, { recursive: true, force: true }));

describe('finding 8: a linked file\'s directory swapped for a symlink while the result is rendered', () => {
  it('no image from outside the volume is ever shown; each link is the volume\'s image or a note', async () => {
    // The volume's own image is put in the real directory before the racer starts swapping it: written
    // afterwards, the write itself could meet the swap (and fail before the racer is stopped).
    const racer = await startSwapRacer({ parent: tmp, name: 'd', linkTarget: '../../..', files: { 'img.png': volumeImage } });
    const content = Array.from({ length: LINKS }, () => ({ type: 'resource_link', uri: 'volume:///tmp/d/img.png', name: 'img' }));
    let tries = 0;
    let shown = 0;
    let notes = 0;
    let leaked: number | null = null;
    let threw: string | null = null;
    const started = Date.now();
    let cycles: number;
    try {
      for (let i = 0; i < RENDERS && Date.now() - started < TIME_BOUND_MS; i++) {
        let blocks;
        try {
          blocks = await renderForModel({ content }, { tmp });
        } catch (error) {
          threw ??= (error as Error).message; // the code before the fix threw when the file vanished
          continue;
        }
        for (const block of blocks) {
          tries++;
          if (block.type === 'image' && block.data === hostImage) leaked ??= tries;
          else if (block.type === 'image') shown++;
          else {
            assert.match(block.text as string, /^\[link volume:\/\/\/tmp\/d\/img\.png was left out: /);
            notes++;
          }
        }
      }
    } finally {
      cycles = await racer.stop();
    }
    const ms = Date.now() - started;
    assert.equal(leaked, null, `the host's image was shown (first at try ${leaked} of ${tries}, ${ms} ms)`);
    assert.equal(threw, null, 'rendering threw');
    assert.ok(shown > 0 && notes > 0, `shown ${shown}, notes ${notes}, racer cycles ${cycles}: the race was not contested`);
    assert.ok(tries >= 2000, `only ${tries} tries in ${ms} ms`);
    console.log(`# model view: ${tries} tries in ${ms} ms (${shown} shown, ${notes} notes), ${cycles} swaps`);
  });
});
