/**
 * Finding 4 of issue 11, performed for real: a guest answers a result full of images that cost the host far
 * more to render than they cost the guest to name. Before the fix, 60 `resource_link`s to one 1 MB
 * 16000×16000 PNG took 7.8 s of wall time, 13.9 s of CPU and 1.1 GB of memory here (1.6 GiB and 30 s where
 * it was found), all after the guest exited and outside the call's deadline. Each test runs a real guest
 * (abi_probe's `raw` tool answers the result it is given) through the real call path, and watches the
 * process's resident memory while the call runs.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { FunctionHost, type LoadedPackage } from '../../src/function/host.js';
import type { FunctionCallOutcome } from '../../src/function/types.js';
import type { ContentBlock } from '../../src/tool.js';
import { MAX_IMAGES_PER_RESULT } from '../../src/function/render-limits.js';
import { probe } from '../function/guests.js';
import { pngDeclaring } from '../helpers/png.js';

const CALL_TIMEOUT_MS = 10_000;
/** Generous: the bomb decoded at once took over 1 GB; one bounded decode takes a small part of this. */
const RSS_GROWTH_BOUND = 600 * 1024 * 1024;

let root: string;
let volumeTmp: string;
let host: FunctionHost;
let loaded: LoadedPackage;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'subako-image-bomb-'));
  // Laid out as a session's volume is: the guest sees it as /volume/tmp.
  volumeTmp = join(root, 'agents', 'a1', 'sessions', 's1', 'tmp');
  mkdirSync(volumeTmp, { recursive: true });
  // 256 Mpx of one colour compress to about 0.8 MB; libvips encodes it row by row, so building it is cheap.
  const bomb = await sharp({ create: { width: 16000, height: 16000, channels: 3, background: '#fff' } }).png({ compressionLevel: 9 }).toBuffer();
  assert.ok(bomb.length < 1024 * 1024, `the bomb is ${bomb.length} bytes`);
  writeFileSync(join(volumeTmp, 'bomb.png'), bomb);
  // Just under the per-image limit, so each may be decoded and only the pixel budget stops them; interlaced,
  // so libvips must hold the whole 108 MB raster to decode it (the worst case for memory under the limit).
  const photo = sharp({ create: { width: 6000, height: 6000, channels: 3, background: '#369' } }).png({ progressive: true });
  writeFileSync(join(volumeTmp, 'photo.png'), await photo.toBuffer());
  host = new FunctionHost({ poolSize: 2, limits: { callTimeoutMs: CALL_TIMEOUT_MS } });
  loaded = await host.load(probe());
});

after(async () => {
  await host.close();
  rmSync(root, { recursive: true, force: true });
});

/** Runs calls while sampling the process's resident memory; returns the outcomes and the growth at the peak. */
async function watched(calls: () => Promise<FunctionCallOutcome>[]): Promise<{ outcomes: FunctionCallOutcome[]; growth: number }> {
  const start = process.memoryUsage().rss;
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  try {
    const outcomes = await Promise.all(calls());
    peak = Math.max(peak, process.memoryUsage().rss);
    return { outcomes, growth: peak - start };
  } finally {
    clearInterval(sampler);
  }
}

const answering = (content: ContentBlock[], callTimeoutMs = CALL_TIMEOUT_MS) => () =>
  host.call(loaded, 'raw', { result: { content } }, { tmpDir: volumeTmp, limits: { callTimeoutMs } });
const links = (n: number, file: string): ContentBlock[] =>
  Array.from({ length: n }, (_, i) => ({ type: 'resource_link', uri: `volume:///tmp/${file}`, name: `${file} ${i}` }));
const texts = (outcome: FunctionCallOutcome) => outcome.model.filter((b) => b.type === 'text').map((b) => b.text as string);
const mib = (bytes: number) => `${Math.round(bytes / 1048576)} MiB`;

describe('a result full of links to a 16000×16000 PNG', () => {
  for (const count of [60, 3000]) {
    test(`${count} links: at most ${MAX_IMAGES_PER_RESULT} are looked at, each refused from its header; the rest are one note`, async () => {
      const content = [{ type: 'text', text: 'the chart:' }, ...links(count, 'bomb.png'), { type: 'text', text: 'end' }];
      const { outcomes: [outcome], growth } = await watched(() => [answering(content)()]);
      assert.equal(outcome.status, 'ok', JSON.stringify(outcome.crash));
      assert.ok(outcome.durationMs < CALL_TIMEOUT_MS, `the call took ${outcome.durationMs} ms`);
      const notes = texts(outcome);
      const refused: string[] = notes.filter((t) => t === '[the file /volume/tmp/bomb.png was left out: it is 16000×16000 px (256 Mpx); an image may have at most 40 Mpx]');
      assert.equal(refused.length, MAX_IMAGES_PER_RESULT);
      assert.deepEqual(notes.filter((t) => !refused.includes(t)), [
        'the chart:', `[${count - MAX_IMAGES_PER_RESULT} images were left out: a result shows at most 16 images]`, 'end',
      ]);
      assert.equal(outcome.model.length, MAX_IMAGES_PER_RESULT + 3);
      assert.ok(growth < RSS_GROWTH_BOUND, `resident memory grew by ${mib(growth)}`);
    });
  }

  // Measured: about 320 MiB of growth with two decodes at once in the process; 550 MiB without the gate.
  // The twelve decodes wait for each other, so on a loaded machine they get a longer deadline than the rest.
  test('links to a 36 Mpx image that may be decoded: only the pixel budget\'s worth is, six calls at once', async () => {
    const { outcomes, growth } = await watched(() => Array.from({ length: 6 }, () => answering(links(3000, 'photo.png'), 90_000)()));
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'ok');
      assert.equal(outcome.model.filter((b) => b.type === 'image').length, 2, 'two of 36 Mpx fit in 100 Mpx');
      const notes = texts(outcome);
      assert.equal(notes.filter((t) => /would take the result's images past 100 Mpx together/.test(t)).length, 14);
      assert.equal(notes.at(-1), '[2984 images were left out: a result shows at most 16 images]');
    }
    assert.ok(growth < RSS_GROWTH_BOUND, `resident memory grew by ${mib(growth)}`);
  });
});

describe('inline image bombs (base64 in stdout) count against the same limits', () => {
  test('a real 12000×12000 PNG inline is refused from its header', async () => {
    const bomb = await sharp({ create: { width: 12000, height: 12000, channels: 3, background: '#000' } }).png({ compressionLevel: 9 }).toBuffer();
    const content = [{ type: 'image', mimeType: 'image/png', data: bomb.toString('base64') }];
    const { outcomes: [outcome], growth } = await watched(() => [answering(content)()]);
    assert.equal(outcome.status, 'ok', JSON.stringify(outcome.crash));
    assert.deepEqual(texts(outcome), ['[an image was left out: it is 12000×12000 px (144 Mpx); an image may have at most 40 Mpx]']);
    assert.ok(growth < RSS_GROWTH_BOUND, `resident memory grew by ${mib(growth)}`);
  });

  test('3,000 tiny PNGs each declaring 65535×65535: 16 are refused from their headers, the rest are one note', async () => {
    const data = pngDeclaring(65535, 65535).toString('base64');
    const content = Array.from({ length: 3000 }, () => ({ type: 'image', mimeType: 'image/png', data }));
    const { outcomes: [outcome], growth } = await watched(() => [answering(content)()]);
    assert.equal(outcome.status, 'ok', JSON.stringify(outcome.crash));
    const notes = texts(outcome);
    assert.equal(notes.length, MAX_IMAGES_PER_RESULT + 1);
    assert.ok(notes.slice(0, 16).every((t) => t === '[an image was left out: it is 65535×65535 px (4294.8 Mpx); an image may have at most 40 Mpx]'), notes[0]);
    assert.equal(notes[16], '[2984 images were left out: a result shows at most 16 images]');
    assert.ok(growth < RSS_GROWTH_BOUND, `resident memory grew by ${mib(growth)}`);
  });
});
