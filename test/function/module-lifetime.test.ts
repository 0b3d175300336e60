/**
 * A module is compiled once however many loads share it, and let go when none holds it: kept idle for a
 * while (a package discovered at upload is called soon after), then released in the sandbox, so refused
 * uploads and replaced builds do not pile up in a long-running server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fixture } from '../helpers/paths.js';
import { hostPerFile } from './guests.js';

const ECHO = readFileSync(fixture('c', 'mcp', 'echo.wasm'));
/** The echo module with a custom section of its own: the same code, distinct bytes (and digest). */
const variant = (n: number): Buffer => {
  const name = Buffer.from(`v${n}`);
  return Buffer.concat([ECHO, Buffer.from([0, name.length + 1, name.length]), name]);
};
const source = (bytes: Uint8Array) => ({ name: 'echo', moduleBytes: bytes, assetsDir: null });

const files = hostPerFile({ poolSize: 1 });

test('loads share one compile; unloaded, a module stays idle and is found again', async () => {
  const first = await files.host.load(source(variant(0)));
  const second = await files.host.load(source(variant(0)));
  const before = files.host.stats();
  assert.equal(before.modules, 1);
  files.host.unload(first);
  files.host.unload(first); // twice is once
  files.host.unload(second);
  assert.equal(files.host.stats().modules, 1, 'kept while idle');
  const again = await files.host.load(source(variant(0)));
  assert.equal(files.host.stats().compileCacheMisses, before.compileCacheMisses, 'found compiled, not compiled again');
  const outcome = await files.host.call(again, 'echo', { hello: 'again' }, { tmpDir: files.scratch.dir('tmp') });
  assert.equal(outcome.status, 'ok');
  files.host.unload(again);
});

test('past the idle modules kept, the oldest is released: loading it again compiles it again, and it runs', async () => {
  const oldest = await files.host.load(source(variant(100)));
  files.host.unload(oldest);
  for (let n = 101; n <= 120; n++) files.host.unload(await files.host.load(source(variant(n))));
  assert.ok(files.host.stats().modules <= 16 + 1, `modules kept: ${files.host.stats().modules}`);
  const misses = files.host.stats().compileCacheMisses;
  const back = await files.host.load(source(variant(100)));
  assert.equal(files.host.stats().compileCacheMisses, misses + 1, 'released, so compiled again');
  const outcome = await files.host.call(back, 'echo', { hello: 'back' }, { tmpDir: files.scratch.dir('tmp') });
  assert.equal(outcome.status, 'ok');
  // A module some load still holds is never released, however many others come and go.
  for (let n = 200; n < 220; n++) files.host.unload(await files.host.load(source(variant(n))));
  const held = await files.host.call(back, 'echo', { hello: 'held' }, { tmpDir: files.scratch.dir('tmp') });
  assert.equal(held.status, 'ok');
});
