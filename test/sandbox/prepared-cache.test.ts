/**
 * Instrumented modules kept on disk (sandbox/prepared-cache.ts): a module is instrumented once and read
 * back after, one entry per cap, a refusal is never kept, a cache that cannot be written costs nothing but
 * the walk, and a module run from the cache carries its caps.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wat } from '../helpers/wat.js';
import { PreparedModuleCache } from '../../src/sandbox/index.js';
import { prepareModule } from '../../src/sandbox/compile.js';
import { SandboxPool } from '../../src/sandbox/pool.js';
import { MemoryCapError } from '../../src/sandbox/errors.js';
import { MIB, runToEnd } from './helpers.js';

/** Exits 0 when growing memory by 100 pages (6.25 MiB) is refused, 1 when it is allowed. */
const GROW = `(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1 1000)
  (func (export "_start")
    (call $exit (i32.ne (memory.grow (i32.const 100)) (i32.const -1)))))`;

describe('the prepared-module cache', () => {
  let dir: string;
  let grow: Uint8Array;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'subako-prepared-'));
    grow = await wat(GROW);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a module is instrumented once, kept, and read back by a later cache on the same directory', async () => {
    const cacheDir = join(dir, 'once');
    const first = await new PreparedModuleCache(cacheDir).prepare(grow, { memoryBytes: 2 * MIB });
    assert.deepEqual(first.bytes, (await prepareModule(grow, { memoryBytes: 2 * MIB })).bytes);
    const [entry] = readdirSync(cacheDir);
    assert.match(entry, /^[0-9a-f]{64}-[0-9a-f]{16}\.wasm$/);
    // What a later host gets is what the file holds, not a fresh walk: mark the file and see the mark.
    const marked = Buffer.concat([readFileSync(join(cacheDir, entry))]);
    marked[marked.length - 1] ^= 0xff;
    writeFileSync(join(cacheDir, entry), marked);
    const again = await new PreparedModuleCache(cacheDir).prepare(grow, { memoryBytes: 2 * MIB });
    assert.deepEqual(Buffer.from(again.bytes), marked);
  });

  test('each memory cap has an entry of its own, and a digest given by the caller names it', async () => {
    const cacheDir = join(dir, 'caps');
    const cache = new PreparedModuleCache(cacheDir);
    await cache.prepare(grow, { memoryBytes: 2 * MIB });
    await cache.prepare(grow, { memoryBytes: 4 * MIB });
    await cache.prepare(grow, { memoryBytes: 4 * MIB, digest: 'a'.repeat(64) });
    const entries = readdirSync(cacheDir).sort();
    assert.equal(entries.length, 3);
    assert.equal(entries.filter((e) => e.startsWith('a'.repeat(64))).length, 1);
  });

  test('a module refused for its caps is rejected and never kept', async () => {
    const cacheDir = join(dir, 'refused');
    const big = await wat('(module (memory (export "memory") 64) (func (export "_start")))');
    await assert.rejects(new PreparedModuleCache(cacheDir).prepare(big, { memoryBytes: 2 * MIB }), MemoryCapError);
    assert.throws(() => readdirSync(cacheDir), /ENOENT/);
  });

  test('a cache directory that cannot be made costs only the walk', async () => {
    const blocked = join(dir, 'a-file');
    writeFileSync(blocked, 'not a directory');
    const prepared = await new PreparedModuleCache(join(blocked, 'cache')).prepare(grow, { memoryBytes: 2 * MIB });
    assert.deepEqual(prepared.bytes, (await prepareModule(grow, { memoryBytes: 2 * MIB })).bytes);
  });

  test('a module compiled from the cache still has its memory capped', async () => {
    const cacheDir = join(dir, 'run');
    for (const round of ['instrumented now', 'read back']) {
      const pool = new SandboxPool({ size: 1, preparedCache: new PreparedModuleCache(cacheDir) });
      try {
        const module = await pool.compile(grow, { memoryBytes: 2 * MIB });
        const { result } = await runToEnd(pool, module);
        assert.deepEqual(result.outcome, { kind: 'exit', code: 0 }, `${round}: growing past the 2 MiB cap was refused`);
      } finally {
        await pool.close();
      }
    }
    assert.equal(readdirSync(cacheDir).length, 1);
  });
});
