/** The parts of a decoded module the checks and the memory rewrite use. */

/** A value type in text form: `i32`, `f64`, `v128`, `funcref`, `externref`, or a refused one (`anyref`, `(ref 3)`). */
export type ValueType = string;

export interface FuncType {
  params: ValueType[];
  results: ValueType[];
}

/**
 * A function signature in text value types, e.g. `{ params: ['i32', 'i64'], results: ['i32'] }`: what an
 * allowed import must look like. Here, not in check-module.ts, so that check-interface.ts can use it
 * without importing the file that imports it.
 */
export interface Signature {
  params: readonly string[];
  results: readonly string[];
}

export type ExternKind = 'func' | 'table' | 'memory' | 'global' | 'tag';

/**
 * The size range a memory or table type declares (the spec's `limits`, `resizable_limits` in the MVP binary
 * format): in pages for a memory, in elements for a table. Not subako's caps on a module (`ModuleLimits`).
 */
export interface ResizableLimits {
  min: number;
  max: number | null;
  shared: boolean;
  is64: boolean;
}

export interface TableType {
  element: ValueType;
  limits: ResizableLimits;
  /** Where the limits are encoded, for the rewrite that lowers the maximum. */
  limitsSpan: { start: number; end: number };
}

export interface GlobalType {
  type: ValueType;
  mutable: boolean;
}

export interface Import {
  module: string;
  name: string;
  kind: ExternKind;
  /** For functions and tags: the index into the type section. */
  typeIndex?: number;
  memory?: ResizableLimits;
  table?: TableType;
  global?: GlobalType;
}

export interface Export {
  name: string;
  kind: ExternKind;
  index: number;
}

/** Where a section lies: the id byte at `start`, its content from `contentStart` to `end`. */
export interface SectionSpan {
  id: number;
  start: number;
  contentStart: number;
  end: number;
}

/** One function body: its size prefix at `start`, locals from `bodyStart`, instructions from `codeStart` to `end`. */
export interface CodeSpan {
  start: number;
  bodyStart: number;
  codeStart: number;
  end: number;
  /** The locals the body declares (not counting parameters), as far as they could be read. */
  locals: number;
}

export interface ParsedModule {
  sections: SectionSpan[];
  /** The type index space; `null` for a GC struct or array type. */
  types: Array<FuncType | null>;
  imports: Import[];
  /** The type index of each function the module defines. */
  functions: number[];
  tables: TableType[];
  /** The first two memories the module defines (one is all it may have). */
  memories: ResizableLimits[];
  /** How many memories the memory section declares. */
  memoriesDeclared: number;
  globals: GlobalType[];
  exports: Export[];
  start: number | null;
  dataCount: number | null;
  dataSegments: number;
  /** The bytes of every data segment, added up. */
  dataBytes: number;
  elementSegments: number;
  /** The entries of every element segment, added up. */
  elementEntries: number;
  codes: CodeSpan[];
}

export function emptyModule(): ParsedModule {
  return {
    sections: [], types: [], imports: [], functions: [], tables: [], memories: [], memoriesDeclared: 0, globals: [],
    exports: [], start: null, dataCount: null, dataSegments: 0, dataBytes: 0, elementSegments: 0, elementEntries: 0,
    codes: [],
  };
}

export function importCount(module: ParsedModule, kind: ExternKind): number {
  return module.imports.filter((i) => i.kind === kind).length;
}

/** The type of function `index` in the function index space (imports first), or null if unknown. */
export function functionType(module: ParsedModule, index: number): FuncType | null {
  const imported = module.imports.filter((i) => i.kind === 'func');
  const typeIndex = index < imported.length ? imported[index].typeIndex : module.functions[index - imported.length];
  return typeIndex === undefined ? null : (module.types[typeIndex] ?? null);
}

export function formatFuncType(type: { params: readonly string[]; results: readonly string[] }): string {
  return `(${type.params.join(', ')}) -> (${type.results.join(', ')})`;
}

export const SECTION_NAMES: Readonly<Record<number, string>> = {
  0: 'custom', 1: 'type', 2: 'import', 3: 'function', 4: 'table', 5: 'memory', 6: 'global', 7: 'export',
  8: 'start', 9: 'element', 10: 'code', 11: 'data', 12: 'data count', 13: 'tag',
};

/** The order known sections must appear in (the tag section sits between memory and global). */
export const SECTION_ORDER: Readonly<Record<number, number>> = {
  1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13,
};
