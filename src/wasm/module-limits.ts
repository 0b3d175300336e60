/**
 * The caps on what a module may declare, defined once. The upload checks refuse a module past any of them
 * (`check-limits.ts`), the decoder stops storing a section past them (so checking a hostile module cannot
 * exhaust the heap either), the rewrite before compiling enforces the table caps at run time
 * (`instrument.ts`), and the README's limits table is checked against `MODULE_LIMIT_INFO`.
 *
 * Why these numbers. A few bytes of a module can ask the engine for a lot: a table's size is one LEB128
 * number, and V8 allocates about 28 bytes per table slot at instantiation and about 55 per slot grown by
 * `table.grow` (measured on Node 20), so 40 tables of 10,000,000 slots in 294 bytes ended the process
 * ("Reached heap limit"). The engine's own
 * limits are no defence; they are the shared JS API limits, which V8 enforces in
 * `src/wasm/wasm-limits.h` (Node 20, V8 11.3): kV8MaxWasmTables 100,000, kV8MaxWasmTableSize 10,000,000,
 * kV8MaxWasmFunctions 1,000,000, kV8MaxWasmGlobals 1,000,000, kV8MaxWasmTypes 1,000,000,
 * kV8MaxWasmImports/Exports 100,000, kV8MaxWasmDataSegments 100,000, kV8MaxWasmFunctionLocals 50,000,
 * kV8MaxWasmFunctionSize 7,654,321, kV8MaxWasmModuleSize 1 GiB. wasmtime's pooling allocator, built for
 * untrusted multi-tenant modules, defaults to 1 table of at most 20,000 elements per module
 * (`PoolingAllocationConfig::max_tables_per_module`, `table_elements`; its source notes a C# debug build
 * with 10,000+), and wasmparser's `limits.rs` allows 100 tables and 100,000 element segments.
 *
 * Every cap sits far above what real toolchains emit. Measured: binaryen (a 9 MB C++ program built with
 * Emscripten) has 12,439 functions, one table of 13,801 elements, 1,474 exports, 476 data segments, 96
 * types, 2 globals and a largest function body of 226 KB; wasi-sdk C guests have one table of under 10
 * elements and one global; AssemblyScript emits a data segment per static object (257 in a small guest)
 * and a global per static variable. The table caps are what bound memory: a module's tables hold at most
 * 10 x 100,000 slots (30 to 55 MB per instance, a tenth of the default memory cap); the others bound the
 * decoder's and the engine's work.
 */
import { LIMIT_CODES } from './problem-codes.js';

export interface ModuleLimits {
  /** The module's size in bytes. */
  readonly moduleBytes: number;
  /** Entries of the type section. */
  readonly types: number;
  /** Parameters of one function type. */
  readonly typeParams: number;
  /** Results of one function type. */
  readonly typeResults: number;
  readonly imports: number;
  readonly exports: number;
  /** Functions, imported and defined together. */
  readonly functions: number;
  /** Tables, imported and defined together. */
  readonly tables: number;
  /** The initial size of each table; a larger declared maximum is lowered to this before compiling. */
  readonly tableElements: number;
  /** Globals, imported and defined together. */
  readonly globals: number;
  readonly elementSegments: number;
  /** Entries of all element segments together. */
  readonly elementEntries: number;
  readonly dataSegments: number;
  /** Bytes of all data segments together. */
  readonly dataBytes: number;
  /** Locals of one function, its parameters included (as the JS API counts them). */
  readonly functionLocals: number;
  /** The size of one function body in bytes, its local declarations included. */
  readonly functionBodyBytes: number;
}

export type ModuleLimitName = keyof ModuleLimits;

const MiB = 1024 * 1024;

export const MODULE_LIMITS: ModuleLimits = Object.freeze({
  moduleBytes: 64 * MiB,
  types: 10_000,
  typeParams: 1_000,
  typeResults: 1_000,
  imports: 1_000,
  exports: 10_000,
  functions: 200_000,
  tables: 10,
  tableElements: 100_000,
  globals: 10_000,
  elementSegments: 10_000,
  elementEntries: 200_000,
  dataSegments: 100_000,
  dataBytes: 32 * MiB,
  functionLocals: 50_000,
  functionBodyBytes: 7_654_321,
});

export interface ModuleLimitInfo {
  /** What is counted, as the README's limits table names it. */
  label: string;
  unit: 'bytes' | 'count';
  /** The engines' figures this cap was set against. */
  reference: string;
  /** What to do about a module past the cap: the last sentence of the refusal. */
  advice: string;
}

const ASSETS = "the package's assets directory (mounted read-only at /package)";

export const MODULE_LIMIT_INFO: Readonly<Record<ModuleLimitName, ModuleLimitInfo>> = Object.freeze({
  moduleBytes: {
    label: 'Module size', unit: 'bytes',
    reference: 'V8 kV8MaxWasmModuleSize: 1 GiB',
    advice: `Build with optimizations (-O2 or -Os, then wasm-opt), strip debug information and custom sections, and move large data into ${ASSETS}.`,
  },
  types: {
    label: 'Function types', unit: 'count',
    reference: 'V8 kV8MaxWasmTypes: 1,000,000',
    advice: 'Toolchains emit a few hundred distinct signatures at most; merge duplicates (wasm-opt does) or split the program.',
  },
  typeParams: {
    label: 'Parameters of one function type', unit: 'count',
    reference: 'V8 kV8MaxWasmFunctionParams: 1,000',
    advice: 'Pass long argument lists through linear memory instead.',
  },
  typeResults: {
    label: 'Results of one function type', unit: 'count',
    reference: 'V8 kV8MaxWasmFunctionReturns: 1,000',
    advice: 'Return many values through linear memory instead.',
  },
  imports: {
    label: 'Imports', unit: 'count',
    reference: 'V8 kV8MaxWasmImports: 100,000',
    advice: 'Import each WASI preview 1 or subako_http function once.',
  },
  exports: {
    label: 'Exports', unit: 'count',
    reference: 'V8 kV8MaxWasmExports: 100,000',
    advice: 'A function package needs only "_start" and "memory"; build without exporting every symbol (no --export-all or EXPORT_ALL).',
  },
  functions: {
    label: 'Functions (imported and defined)', unit: 'count',
    reference: 'V8 kV8MaxWasmFunctions: 1,000,000',
    advice: 'Build with optimizations and dead-code elimination (-O2 or -Os, --gc-sections, wasm-opt), or split the program into several packages.',
  },
  tables: {
    label: 'Tables (imported and defined)', unit: 'count',
    reference: 'wasmtime pooling allocator max_tables_per_module: 1; wasmparser MAX_WASM_TABLES: 100; V8 kV8MaxWasmTables: 100,000',
    advice: 'Toolchains emit one table, for indirect calls; declare no more than the cap.',
  },
  tableElements: {
    label: 'Initial elements of one table (a larger maximum is lowered to this)', unit: 'count',
    reference: 'wasmtime pooling allocator table_elements: 20,000; V8 kV8MaxWasmTableSize: 10,000,000',
    advice: 'Declare a smaller initial size; a table may grow at run time up to the cap, and table.grow past it returns -1.',
  },
  globals: {
    label: 'Globals (imported and defined)', unit: 'count',
    reference: 'V8 kV8MaxWasmGlobals: 1,000,000',
    advice: 'Keep program state in linear memory; toolchains emit a handful of globals.',
  },
  elementSegments: {
    label: 'Element segments', unit: 'count',
    reference: 'wasmparser MAX_WASM_ELEMENT_SEGMENTS: 100,000',
    advice: 'Toolchains emit one segment for the indirect-call table; merge the segments.',
  },
  elementEntries: {
    label: 'Entries of all element segments', unit: 'count',
    reference: 'V8 kV8MaxWasmTableInitEntries: 10,000,000 per segment',
    advice: 'Element segments fill table slots; keep them within what the tables hold.',
  },
  dataSegments: {
    label: 'Data segments', unit: 'count',
    reference: 'V8 kV8MaxWasmDataSegments: 100,000',
    advice: 'Merge segments (wasm-opt --memory-packing), or read the data from the package\'s assets at run time.',
  },
  dataBytes: {
    label: 'Bytes of all data segments', unit: 'bytes',
    reference: 'none in V8 beyond the module size; every call copies active data into a fresh memory',
    advice: `Move large data into ${ASSETS} and read it at run time.`,
  },
  functionLocals: {
    label: 'Locals of one function (parameters included)', unit: 'count',
    reference: 'V8 kV8MaxWasmFunctionLocals: 50,000',
    advice: 'Split the function, or build with optimizations (which reuse locals).',
  },
  functionBodyBytes: {
    label: 'Body of one function', unit: 'bytes',
    reference: 'V8 kV8MaxWasmFunctionSize: 7,654,321',
    advice: 'Split the function, or build with less inlining (-Os).',
  },
});

/** A count past its cap, as the decoder or the checks found it. */
export interface LimitOverrun {
  limit: ModuleLimitName;
  found: number;
  /** The one item past the cap when the cap is per item ("table 3", "function 17"). */
  where?: string;
  /** How many more items are past the same per-item cap. */
  others?: number;
}

/** One row of the README's limits table. */
export interface ModuleLimitRow {
  name: ModuleLimitName;
  code: string;
  label: string;
  /** The cap in words: "100,000" or "64 MiB". */
  value: string;
  reference: string;
}

export function formatLimit(name: ModuleLimitName, value: number): string {
  if (MODULE_LIMIT_INFO[name].unit === 'count') return value.toLocaleString('en-US');
  return value % MiB === 0 ? `${value / MiB} MiB` : `${value.toLocaleString('en-US')} bytes`;
}

/** The caps as rows, in declaration order, so the README's table can be generated from (or checked against) them. */
export function moduleLimitRows(limits: ModuleLimits = MODULE_LIMITS): ModuleLimitRow[] {
  return (Object.keys(MODULE_LIMIT_INFO) as ModuleLimitName[]).map((name) => ({
    name, code: LIMIT_CODES[name], label: MODULE_LIMIT_INFO[name].label, value: formatLimit(name, limits[name]),
    reference: MODULE_LIMIT_INFO[name].reference,
  }));
}
