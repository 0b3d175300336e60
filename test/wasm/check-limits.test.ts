/**
 * The caps on what a module declares (src/wasm/module-limits.ts): each is checked at its value, where a
 * module passes every check, and one past it, where it is refused with its own code and a message naming
 * the count found, the cap and what to do. Real toolchains' output passes all of them; decoding a module
 * far past them stays cheap.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkModule, formatLimit, instrumentModule, LIMIT_CODES, MODULE_LIMIT_INFO, MODULE_LIMITS, moduleLimitRows,
  type ModuleLimitName,
} from '../../src/wasm/index.js';
import { encodeName, encodeU32 } from '../../src/wasm/encode.js';
import { FUNCTION_MODULE_RULES } from '../../src/package/module-rules.js';
import { FIXTURES, REPO_ROOT } from '../helpers/paths.js';
import { wat } from '../helpers/wat.js';

type Bytes = Uint8Array | readonly number[];

const join8 = (parts: Bytes[]): Uint8Array => {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** `entry` n times after the vector count, built without an array element per byte. */
function repeated(n: number, entry: Bytes): Uint8Array {
  const count = encodeU32(n);
  const out = new Uint8Array(count.length + n * entry.length);
  out.set(count);
  for (let i = 0; i < n; i++) out.set(entry, count.length + i * entry.length);
  return out;
}

const vector = (entries: Bytes[]): Uint8Array => join8([encodeU32(entries.length), ...entries]);
const section = (id: number, content: Bytes): Uint8Array => join8([[id], encodeU32(content.length), content]);
const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
const EMPTY_BODY = [0x02, 0x00, 0x0b];
const VOID = [0x60, 0x00, 0x00];

interface Parts {
  types?: Uint8Array;
  imports?: { content: Uint8Array; functions: number };
  functions?: Uint8Array;
  tables?: Uint8Array;
  globals?: Uint8Array;
  exports?: Uint8Array;
  elements?: Uint8Array;
  code?: Uint8Array;
  data?: Uint8Array;
  /** A custom section of this many content bytes at the end. */
  padding?: number;
}

/**
 * A function package (type 0 is `() -> ()`, `_start` is the first defined function, one memory) with
 * some sections replaced.
 */
function packageModule(parts: Parts): Uint8Array {
  const start = parts.imports?.functions ?? 0;
  const out: Uint8Array[] = [
    new Uint8Array(HEADER),
    section(1, parts.types ?? vector([VOID])),
  ];
  if (parts.imports) out.push(section(2, parts.imports.content));
  out.push(section(3, parts.functions ?? vector([[0]])));
  if (parts.tables) out.push(section(4, parts.tables));
  out.push(section(5, vector([[0x00, 0x01]])));
  if (parts.globals) out.push(section(6, parts.globals));
  out.push(section(7, parts.exports ?? vector([[...encodeName('_start'), 0x00, ...encodeU32(start)], [...encodeName('memory'), 0x02, 0]])));
  if (parts.elements) out.push(section(9, parts.elements));
  out.push(section(10, parts.code ?? vector([EMPTY_BODY])));
  if (parts.data) out.push(section(11, parts.data));
  if (parts.padding !== undefined) {
    const name = encodeName('pad');
    const size = encodeU32(name.length + parts.padding);
    const pad = new Uint8Array(1 + size.length + name.length + parts.padding);
    pad.set([0, ...size, ...name]);
    out.push(pad);
  }
  return join8(out);
}

/** For each cap, a package that declares exactly `n` of what the cap counts. */
const BUILDERS: Record<ModuleLimitName, (n: number) => Uint8Array> = {
  moduleBytes: (n) => {
    const base = packageModule({ padding: 0 }).length;
    // The custom section's size prefix grows from 1 to 4 bytes with the padding: 3 more bytes.
    return packageModule({ padding: n - base - 3 });
  },
  types: (n) => packageModule({ types: repeated(n, VOID) }),
  typeParams: (n) => packageModule({ types: vector([VOID, join8([[0x60], repeated(n, [0x7f]), [0x00]])]) }),
  typeResults: (n) => packageModule({ types: vector([VOID, join8([[0x60, 0x00], repeated(n, [0x7f])])]) }),
  imports: (n) => packageModule({
    types: vector([VOID, [0x60, 0x01, 0x7f, 0x00]]),
    imports: { content: repeated(n, [...encodeName('wasi_snapshot_preview1'), ...encodeName('proc_exit'), 0x00, 0x01]), functions: n },
  }),
  exports: (n) => packageModule({
    exports: vector([
      [...encodeName('_start'), 0x00, 0], [...encodeName('memory'), 0x02, 0],
      ...Array.from({ length: n - 2 }, (_, i) => [...encodeName(`e${i}`), 0x00, 0]),
    ]),
  }),
  functions: (n) => packageModule({ functions: repeated(n, [0]), code: repeated(n, EMPTY_BODY) }),
  tables: (n) => packageModule({ tables: repeated(n, [0x70, 0x00, 0x00]) }),
  tableElements: (n) => packageModule({ tables: vector([[0x70, 0x00, ...encodeU32(n)]]) }),
  globals: (n) => packageModule({ globals: repeated(n, [0x7f, 0x00, 0x41, 0x00, 0x0b]) }),
  elementSegments: (n) => packageModule({ elements: repeated(n, [0x01, 0x00, 0x00]) }),
  elementEntries: (n) => packageModule({ elements: vector([join8([[0x01, 0x00], repeated(n, [0x00])])]) }),
  dataSegments: (n) => packageModule({ data: repeated(n, [0x01, 0x00]) }),
  dataBytes: (n) => packageModule({ data: vector([join8([[0x01], encodeU32(n), new Uint8Array(n)])]) }),
  functionLocals: (n) => packageModule({ code: vector([join8([encodeU32(encodeU32(n).length + 3), [0x01], encodeU32(n), [0x7f, 0x0b]])]) }),
  functionBodyBytes: (n) => {
    const body = new Uint8Array(n).fill(0x01); // nop
    body[0] = 0x00; // no locals
    body[n - 1] = 0x0b;
    return packageModule({ code: vector([join8([encodeU32(n), body])]) });
  },
};

describe('each cap: a module at it passes every check, one past it is refused with its code', () => {
  for (const name of Object.keys(BUILDERS) as ModuleLimitName[]) {
    const cap = MODULE_LIMITS[name];
    test(`${LIMIT_CODES[name]}: ${MODULE_LIMIT_INFO[name].label}, at most ${formatLimit(name, cap)}`, () => {
      const at = BUILDERS[name](cap);
      if (name === 'moduleBytes') assert.equal(at.length, cap);
      assert.deepEqual(checkModule(at, FUNCTION_MODULE_RULES).problems, [], 'at the cap');

      const past = checkModule(BUILDERS[name](cap + 1), FUNCTION_MODULE_RULES);
      // One problem: a section left undecoded past a cap does not make the rest look malformed.
      assert.deepEqual(past.problems.map((p) => p.code), [LIMIT_CODES[name]], JSON.stringify(past.problems));
      const { message } = past.problems[0];
      assert.ok(message.includes((cap + 1).toLocaleString('en-US')), `names the count found: ${message}`);
      assert.ok(message.includes(`the cap is ${formatLimit(name, cap)}`), `names the cap: ${message}`);
      assert.ok(message.endsWith(MODULE_LIMIT_INFO[name].advice), `says what to do: ${message}`);
    });
  }

  test('a per-item cap names the first item past it and counts the others', () => {
    const tables = vector(Array.from({ length: 3 }, (_, i) => [0x70, 0x00, ...encodeU32(i === 0 ? 1 : MODULE_LIMITS.tableElements + i)]));
    const [problem] = checkModule(packageModule({ tables })).problems;
    assert.equal(problem.code, 'limit.table-elements');
    assert.match(problem.message, /table 1 starts with 100,001 elements; the cap is 100,000 \(and 1 more table is past it\)/);
  });

  test('imports count toward the function cap with the functions defined', () => {
    const limits = { ...MODULE_LIMITS, functions: 3 };
    const imports = { content: repeated(2, [...encodeName('wasi_snapshot_preview1'), ...encodeName('proc_exit'), 0x00, 0x01]), functions: 2 };
    const types = vector([VOID, [0x60, 0x01, 0x7f, 0x00]]);
    const three = packageModule({ types, imports });
    assert.deepEqual(checkModule(three, { ...FUNCTION_MODULE_RULES, limits }).problems, []);
    const four = packageModule({ types, imports, functions: repeated(2, [0]), code: repeated(2, EMPTY_BODY) });
    assert.deepEqual(checkModule(four, { ...FUNCTION_MODULE_RULES, limits }).problems.map((p) => p.code), ['limit.functions']);
  });

  test('a type section left undecoded past a cap does not make later uses of its types look wrong', () => {
    const types = vector([VOID, join8([[0x60], repeated(MODULE_LIMITS.typeParams + 1, [0x7f]), [0x00]]), [0x60, 0x01, 0x7f, 0x00]]);
    const imports = { content: vector([[...encodeName('wasi_snapshot_preview1'), ...encodeName('proc_exit'), 0x00, 0x02]]), functions: 1 };
    const module = packageModule({ types, imports, functions: vector([[0], [2]]), code: vector([EMPTY_BODY, EMPTY_BODY]) });
    assert.deepEqual(checkModule(module, FUNCTION_MODULE_RULES).problems.map((p) => p.code), ['limit.params']);
  });

  test('a section past a cap is not decoded, so what it held is not reported missing', () => {
    const exports = repeated(MODULE_LIMITS.exports + 1, [...encodeName(''), 0x00, 0]);
    assert.deepEqual(checkModule(packageModule({ exports }), FUNCTION_MODULE_RULES).problems.map((p) => p.code), ['limit.exports']);
  });
});

describe('the caps are one table the README can be built from', () => {
  test('every cap has a code, a label, a reference and advice, and the codes are distinct', () => {
    const rows = moduleLimitRows();
    assert.deepEqual(rows.map((r) => r.name).sort(), Object.keys(MODULE_LIMITS).sort());
    assert.deepEqual(rows.map((r) => r.code).sort(), Object.values(LIMIT_CODES).sort());
    assert.equal(new Set(rows.map((r) => r.code)).size, rows.length);
    for (const row of rows) {
      assert.match(row.code, /^limit\.[a-z-]+$/);
      for (const text of [row.label, row.value, row.reference]) assert.ok(text.length > 0, row.name);
    }
    assert.equal(rows.find((r) => r.name === 'tableElements')?.value, '100,000');
    assert.equal(rows.find((r) => r.name === 'moduleBytes')?.value, '64 MiB');
  });
});

function wasmFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return wasmFiles(path);
    return name.endsWith('.wasm') ? [path] : [];
  });
}

describe('real toolchains pass comfortably', () => {
  const files = [...wasmFiles(FIXTURES), ...wasmFiles(join(REPO_ROOT, 'examples'))];

  test('the committed C, AssemblyScript and example modules are within every cap, checked and rewritten', () => {
    assert.ok(files.length >= 20, `found ${files.length} modules`);
    for (const file of files) {
      const bytes = new Uint8Array(readFileSync(file));
      assert.deepEqual(checkModule(bytes).problems.filter((p) => p.code.startsWith('limit.')), [], file);
      // A tenth of every cap: the real modules are nowhere near them.
      const tight = Object.fromEntries(Object.entries(MODULE_LIMITS).map(([k, v]) => [k, Math.floor(v / 10)]));
      assert.deepEqual(checkModule(bytes, { imports: null, requireFunctionExports: false, limits: tight as never }).problems, [], file);
      assert.doesNotThrow(() => instrumentModule(bytes, { maxMemoryBytes: 64 * 1024 * 1024 }), file);
    }
  });

  test('the WAT fixtures report no limit problem, whatever else they break', async () => {
    for (const name of readdirSync(join(FIXTURES, 'wat'))) {
      const bytes = await wat(readFileSync(join(FIXTURES, 'wat', name), 'utf8'), name);
      assert.deepEqual(checkModule(bytes, FUNCTION_MODULE_RULES).problems.filter((p) => p.code.startsWith('limit.')), [], name);
    }
  });
});

describe('decoding a module far past the caps stays cheap', () => {
  /** Heap growth while `run` runs, in MiB (what the module's checks keep alive, plus garbage not yet collected). */
  function heapGrowthMiB(run: () => void): number {
    const before = process.memoryUsage().heapUsed;
    run();
    return (process.memoryUsage().heapUsed - before) / (1024 * 1024);
  }

  test('15,000,000 functions in 57 MB: one limit.functions, and no array of them is built', () => {
    const n = 15_000_000;
    const bytes = packageModule({ functions: repeated(n, [0]), code: repeated(n, EMPTY_BODY) });
    assert.ok(bytes.length < MODULE_LIMITS.moduleBytes);
    let codes: string[] = [];
    // Before the decoder stopped at the cap, checking this held 1.9 GB of heap.
    const grown = heapGrowthMiB(() => { codes = checkModule(bytes, FUNCTION_MODULE_RULES).problems.map((p) => p.code); });
    assert.deepEqual(codes, ['limit.functions']);
    assert.ok(grown < 128, `the heap grew by ${grown.toFixed(0)} MiB`);
  });

  test('20,000,000 memories are one feature.multi-memory problem naming the count', () => {
    const bytes = join8([HEADER, section(5, repeated(20_000_000, [0x00, 0x00]))]);
    let problems: Array<{ code: string; message: string }> = [];
    const grown = heapGrowthMiB(() => { problems = checkModule(bytes).problems; });
    assert.deepEqual(problems.map((p) => p.code), ['feature.multi-memory']);
    assert.match(problems[0].message, /20000000 memories are declared/);
    assert.ok(grown < 128, `the heap grew by ${grown.toFixed(0)} MiB`);
  });

  test('a broken body in each of 100,000 functions keeps 10 notes and counts the rest', () => {
    const n = 100_000;
    const bytes = packageModule({ functions: repeated(n, [0]), code: repeated(n, [0x02, 0x00, 0xff]) });
    const malformed = checkModule(bytes, FUNCTION_MODULE_RULES).problems.filter((p) => p.code === 'format.malformed');
    assert.equal(malformed.length, 11);
    assert.match(malformed[10].message, new RegExp(`has ${n - 10} more malformed parts`));
  });
});
