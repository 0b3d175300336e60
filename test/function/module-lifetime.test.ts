/**
 * A module is compiled once however many loads share it, and let go when none holds it: kept idle for a
 * while (a package discovered at upload is called soon after), then released in the sandbox, so refused
 * uploads and replaced builds do not pile up in a long-running server.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { FunctionHost } from '../../src/function/host.js';
import { fixture } from '../helpers/paths.js';
import { Scratch } from './guests.js';

const ECHO = readFileSync(fixture('c', 'mcp', 'echo.wasm'));
/** The echo module with a custom section of its own: the same code, distinct bytes (and digest). */
const variant = (n: number): Buffer => {
  const name = Buffer.from(`v${n}`);
  return Buffer.concat([ECHO, Buffer.from([0, name.length + 1, name.length]), name]);
};
const source = (bytes: Uint8Array) => ({ name: 'echo', moduleBytes: bytes, assetsDir: null });

let host: FunctionHost;
let scratch: Scratch;
before(() => {
  host = new FunctionHost({ poolSize: 1 });
  scratch = new Scratch();
});
after(async () => {
  await host.close();
  scratch.cleanup();
});

test('loads share one compile; unloaded, a module stays idle and is found again', async () => {
  const first = await host.load(source(variant(0)));
  const second = await host.load(source(variant(0)));
  const before = host.stats();
  assert.equal(before.modules, 1);
  host.unload(first);
  host.unload(first); // twice is once
  host.unload(second);
  assert.equal(host.stats().modules, 1, 'kept while idle');
  const again = await host.load(source(variant(0)));
  assert.equal(host.stats().compileCacheMisses, before.compileCacheMisses, 'found compiled, not compiled again');
  const outcome = await host.call(again, 'echo', { hello: 'again' }, { tmpDir: scratch.dir('tmp') });
  assert.equal(outcome.status, 'ok');
  host.unload(again);
});

test('past the idle modules kept, the oldest is released: loading it again compiles it again, and it runs', async () => {
  const oldest = await host.load(source(variant(100)));
  host.unload(oldest);
  for (let n = 101; n <= 120; n++) host.unload(await host.load(source(variant(n))));
  assert.ok(host.stats().modules <= 16 + 1, `modules kept: ${host.stats().modules}`);
  const misses = host.stats().compileCacheMisses;
  const back = await host.load(source(variant(100)));
  assert.equal(host.stats().compileCacheMisses, misses + 1, 'released, so compiled again');
  const outcome = await host.call(back, 'echo', { hello: 'back' }, { tmpDir: scratch.dir('tmp') });
  assert.equal(outcome.status, 'ok');
  // A module some load still holds is never released, however many others come and go.
  for (let n = 200; n < 220; n++) host.unload(await host.load(source(variant(n))));
  const held = await host.call(back, 'echo', { hello: 'held' }, { tmpDir: scratch.dir('tmp') });
  assert.equal(held.status, 'ok');
});
