import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { renderForModel, renderCrash } from '../../src/function/render.js';
import { sniffImageType } from '../../src/function/image.js';
import { parseVolumeUri, resolveVolumeFile } from '../../src/function/volume-uri.js';
import { CALL_TOOL_RESULT_SCHEMA, callToolResultProblem } from '../../src/function/call-result.js';
import { compileSchema } from '../../src/common/index.js';
import fc from 'fast-check';
import { ImageBudget } from '../../src/function/render-budget.js';
import {
  MAX_IMAGE_PIXELS, MAX_IMAGES_PER_RESULT, MAX_RESULT_IMAGE_BYTES, MAX_RESULT_PIXELS,
} from '../../src/function/render-limits.js';
import { paddedPng, pngDeclaring } from '../helpers/png.js';

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 10, b: 10 } } }).png().toBuffer();

let root: string;
let tmp: string;
let outside: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'subako-render-'));
  tmp = join(root, 'volume', 'tmp');
  outside = join(root, 'outside');
  mkdirSync(tmp, { recursive: true });
  mkdirSync(outside);
});
after(() => rmSync(root, { recursive: true, force: true }));

describe('images are told by their bytes', () => {
  test('PNG, JPEG, GIF and WebP are recognised; anything else is not', async () => {
    assert.equal(sniffImageType(await png(2, 2)), 'image/png');
    assert.equal(sniffImageType(await sharp(await png(2, 2)).jpeg().toBuffer()), 'image/jpeg');
    assert.equal(sniffImageType(await sharp(await png(2, 2)).gif().toBuffer()), 'image/gif');
    assert.equal(sniffImageType(await sharp(await png(2, 2)).webp().toBuffer()), 'image/webp');
    assert.equal(sniffImageType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')), null);
  });

  test('an image block whose bytes are not an image is left out, whatever its mimeType says', async () => {
    const [block] = await renderForModel({ content: [{ type: 'image', mimeType: 'image/png', data: Buffer.from('not a png').toString('base64') }] }, null);
    assert.equal(block.type, 'text');
    assert.match(block.text as string, /left out: not a PNG, JPEG, GIF or WebP/);
  });

  test('an inline image is shown as the image with the type its bytes say', async () => {
    const jpeg = await sharp(await png(30, 20)).jpeg().toBuffer();
    const [block] = await renderForModel({ content: [{ type: 'image', mimeType: 'image/png', data: jpeg.toString('base64') }] }, null);
    assert.equal(block.type, 'image');
    assert.equal(block.mimeType, 'image/jpeg');
  });
});

describe('what the model sees of each block', () => {
  test('text as is; other links as one line; other blocks as a note', async () => {
    const model = await renderForModel({
      content: [
        { type: 'text', text: 'plain' },
        { type: 'resource_link', uri: 'https://example.com/a', name: 'a page' },
        { type: 'audio', mimeType: 'audio/wav', data: '' },
      ],
    }, { tmp });
    assert.deepEqual(model, [
      { type: 'text', text: 'plain' },
      { type: 'text', text: '[link: a page <https://example.com/a>]' },
      { type: 'text', text: '[a "audio" block was left out: the model is shown text and images only]' },
    ]);
  });

  test('a volume:/// link is shown as the image file, downscaled to 2000 px on its long edge', async () => {
    writeFileSync(join(tmp, 'big chart.png'), await png(4000, 3000));
    const [block] = await renderForModel({ content: [{ type: 'resource_link', uri: 'volume:///tmp/big%20chart.png', name: 'chart' }] }, { tmp });
    assert.equal(block.type, 'image');
    const meta = await sharp(Buffer.from(block.data as string, 'base64')).metadata();
    assert.deepEqual([meta.width, meta.height, meta.format], [2000, 1500, 'png']);
  });

  test('a linked file that leaves the volume through a symlink is not read', async () => {
    writeFileSync(join(outside, 'secret.png'), await png(4, 4));
    symlinkSync(join(outside, 'secret.png'), join(tmp, 'escape.png'));
    const [block] = await renderForModel({ content: [{ type: 'resource_link', uri: 'volume:///tmp/escape.png', name: 'x' }] }, { tmp });
    assert.equal(block.type, 'text');
    assert.match(block.text as string, /leads outside the volume/);
  });

  test('a crash is one text block naming the reason with stderr', () => {
    const [block] = renderCrash({ reason: 'trap', message: 'the module trapped: unreachable', stderr: 'boom\n' });
    assert.match(block.text as string, /^The function crashed \(trap\): the module trapped: unreachable\.\nThe last of its stderr:\nboom/);
  });
});

describe('rendering is bounded: images, pixels, bytes and time', () => {
  const inline = (bytes: Uint8Array) => ({ type: 'image', mimeType: 'image/png', data: Buffer.from(bytes).toString('base64') });
  const link = (file: string) => ({ type: 'resource_link', uri: `volume:///tmp/${file}`, name: file });
  const images = (model: { type: string }[]) => model.filter((b) => b.type === 'image').length;
  const texts = (model: { type: string; text?: unknown }[]) => model.filter((b) => b.type === 'text').map((b) => b.text as string);

  test(`at most ${MAX_IMAGES_PER_RESULT} images per result; the rest are one note with their count, and the text stays`, async () => {
    const small = await png(8, 8);
    const content = [{ type: 'text', text: 'before' }, ...Array.from({ length: 20 }, () => inline(small)), { type: 'text', text: 'after' }];
    const model = await renderForModel({ content }, { tmp });
    assert.equal(images(model), 16);
    assert.deepEqual(texts(model), ['before', '[4 images were left out: a result shows at most 16 images]', 'after']);
  });

  test('inline images and linked files share the same places', async () => {
    writeFileSync(join(tmp, 'small.png'), await png(8, 8));
    const small = await png(8, 8);
    const content = [...Array.from({ length: 10 }, () => inline(small)), ...Array.from({ length: 10 }, () => link('small.png'))];
    const model = await renderForModel({ content }, { tmp });
    assert.equal(images(model), 16);
    assert.deepEqual(texts(model), ['[4 images were left out: a result shows at most 16 images]']);
  });

  test(`an image declaring more than ${MAX_IMAGE_PIXELS / 1e6} Mpx is refused from its header, never decoded`, async () => {
    // 100000×100000 declared over one row of pixels: decoding would fail; the note shows the header was enough.
    const [block] = await renderForModel({ content: [inline(pngDeclaring(100_000, 100_000))] }, null);
    assert.equal(block.text, '[an image was left out: it is 100000×100000 px (10000 Mpx); an image may have at most 40 Mpx]');
  });

  test(`the images of one result may declare ${MAX_RESULT_PIXELS / 1e6} Mpx together`, async () => {
    writeFileSync(join(tmp, 'photo.png'), await sharp({ create: { width: 6000, height: 6000, channels: 3, background: '#369' } }).png().toBuffer());
    const model = await renderForModel({ content: [link('photo.png'), link('photo.png'), link('photo.png')] }, { tmp });
    assert.equal(images(model), 2);
    assert.match(texts(model)[0], /^\[the file \/volume\/tmp\/photo.png was left out: its 36 Mpx would take the result's images past 100 Mpx together \(72 Mpx already shown\)/);
  });

  test(`the images shown of one result hold at most ${MAX_RESULT_IMAGE_BYTES >> 20} MiB together`, async () => {
    writeFileSync(join(tmp, 'padded.png'), paddedPng(10, 10, 20 << 20));
    const model = await renderForModel({ content: [link('padded.png'), link('padded.png')] }, { tmp });
    assert.equal(images(model), 1);
    assert.match(texts(model)[0], /its 20 MiB would take the result's images past 32 MiB together \(20 MiB already shown\)/);
  });

  test('past the call\'s deadline the images are one note, and the text is still shown', async () => {
    const small = await png(8, 8);
    const content = [inline(small), { type: 'text', text: 'the answer' }, inline(small)];
    const model = await renderForModel({ content }, null, { deadline: performance.now() - 1 });
    assert.deepEqual(model, [
      { type: 'text', text: "[2 images were left out: the call's deadline passed before they were rendered]" },
      { type: 'text', text: 'the answer' },
    ]);
  });

  test('a deadline that passes while an image decodes stops rendering there', async () => {
    writeFileSync(join(tmp, 'slow.png'), await sharp({ create: { width: 6000, height: 6000, channels: 3, background: '#963' } }).png().toBuffer());
    // A 36 Mpx decode takes tens of milliseconds; the deadline is one millisecond away.
    const content = [...Array.from({ length: 16 }, () => link('slow.png')), { type: 'text', text: 'done' }];
    const model = await renderForModel({ content }, { tmp }, { deadline: performance.now() + 1 });
    assert.equal(images(model), 0);
    assert.deepEqual(texts(model), ["[16 images were left out: the call's deadline passed before they were rendered]", 'done']);
  });

  test('a cancelled call\'s images are one note', async () => {
    const cancel = new AbortController();
    cancel.abort();
    const model = await renderForModel({ content: [inline(await png(8, 8)), { type: 'text', text: 't' }] }, null, { signal: cancel.signal });
    assert.deepEqual(texts(model), ['[1 image was left out: the call was cancelled]', 't']);
  });
});

describe('the image budget', () => {
  test('places are taken one by one until none is left', () => {
    const budget = new ImageBudget({ images: 2, pixelsPerImage: 100, pixelsPerResult: 150, bytesPerResult: 10 });
    assert.deepEqual([budget.takeImage(), budget.takeImage(), budget.takeImage()], [true, true, false]);
  });
  test('pixels: one image over its limit is refused without being counted; the total counts what was accepted', () => {
    const budget = new ImageBudget({ images: 9, pixelsPerImage: 100, pixelsPerResult: 150, bytesPerResult: 10 });
    assert.match(budget.spendPixels(11, 10) ?? '', /11×10 px/);
    assert.equal(budget.spendPixels(10, 10), null);
    assert.match(budget.spendPixels(10, 6) ?? '', /past/);
    assert.equal(budget.spendPixels(10, 5), null);
  });
  test('bytes: an image past the total is refused; one that fits exactly is shown', () => {
    const budget = new ImageBudget({ images: 9, pixelsPerImage: 100, pixelsPerResult: 150, bytesPerResult: 10 });
    assert.equal(budget.spendBytes(6), null);
    assert.match(budget.spendBytes(5) ?? '', /past/);
    assert.equal(budget.spendBytes(4), null);
  });
});

describe('volume URIs', () => {
  test('segments are percent-decoded', () => {
    assert.deepEqual(parseVolumeUri('volume:///tmp/a%2Fb'), { why: 'a segment hides a separator or a NUL byte' });
    assert.deepEqual(parseVolumeUri('volume:///tmp/%E6%97%A5.png'), { segments: ['tmp', '日.png'] });
  });
  for (const uri of ['volume:///tmp/../etc/passwd', 'volume:///tmp/%2e%2e/x', 'volume://host/tmp/x', 'volume:///tmp//x', 'volume:///tmp/%00', 'volume:///tmp/%zz']) {
    test(`never outside the volume: ${uri}`, () => {
      const parsed = parseVolumeUri(uri);
      assert.ok('why' in parsed, JSON.stringify(parsed));
    });
  }
  test('/volume/data resolves only when mounted', () => {
    assert.deepEqual(resolveVolumeFile('volume:///data/x.png', { tmp }), { ok: false, why: '/volume/data is not mounted in this call' });
  });
});

describe('an answer must be a CallToolResult', () => {
  test('valid results pass', () => {
    assert.equal(callToolResultProblem({ content: [] }), null);
    assert.equal(callToolResultProblem({ content: [{ type: 'text', text: 'x' }], isError: true, structuredContent: {} }), null);
  });
  for (const [bad, where] of [
    [{}, 'content'],
    [{ content: 'x' }, '/content'],
    [{ content: [{ type: 'text' }] }, '/content/0'],
    [{ content: [{ type: 'image', data: 'x' }] }, '/content/0'],
    [{ content: [], isError: 'yes' }, '/isError'],
    [{ content: [], structuredContent: [1] }, '/structuredContent'],
    [null, 'top'],
  ] as const) {
    test(`not a CallToolResult: ${JSON.stringify(bad)}`, () => {
      assert.match(callToolResultProblem(bad) ?? '', new RegExp(where));
    });
  }
  for (const [bad, where, why] of [
    [{ content: [{ type: 'resource_link', uri: 'x' }] }, '/content/0', "'name'"],
    [{ content: [{ type: 'audio', data: 'x', mimeType: 3 }] }, '/content/0/mimeType', 'string'],
    [{ content: [{ type: 7 }] }, '/content/0/type', 'string'],
    [{ content: [{}] }, '/content/0', "'type'"],
    [{ content: ['x'] }, '/content/0', 'object'],
    [{ content: [], resultType: 1 }, '/resultType', 'string'],
    [{ content: [], _meta: null }, '/_meta', 'object'],
    [[], 'the top', 'object'],
  ] as const) {
    test(`not a CallToolResult: ${JSON.stringify(bad)} (${where}: ${why})`, () => {
      const problem = callToolResultProblem(bad) ?? '';
      assert.ok(problem.includes(where) && problem.includes(why), problem);
    });
  }
  test('unknown block types and extra fields are allowed', () => {
    assert.equal(callToolResultProblem({ content: [{ type: 'resource', resource: {} }, { type: 'text', text: '', extra: 1 }], other: true }), null);
  });
  test('the check by hand accepts exactly what the schema does (the validator, on generated answers)', () => {
    const validate = compileSchema(CALL_TOOL_RESULT_SCHEMA);
    const scalar = fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.boolean(), fc.constant(null));
    const anyValue = fc.oneof(scalar, fc.array(scalar, { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 2 }), scalar, { maxKeys: 2 }));
    const field = (name: string) => fc.option(fc.oneof(fc.string({ maxLength: 3 }), anyValue), { nil: undefined }).map((v) => (v === undefined ? {} : { [name]: v }));
    const block = fc.oneof(
      anyValue,
      fc.tuple(fc.option(fc.oneof(fc.constantFrom('text', 'image', 'audio', 'resource_link', 'resource'), scalar), { nil: undefined }),
        field('text'), field('data'), field('mimeType'), field('uri'), field('name'))
        .map(([type, ...fields]) => Object.assign(type === undefined ? {} : { type }, ...fields)),
    );
    const answer = fc.oneof(
      anyValue,
      fc.tuple(fc.option(fc.oneof(fc.array(block, { maxLength: 3 }), anyValue), { nil: undefined }),
        field('structuredContent'), field('isError'), field('resultType'), field('_meta'), fc.option(fc.boolean(), { nil: undefined }).map((b) => (b === undefined ? {} : { isError: b })))
        .map(([content, ...fields]) => Object.assign(content === undefined ? {} : { content }, ...fields)),
    );
    fc.assert(fc.property(answer, (value) => {
      assert.equal(callToolResultProblem(value) === null, validate(value), JSON.stringify(value));
    }), { numRuns: 3000 });
  });
});
