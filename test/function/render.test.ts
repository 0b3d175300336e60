import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { renderForModel, renderCrash } from '../../src/function/render.js';
import { sniffImageType } from '../../src/function/image.js';
import { parseVolumeUri, resolveVolumeFile } from '../../src/function/volume-uri.js';
import { callToolResultProblem } from '../../src/function/call-result.js';

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
});
