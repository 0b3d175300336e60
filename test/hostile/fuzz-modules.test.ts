/**
 * Issue 11's fuzz target: hostile modules through the whole path a package takes (check, then load,
 * discovery and a call on one FunctionHost, through its public API), asserting that the test process
 * survives every case with bounded memory, and that what the caps promise holds:
 * - mutated modules: the committed guests (C, AssemblyScript, the example, a WAT guest) with random byte
 *   edits, among them maximal LEB128 numbers dropped anywhere (counts, sizes, limits);
 * - generated modules: a WAT guest with random tables (some past the caps), globals, element and data
 *   segments, and a call that grows tables and memory in loops, fills and initializes them. Each is run
 *   against a model of the spec with the caps: the upload refuses exactly what is past a cap, an
 *   out-of-bounds segment traps at instantiation, and the call answers the sizes the model predicts
 *   (no table past min(declared maximum, 100,000), no memory past the host's cap) or traps where it does.
 *
 * Bounded: a few hundred cases in all, each property stopped after 25 s. Seeded: set SUBAKO_FUZZ_SEED to
 * replay a run; the seed of every run is printed, and fast-check prints the seed and path of a failure.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { SubakoError } from '../../src/errors.js';
import { FunctionHost } from '../../src/function/host.js';
import { checkFunctionModule } from '../../src/package/module-rules.js';
import { MODULE_LIMITS, PAGE_BYTES, parseModule } from '../../src/wasm/index.js';
import { fixture, REPO_ROOT } from '../helpers/paths.js';
import { wat } from '../helpers/wat.js';
import { GUEST_DATA_START, mcpGuest, mcpGuestWat } from '../helpers/wat-mcp-guest.js';
import { Scratch } from '../function/guests.js';

const SEED = process.env.SUBAKO_FUZZ_SEED ? Number(process.env.SUBAKO_FUZZ_SEED) : Math.floor(Math.random() * 0x7fffffff);
const TIME_LIMIT_MS = 25_000;
const MEMORY_CAP_BYTES = 64 * 1024 * 1024;
const CAP_PAGES = MEMORY_CAP_BYTES / PAGE_BYTES;
const { tables: TABLE_CAP, tableElements: ELEMENT_CAP, globals: GLOBAL_CAP } = MODULE_LIMITS;
/** Headroom over the process's size before the first case: two workers' guests are capped far below it. */
const RSS_HEADROOM = 1024 * 1024 * 1024;
const HEAP_LIMIT = 1024 * 1024 * 1024;

const scratch = new Scratch();
let host: FunctionHost;
let rssLimit = 0;

before(() => {
  host = new FunctionHost({
    poolSize: 2,
    limits: { memoryBytes: MEMORY_CAP_BYTES, callTimeoutMs: 2_000, discoveryTimeoutMs: 2_000, exitGraceMs: 500 },
  });
  rssLimit = process.memoryUsage().rss + RSS_HEADROOM;
});
after(async () => {
  await host.close();
  scratch.cleanup();
});

type Run =
  | { stage: 'refused'; codes: string[] }
  | { stage: 'not-loaded'; code: string }
  | { stage: 'not-discovered'; codes: string[] }
  | { stage: 'called'; status: string; crash: string | null; text: string };

function assertBounded(where: string): void {
  const { rss, heapUsed } = process.memoryUsage();
  assert.ok(rss < rssLimit, `${where}: the process holds ${(rss / 2 ** 20).toFixed(0)} MiB, more than ${(rssLimit / 2 ** 20).toFixed(0)} MiB`);
  assert.ok(heapUsed < HEAP_LIMIT, `${where}: the heap holds ${(heapUsed / 2 ** 20).toFixed(0)} MiB`);
}

/** check, then load, discover and call the first tool with `{}`, stopping where the package is refused. */
async function throughTheHost(bytes: Uint8Array): Promise<Run> {
  const check = checkFunctionModule(bytes);
  assertBounded('after the check');
  if (!check.ok) return { stage: 'refused', codes: check.problems.map((p) => p.code) };
  let loaded;
  try {
    loaded = await host.load({ name: 'fuzzed', version: '1.0.0', moduleBytes: bytes, assetsDir: null });
  } catch (error) {
    assert.ok(error instanceof SubakoError, `load threw ${String(error)}`);
    // The check and the rewrite apply the same caps: what one accepts, the other does not refuse.
    assert.doesNotMatch(error.code, /^limit\./, error.message);
    return { stage: 'not-loaded', code: error.code };
  }
  const discovery = await host.discover(loaded);
  assertBounded('after discovery');
  if (!discovery.ok || !discovery.tools?.length) return { stage: 'not-discovered', codes: discovery.problems.map((p) => p.code) };
  const outcome = await host.call(loaded, discovery.tools[0].name, {}, { tmpDir: scratch.dir('tmp') });
  assertBounded('after the call');
  const text = (outcome.result?.content ?? []).map((b) => ('text' in b ? b.text : '')).join('');
  return { stage: 'called', status: outcome.status, crash: outcome.crash?.reason ?? null, text };
}

async function assertProperty<T>(arbitrary: fc.Arbitrary<T>, numRuns: number, predicate: (value: T) => Promise<void>): Promise<void> {
  try {
    await fc.assert(fc.asyncProperty(arbitrary, predicate), {
      seed: SEED, numRuns, plugins: [fc.interruptAfterTimeLimit(TIME_LIMIT_MS)],
    });
  } catch (error) {
    throw new Error(`fuzz failure (replay with SUBAKO_FUZZ_SEED=${SEED}): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Mutated modules

type Edit = { at: number; inData: boolean } & (
  | { kind: 'set'; value: number }
  | { kind: 'insert'; values: number[] }
  | { kind: 'delete'; length: number }
  | { kind: 'huge-number' });

const anywhere = { at: fc.nat(), inData: fc.constant(false) };
const byte = fc.integer({ min: 0, max: 255 });
/** Anything anywhere, or (as often) a changed byte of the data, which keeps most modules valid. */
const edit: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ at: fc.nat(), inData: fc.constant(true), kind: fc.constant('set' as const), value: byte }) },
  fc.record({ ...anywhere, kind: fc.constant('set' as const), value: byte }),
  fc.record({ ...anywhere, kind: fc.constant('insert' as const), values: fc.array(byte, { minLength: 1, maxLength: 8 }) }),
  fc.record({ ...anywhere, kind: fc.constant('delete' as const), length: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ ...anywhere, kind: fc.constant('huge-number' as const) }),
);

/** Where the data section's content starts (or the header's end): edits after it mostly keep a module valid. */
function dataStart(module: Uint8Array): number {
  return parseModule(module).module.sections.find((s) => s.id === 11)?.contentStart ?? 8;
}

function mutate(original: Uint8Array, edits: Edit[]): Uint8Array {
  const bytes = [...original];
  const data = dataStart(original);
  for (const e of edits) {
    // Past the 8-byte header, or in the data section, where a guest's JSON answers lie: a changed byte
    // there keeps the module valid, so the case goes on to discovery and a call.
    const from = e.inData ? Math.min(data, bytes.length - 1) : 8;
    const at = from + (e.at % Math.max(1, bytes.length - from));
    if (e.kind === 'set') bytes[at] = e.value;
    else if (e.kind === 'insert') bytes.splice(at, 0, ...e.values);
    else if (e.kind === 'delete') bytes.splice(at, e.length);
    else bytes.splice(at, 1, 0xff, 0xff, 0xff, 0xff, 0x0f); // the largest u32, where one byte was
  }
  return new Uint8Array(bytes);
}

describe('mutated guests', () => {
  test('check, load, discovery and a call survive them with bounded memory', async (t) => {
    t.diagnostic(`seed ${SEED}`);
    const seeds: Array<[string, Uint8Array]> = [
      ['C echo', readFileSync(fixture('c', 'mcp', 'echo.wasm'))],
      ['C abi_probe', readFileSync(fixture('c', 'mcp', 'abi_probe.wasm'))],
      ['the greet example', readFileSync(join(REPO_ROOT, 'examples', 'packages', 'greet', 'module.wasm'))],
      ['AssemblyScript mcp-shout', readFileSync(fixture('as', 'mcp-shout.wasm'))],
      ['a WAT table grower', await mcpGuest(render(growerSpec()).parts)],
    ];
    const stages = new Map<string, number>();
    const arbitrary = fc.tuple(fc.integer({ min: 0, max: seeds.length - 1 }), fc.array(edit, { minLength: 1, maxLength: 4 }));
    await assertProperty(arbitrary, 400, async ([which, edits]) => {
      const run = await throughTheHost(mutate(seeds[which][1], edits));
      stages.set(run.stage, (stages.get(run.stage) ?? 0) + 1);
    });
    t.diagnostic(`stages reached: ${JSON.stringify(Object.fromEntries(stages))}`);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Generated modules, and the model they are judged by

interface TableSpec { element: 'funcref' | 'externref'; initial: number; max: number | null }
interface ElemSpec { table: number; offset: number; count: number; passive: boolean }
interface DataSpec { offset: number; size: number; passive: boolean }
type Op =
  | { kind: 'tableGrow'; table: number; delta: number; times: number }
  | { kind: 'memoryGrow'; delta: number; times: number }
  | { kind: 'tableFill'; table: number; offset: number; count: number }
  | { kind: 'tableInit'; table: number; elem: number; offset: number; count: number }
  | { kind: 'memoryFill'; offset: number; count: number }
  | { kind: 'busy'; iterations: number };

interface GuestSpec {
  memoryPages: number;
  tables: TableSpec[];
  globals: number;
  elems: ElemSpec[];
  datas: DataSpec[];
  ops: Op[];
}

const u32 = 2 ** 32;
const tableSize = fc.oneof(
  { weight: 20, arbitrary: fc.nat(64) },
  { weight: 4, arbitrary: fc.constantFrom(ELEMENT_CAP - 1, ELEMENT_CAP) },
  { weight: 1, arbitrary: fc.constantFrom(ELEMENT_CAP + 1, 10_000_000, u32 - 1) },
);
const tableSpec: fc.Arbitrary<TableSpec> = fc.record({
  element: fc.constantFrom('funcref' as const, 'externref' as const),
  initial: tableSize,
  maxExtra: fc.option(fc.oneof(fc.nat(64), fc.constantFrom(ELEMENT_CAP, 4_000_000_000)), { nil: null }),
}).map(({ element, initial, maxExtra }) => ({ element, initial, max: maxExtra === null ? null : Math.min(u32 - 1, initial + maxExtra) }));

const delta = fc.oneof(fc.nat(16), fc.constantFrom(1_000, 10_000, 65_536, ELEMENT_CAP, 2 ** 31, u32 - 1));
const pagesDelta = fc.oneof(fc.nat(4), fc.constantFrom(16, 256, CAP_PAGES, 65_536, u32 - 1));
const index = fc.nat(15);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('tableGrow' as const), table: index, delta, times: fc.integer({ min: 1, max: 300 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('memoryGrow' as const), delta: pagesDelta, times: fc.integer({ min: 1, max: 20 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tableFill' as const), table: index, offset: fc.nat(128), count: fc.oneof(fc.nat(64), fc.constant(ELEMENT_CAP)) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tableInit' as const), table: index, elem: index, offset: fc.nat(64), count: fc.nat(8) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('memoryFill' as const), offset: fc.nat(4 * PAGE_BYTES), count: fc.nat(2 * PAGE_BYTES) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('busy' as const), iterations: fc.nat(200_000) }) },
);

const guestSpec: fc.Arbitrary<GuestSpec> = fc.record({
  memoryPages: fc.integer({ min: 3, max: 6 }),
  tables: fc.oneof({ weight: 8, arbitrary: fc.array(tableSpec, { maxLength: TABLE_CAP }) }, { weight: 1, arbitrary: fc.array(tableSpec, { minLength: TABLE_CAP + 1, maxLength: 14 }) }),
  globals: fc.oneof({ weight: 8, arbitrary: fc.nat(24) }, { weight: 1, arbitrary: fc.constant(GLOBAL_CAP + 1) }),
  elems: fc.array(fc.record({ table: index, offset: fc.oneof(fc.nat(4), fc.nat(64)), count: fc.nat(8), passive: fc.boolean() }), { maxLength: 4 }),
  datas: fc.array(fc.record({ offset: fc.oneof(fc.nat(PAGE_BYTES), fc.nat(4 * PAGE_BYTES)), size: fc.nat(4096), passive: fc.boolean() }), { maxLength: 6 }),
  ops: fc.array(op, { maxLength: 6 }),
});

/** A guest that grows every table it has up to 100,000 slots: the mutation seed. */
function growerSpec(): GuestSpec {
  return {
    memoryPages: 2, globals: 0, elems: [], datas: [],
    tables: [{ element: 'funcref', initial: 1, max: null }, { element: 'externref', initial: 0, max: null }],
    ops: [{ kind: 'tableGrow', table: 0, delta: 10_000, times: 20 }, { kind: 'tableGrow', table: 1, delta: 65_536, times: 3 }],
  };
}

const funcTables = (spec: GuestSpec): number[] => spec.tables.flatMap((t, i) => (t.element === 'funcref' ? [i] : []));

/** Segments and ops name tables and segments by a random number; these pick real ones (or none). */
function resolve(spec: GuestSpec): GuestSpec {
  const funcs = funcTables(spec);
  const elems = funcs.length === 0 ? [] : spec.elems.map((e) => ({ ...e, table: funcs[e.table % funcs.length] }));
  const passive = elems.flatMap((e, i) => (e.passive ? [i] : []));
  const ops = spec.ops.flatMap((o): Op[] => {
    if (o.kind === 'tableGrow' || o.kind === 'tableFill') return spec.tables.length === 0 ? [] : [{ ...o, table: o.table % spec.tables.length }];
    if (o.kind === 'tableInit') {
      return funcs.length === 0 || passive.length === 0 ? [] : [{ ...o, table: funcs[o.table % funcs.length], elem: passive[o.elem % passive.length] }];
    }
    return [o];
  });
  return { ...spec, elems, ops };
}

const watBytes = (size: number, salt: number): string =>
  Array.from({ length: size }, (_, i) => `\\${((i * 31 + salt) & 0xff).toString(16).padStart(2, '0')}`).join('');
const i32 = (n: number): string => String(n | 0);

function render(raw: GuestSpec): { spec: GuestSpec; parts: Parameters<typeof mcpGuestWat>[0] } {
  const spec = resolve(raw);
  const nullOf = (table: number): string => (spec.tables[table].element === 'funcref' ? 'func' : 'extern');
  const fields = [
    '(func $nop)',
    ...spec.tables.map((t, i) => `(table $t${i} ${t.initial}${t.max === null ? '' : ` ${t.max}`} ${t.element})`),
    ...Array.from({ length: spec.globals }, (_, i) => `(global $g${i} (mut i32) (i32.const ${i}))`),
    ...spec.elems.map((e, i) => {
      const funcs = Array.from({ length: e.count }, () => '$nop').join(' ');
      return e.passive ? `(elem $e${i} func ${funcs})` : `(elem $e${i} (table $t${e.table}) (i32.const ${e.offset}) func ${funcs})`;
    }),
    ...spec.datas.map((d, i) => (d.passive
      ? `(data $d${i} "${watBytes(d.size, i)}")`
      : `(data $d${i} (i32.const ${GUEST_DATA_START + d.offset}) "${watBytes(d.size, i)}")`)),
  ].join('\n  ');
  const space = '(call $emitChar (i32.const 32))';
  const body = spec.ops.map((o, k) => {
    switch (o.kind) {
      case 'tableGrow':
      case 'memoryGrow': {
        const grow = o.kind === 'tableGrow'
          ? `(table.grow $t${o.table} (ref.null ${nullOf(o.table)}) (i32.const ${i32(o.delta)}))`
          : `(memory.grow (i32.const ${i32(o.delta)}))`;
        const size = o.kind === 'tableGrow' ? `(table.size $t${o.table})` : '(memory.size)';
        return `(local.set $i (i32.const 0))
    (block $done${k} (loop $again${k}
      (br_if $done${k} (i32.eq ${grow} (i32.const -1)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again${k} (i32.lt_u (local.get $i) (i32.const ${o.times})))))
    (call $emitNum ${size}) ${space}`;
      }
      case 'tableFill':
        return `(table.fill $t${o.table} (i32.const ${o.offset}) (ref.null ${nullOf(o.table)}) (i32.const ${o.count})) ${space}`;
      case 'tableInit':
        return `(table.init $t${o.table} $e${o.elem} (i32.const ${o.offset}) (i32.const 0) (i32.const ${o.count})) ${space}`;
      case 'memoryFill':
        return `(memory.fill (i32.const ${GUEST_DATA_START + o.offset}) (i32.const 7) (i32.const ${o.count})) ${space}`;
      case 'busy':
        return `(local.set $i (i32.const 0))
    (block $done${k} (loop $again${k}
      (br_if $done${k} (i32.ge_u (local.get $i) (i32.const ${o.iterations})))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $again${k})))
    (call $emitNum (local.get $i)) ${space}`;
    }
  }).join('\n    ');
  return { spec, parts: { memoryPages: spec.memoryPages, fields, work: `(local $i i32)\n    ${body}\n    (call $emitChar (i32.const 46))` } };
}

type Expected =
  | { stage: 'refused'; code: string }
  | { stage: 'instantiation-trap' }
  | { stage: 'called'; text: string }
  | { stage: 'trap'; memoryGrowFailed: boolean };

/** What the spec says happens, with every table capped at min(max, 100,000) and memory at the host's cap. */
function model(spec: GuestSpec): Expected {
  if (spec.tables.length > TABLE_CAP) return { stage: 'refused', code: 'limit.tables' };
  if (spec.tables.some((t) => t.initial > ELEMENT_CAP)) return { stage: 'refused', code: 'limit.table-elements' };
  if (spec.globals > GLOBAL_CAP) return { stage: 'refused', code: 'limit.globals' };
  const sizes = spec.tables.map((t) => t.initial);
  const maxima = spec.tables.map((t) => Math.min(t.max ?? ELEMENT_CAP, ELEMENT_CAP));
  const memoryBytes = spec.memoryPages * PAGE_BYTES;
  // Active segments are written in order at instantiation; one out of bounds traps it.
  for (const e of spec.elems) if (!e.passive && e.offset + e.count > sizes[e.table]) return { stage: 'instantiation-trap' };
  for (const d of spec.datas) if (!d.passive && GUEST_DATA_START + d.offset + d.size > memoryBytes) return { stage: 'instantiation-trap' };
  let pages = spec.memoryPages;
  let memoryGrowFailed = false;
  const out: string[] = [];
  const trap = (): Expected => ({ stage: 'trap', memoryGrowFailed });
  for (const o of spec.ops) {
    switch (o.kind) {
      case 'tableGrow':
        for (let i = 0; i < o.times; i++) {
          if (sizes[o.table] + (o.delta >>> 0) > maxima[o.table]) break;
          sizes[o.table] += o.delta >>> 0;
        }
        out.push(`${sizes[o.table]} `);
        break;
      case 'memoryGrow':
        for (let i = 0; i < o.times; i++) {
          if (pages + (o.delta >>> 0) > CAP_PAGES) {
            memoryGrowFailed = true;
            break;
          }
          pages += o.delta >>> 0;
        }
        out.push(`${pages} `);
        break;
      case 'tableFill':
        if (o.offset + o.count > sizes[o.table]) return trap();
        out.push(' ');
        break;
      case 'tableInit':
        if (o.offset + o.count > sizes[o.table] || o.count > spec.elems[o.elem].count) return trap();
        out.push(' ');
        break;
      case 'memoryFill':
        if (GUEST_DATA_START + o.offset + o.count > pages * PAGE_BYTES) return trap();
        out.push(' ');
        break;
      case 'busy':
        out.push(`${o.iterations} `);
        break;
    }
  }
  return { stage: 'called', text: `${out.join('')}.` };
}

describe('generated guests', () => {
  test('each does what the spec and the caps say, and the host survives it with bounded memory', async (t) => {
    t.diagnostic(`seed ${SEED}`);
    const stages = new Map<string, number>();
    await assertProperty(guestSpec, 300, async (raw) => {
      const { spec, parts } = render(raw);
      const expected = model(spec);
      const run = await throughTheHost(await wat(mcpGuestWat(parts), 'generated.wat'));
      stages.set(expected.stage, (stages.get(expected.stage) ?? 0) + 1);
      const context = `${JSON.stringify(spec)}\nran: ${JSON.stringify(run)}`;
      switch (expected.stage) {
        case 'refused':
          assert.equal(run.stage, 'refused', context);
          assert.ok(run.stage === 'refused' && run.codes.includes(expected.code), context);
          break;
        case 'instantiation-trap':
          assert.deepEqual(run, { stage: 'not-discovered', codes: ['discovery.crash.trap'] }, context);
          break;
        case 'called':
          assert.deepEqual(run, { stage: 'called', status: 'ok', crash: null, text: expected.text }, context);
          break;
        case 'trap':
          assert.equal(run.stage, 'called', context);
          assert.ok(run.stage === 'called' && run.status === 'crash', context);
          assert.equal(run.crash, expected.memoryGrowFailed ? 'out_of_memory' : 'trap', context);
          break;
      }
    });
    t.diagnostic(`cases by expected outcome: ${JSON.stringify(Object.fromEntries(stages))}`);
  });
});
