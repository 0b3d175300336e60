import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkModule, FORMAT_ONLY_RULES, GROW_FAILED_EXPORT, InstrumentError, instrumentModule, MemoryCapError, MODULE_LIMITS,
  ModuleLimitError, PAGE_BYTES, parseModule,
} from '../../src/wasm/index.js';
import { concatBytes, encodeU32 } from '../../src/wasm/encode.js';
import { FUNCTION_MODULE_RULES } from '../../src/package/module-rules.js';
import { wat } from '../helpers/wat.js';
import { builtFixture, HEADER } from './module-builder.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- exports are called as the WAT above defines them
type Exports = Record<string, any>;

async function run(bytes: Uint8Array, imports: WebAssembly.Imports = {}): Promise<Exports> {
  const { instance } = await WebAssembly.instantiate(bytes as Uint8Array<ArrayBuffer>, imports);
  return instance.exports as Exports;
}

const GROWER = `(module
  (import "host" "log" (func $log (param i32)))
  (memory (export "memory") 1)
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (table 1 funcref)
  (elem (i32.const 0) $grow_indirect)
  (func $grow (export "grow") (param i32) (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (call $log (local.get 0))
    (memory.grow (local.get 0)))
  (func $grow_indirect (param i32) (result i32) (memory.grow (local.get 0)))
  (func (export "grow_via_table") (param i32) (result i32) (call_indirect (param i32) (result i32) (local.get 0) (i32.const 0)))
  (func (export "size") (result i32) (memory.size)))`;

const pages = (exports: Exports): number => (exports.memory as WebAssembly.Memory).buffer.byteLength / PAGE_BYTES;
const capOf = (bytes: Uint8Array) => parseModule(bytes).module.memories[0];

describe('the memory maximum is rewritten to the cap', () => {
  test('a memory without a maximum gets the cap as its maximum', async () => {
    const out = instrumentModule(await wat(GROWER), { maxMemoryBytes: 4 * PAGE_BYTES });
    assert.deepEqual(capOf(out), { min: 1, max: 4, shared: false, is64: false });
  });

  test('a declared maximum below the cap is kept; one above it is lowered', async () => {
    const low = await wat('(module (memory 1 2) (func (export "_start")))');
    assert.equal(capOf(instrumentModule(low, { maxMemoryBytes: 8 * PAGE_BYTES })).max, 2);
    const high = await wat('(module (memory 1 100) (func (export "_start")))');
    assert.equal(capOf(instrumentModule(high, { maxMemoryBytes: 8 * PAGE_BYTES + 100 })).max, 8);
  });

  test('an initial size over the cap is a MemoryCapError with code out_of_memory', async () => {
    const big = await wat('(module (memory 10) (func (export "_start")))');
    assert.throws(() => instrumentModule(big, { maxMemoryBytes: 4 * PAGE_BYTES }), (error: unknown) => {
      assert.ok(error instanceof MemoryCapError);
      assert.equal(error.code, 'out_of_memory');
      assert.equal(error.initialPages, 10);
      assert.equal(error.capPages, 4);
      return true;
    });
  });

  test('an imported memory, a second memory, or a taken export name is an InstrumentError', async () => {
    const cases = [
      '(module (import "env" "memory" (memory 1)))',
      '(module (memory 1) (memory 1))',
      `(module (memory 1) (global (export "${GROW_FAILED_EXPORT}") i32 (i32.const 0)))`,
    ];
    for (const text of cases) {
      const bytes = await wat(text);
      assert.throws(() => instrumentModule(bytes, { maxMemoryBytes: PAGE_BYTES * 4 }), InstrumentError, text);
    }
  });

  test('malformed bytes are an InstrumentError, not a crash', () => {
    assert.throws(() => instrumentModule(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5]), { maxMemoryBytes: PAGE_BYTES }), InstrumentError);
  });
});

describe('a failed memory.grow is recorded in __subako_grow_failed', () => {
  test('growing past the cap returns -1, sets the global to 1, and the module still validates and runs', async () => {
    const logged: number[] = [];
    const out = instrumentModule(await wat(GROWER), { maxMemoryBytes: 3 * PAGE_BYTES });
    assert.equal(WebAssembly.validate(out), true);
    const exports = await run(out, { host: { log: (n: number) => logged.push(n) } });
    assert.equal(exports[GROW_FAILED_EXPORT].value, 0);
    assert.equal(exports.grow(1), 1);
    assert.equal(exports[GROW_FAILED_EXPORT].value, 0);
    assert.equal(exports.grow(5), -1);
    assert.equal(exports[GROW_FAILED_EXPORT].value, 1);
    assert.equal(exports.size(), 2);
    assert.equal(exports.grow_via_table(1), 2);
    assert.equal(pages(exports), 3);
    // The module's own indices did not move: its global, import and table still work.
    assert.equal(exports.calls.value, 2);
    assert.deepEqual(logged, [1, 5]);
  });

  test('a grow through the table past the cap is caught too', async () => {
    const exports = await run(instrumentModule(await wat(GROWER), { maxMemoryBytes: 2 * PAGE_BYTES }), { host: { log: () => {} } });
    assert.equal(exports.grow_via_table(2), -1);
    assert.equal(exports[GROW_FAILED_EXPORT].value, 1);
  });

  test('a module that never grows behaves the same, and its flag stays 0', async () => {
    const text = `(module (memory (export "memory") 1)
      (func (export "sum") (param i32 i32) (result i32) (i32.store (i32.const 0) (i32.add (local.get 0) (local.get 1))) (i32.load (i32.const 0))))`;
    const original = await run(await wat(text));
    const instrumented = await run(instrumentModule(await wat(text), { maxMemoryBytes: 2 * PAGE_BYTES }));
    assert.equal(instrumented.sum(2, 40), original.sum(2, 40));
    assert.equal(instrumented[GROW_FAILED_EXPORT].value, 0);
    assert.equal(pages(instrumented), pages(original));
  });

  test('a module without type, global or export sections gets them in the right order', async () => {
    const bytes = await wat('(module (memory 1) (func $grow (drop (memory.grow (i32.const 1)))) (start $grow))');
    const out = instrumentModule(bytes, { maxMemoryBytes: PAGE_BYTES });
    assert.equal(WebAssembly.validate(out), true);
    const exports = await run(out);
    assert.equal(exports[GROW_FAILED_EXPORT].value, 1); // the start function's grow already failed
  });

  test('a real C module stays a valid, accepted module after the rewrite', async () => {
    const bytes = await builtFixture('c', 'toolchain', 'wasi-command.wasm');
    const out = instrumentModule(bytes, { maxMemoryBytes: 16 * 1024 * 1024 });
    assert.equal(WebAssembly.validate(out), true);
    assert.deepEqual(checkModule(out, FUNCTION_MODULE_RULES).problems, []);
    const growSites = (module: Uint8Array): number => {
      let count = 0;
      parseModule(module, { visit: (instruction) => { if (instruction.byte === 0x40) count++; } });
      return count;
    };
    assert.ok(growSites(bytes) >= 1, 'wasi-libc grows memory in sbrk');
    assert.equal(growSites(out), 1, 'only the appended function still grows memory directly');
    assert.equal(parseModule(out).module.codes.length, parseModule(bytes).module.codes.length + 1);
    assert.ok(WebAssembly.Module.exports(new WebAssembly.Module(out)).some((e) => e.name === GROW_FAILED_EXPORT && e.kind === 'global'));
  });

  test('a module without a memory is returned unchanged', async () => {
    const bytes = await wat('(module (func (export "_start")))');
    assert.deepEqual(instrumentModule(bytes, { maxMemoryBytes: PAGE_BYTES }), bytes);
  });
});

describe('every table\'s maximum is lowered to the table cap, so table.grow past it returns -1', () => {
  const CAP = MODULE_LIMITS.tableElements;
  const tablesOf = (bytes: Uint8Array) => parseModule(bytes).module.tables.map((t) => [t.element, t.limits.min, t.limits.max]);
  const GROWABLE = `(module
    (table $f 1 funcref) (table $e 0 externref) (table $small 1 5 funcref) (table $big 2 4000000000 funcref)
    (func (export "grow") (param i32) (result i32) (table.grow $f (ref.null func) (local.get 0)))
    (func (export "growExtern") (param i32) (result i32) (table.grow $e (ref.null extern) (local.get 0)))
    (func (export "growBig") (param i32) (result i32) (table.grow $big (ref.null func) (local.get 0)))
    (func (export "size") (result i32) (table.size $f)))`;

  test('no maximum gets the cap, one above it is lowered, one below it is kept; with or without a memory', async () => {
    const bytes = await wat(GROWABLE);
    const expected = [['funcref', 1, CAP], ['externref', 0, CAP], ['funcref', 1, 5], ['funcref', 2, CAP]];
    assert.deepEqual(tablesOf(instrumentModule(bytes, { maxMemoryBytes: PAGE_BYTES })), expected);
    const withMemory = await wat(GROWABLE.replace('(module', '(module (memory 1)'));
    const out = instrumentModule(withMemory, { maxMemoryBytes: PAGE_BYTES });
    assert.deepEqual(tablesOf(out), expected);
    assert.equal(WebAssembly.validate(out), true);
  });

  test('growing past the cap returns -1 and leaves the table as it was; up to the cap it grows', async () => {
    const exports = await run(instrumentModule(await wat(GROWABLE), { maxMemoryBytes: PAGE_BYTES }));
    assert.equal(exports.grow(CAP), -1);
    assert.equal(exports.size(), 1);
    assert.equal(exports.grow(CAP - 1), 1);
    assert.equal(exports.size(), CAP);
    assert.equal(exports.grow(1), -1);
    assert.equal(exports.growExtern(CAP + 1), -1);
    assert.equal(exports.growBig(CAP), -1);
    assert.equal(exports.growBig(CAP - 2), 2);
  });

  test('the original module grows past the cap: the rewrite is what stops it', async () => {
    const exports = await run(await wat(GROWABLE));
    assert.equal(exports.grow(CAP), 1);
    assert.equal(exports.size(), CAP + 1);
  });

  test('asking for 2^32-1 slots at once fails without allocating them', async () => {
    const exports = await run(instrumentModule(await wat(GROWABLE), { maxMemoryBytes: PAGE_BYTES }));
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 100; i++) assert.equal(exports.grow(-1), -1);
    assert.ok(process.memoryUsage().rss - before < 64 * 1024 * 1024);
  });

  test('a module past any cap is a ModuleLimitError with the check\'s code, before anything is compiled', async () => {
    const cases: Array<[string, string, Partial<typeof MODULE_LIMITS>]> = [
      [`(module (table ${CAP + 1} funcref))`, 'limit.table-elements', {}],
      [`(module ${'(table 0 funcref) '.repeat(MODULE_LIMITS.tables + 1)})`, 'limit.tables', {}],
      ['(module (func) (func) (func))', 'limit.functions', { functions: 2 }],
    ];
    for (const [text, code, limits] of cases) {
      const bytes = await wat(text);
      assert.throws(() => instrumentModule(bytes, { maxMemoryBytes: PAGE_BYTES, limits: { ...MODULE_LIMITS, ...limits } }), (error: unknown) => {
        assert.ok(error instanceof ModuleLimitError, String(error));
        assert.equal(error.code, code);
        assert.equal(error.message, checkModule(bytes, { ...FORMAT_ONLY_RULES, limits: { ...MODULE_LIMITS, ...limits } }).problems[0].message);
        return true;
      }, text);
    }
  });

  test('an imported table is an InstrumentError: the host provides none', async () => {
    const bytes = await wat('(module (import "wasi_snapshot_preview1" "t" (table 1 funcref)))');
    assert.throws(() => instrumentModule(bytes, { maxMemoryBytes: PAGE_BYTES }), InstrumentError);
  });

  test('a module of 1,500,000 memory.grow sites is rewritten without an object per site', async () => {
    const sites = 1_500_000;
    const code = new Uint8Array(2 + 5 * sites);
    for (let i = 0; i < sites; i++) code.set([0x41, 0x00, 0x40, 0x00, 0x1a], 1 + 5 * i); // drop (memory.grow (i32.const 0))
    code[code.length - 1] = 0x0b;
    const body = concatBytes([encodeU32(code.length), code]);
    const module = concatBytes([HEADER, [1, 4, 1, 0x60, 0, 0], [3, 2, 1, 0], [5, 3, 1, 0, 1], [10], encodeU32(1 + body.length), [1], body]);
    const heapBefore = process.memoryUsage().heapUsed;
    const out = instrumentModule(module, { maxMemoryBytes: PAGE_BYTES });
    const grownMiB = (process.memoryUsage().heapUsed - heapBefore) / (1024 * 1024);
    // Before the rewrite wrote straight to one buffer, this held about 290 MB of heap.
    assert.ok(grownMiB < 64, `the heap grew by ${grownMiB.toFixed(0)} MiB`);
    assert.equal(WebAssembly.validate(out), true);
    let left = 0;
    parseModule(out, { visit: (instruction) => { if (instruction.byte === 0x40) left++; } });
    assert.equal(left, 1, 'only the appended function grows memory itself');
  });
});
