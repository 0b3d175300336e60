import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { fixture } from '../helpers/paths.js';
import { hostPerFile, probe } from './guests.js';

const files = hostPerFile({ poolSize: 1 });

test('a package written in AssemblyScript is discovered and answers its calls', async () => {
  const loaded = await files.host.load({ name: 'shout', moduleBytes: readFileSync(fixture('as', 'mcp-shout.wasm')), assetsDir: null });
  const discovery = await files.host.discover(loaded);
  assert.deepEqual(discovery.problems, []);
  assert.deepEqual(discovery.tools?.map((t) => t.name), ['shout']);
  const ok = await files.host.call(loaded, 'shout', { text: 'hello, wasm' }, { tmpDir: files.scratch.dir('tmp') });
  assert.equal(ok.status, 'ok');
  assert.deepEqual(ok.result, { content: [{ type: 'text', text: 'HELLO, WASM' }] });
  const missing = await files.host.call(loaded, 'shout', {}, { tmpDir: files.scratch.dir('tmp') });
  assert.equal(missing.status, 'tool_error');
});

test('an inline image a guest returns is shown to the model as the image', async () => {
  const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png().toBuffer();
  const loaded = await files.host.load(probe());
  const outcome = await files.host.call(loaded, 'raw', {
    result: { content: [{ type: 'text', text: 'a chart' }, { type: 'image', mimeType: 'image/png', data: png.toString('base64') }] },
  }, { tmpDir: files.scratch.dir('tmp') });
  assert.equal(outcome.status, 'ok');
  assert.equal(outcome.model[1].type, 'image');
  assert.equal(outcome.model[1].mimeType, 'image/png');
  assert.deepEqual(Buffer.from(outcome.model[1].data as string, 'base64'), png);
});
