/**
 * Every problem code the module checks report, defined once. Tests and users match on these strings.
 */
export const FORMAT_NOT_WASM = 'format.not-wasm';
export const FORMAT_COMPONENT = 'format.component';
export const FORMAT_MALFORMED = 'format.malformed';

export const EXPORT_MISSING = 'export.missing';
export const EXPORT_TYPE = 'export.type';

export const IMPORT_MODULE = 'import.module';
export const IMPORT_NAME = 'import.name';
export const IMPORT_SIGNATURE = 'import.signature';
export const IMPORT_KIND = 'import.kind';

/** Post-2.0 proposals a module may not use; each is reported once, with where it was first seen. */
export const FEATURE_CODES = {
  threads: 'feature.threads',
  exceptions: 'feature.exceptions',
  'tail-call': 'feature.tail-call',
  memory64: 'feature.memory64',
  'multi-memory': 'feature.multi-memory',
  'relaxed-simd': 'feature.relaxed-simd',
  gc: 'feature.gc',
  'extended-const': 'feature.extended-const',
} as const;

export type RefusedFeature = keyof typeof FEATURE_CODES;

/** What each refused feature is, in words, and what to do instead: the second half of each message. */
export const FEATURE_ADVICE: Readonly<Record<RefusedFeature, { what: string; instead: string }>> = {
  threads: {
    what: 'threads (shared memory or atomic instructions)',
    instead: 'build single-threaded (wasm32-wasip1 without -pthread or +atomics); guests run one thread with unshared memory',
  },
  exceptions: {
    what: 'exception handling (tags, try/catch/throw/rethrow/delegate, try_table, exnref)',
    instead: 'build without wasm exceptions (e.g. -fno-exceptions, or panic=abort); a guest reports errors as tool results or exits',
  },
  'tail-call': {
    what: 'tail calls (return_call, return_call_indirect, return_call_ref)',
    instead: 'build without the tail-call feature (e.g. -mno-tail-call); ordinary calls are accepted',
  },
  memory64: {
    what: 'memory64 (64-bit memories or tables)',
    instead: 'target wasm32 (wasm32-wasip1), whose memory is addressed with 32 bits',
  },
  'multi-memory': {
    what: 'multiple memories',
    instead: 'use one linear memory, exported as "memory"',
  },
  'relaxed-simd': {
    what: 'relaxed SIMD instructions',
    instead: 'build without relaxed-simd; the deterministic 128-bit SIMD instructions are accepted',
  },
  gc: {
    what: 'garbage collection or typed function references (struct/array/rec types, typed refs, 0xFB instructions, call_ref)',
    instead: 'target WebAssembly 2.0 linear memory; funcref and externref are accepted',
  },
  'extended-const': {
    what: 'extended constant expressions (arithmetic in a global, data or element initializer)',
    instead: 'use a plain constant, global.get, ref.null or ref.func as the initializer',
  },
};

/**
 * What a module declares past one of the caps in `module-limits.ts`: one code per cap, so a refusal says
 * exactly which count was too large.
 */
export const LIMIT_CODES = {
  moduleBytes: 'limit.module-bytes',
  types: 'limit.types',
  typeParams: 'limit.params',
  typeResults: 'limit.results',
  imports: 'limit.imports',
  exports: 'limit.exports',
  functions: 'limit.functions',
  tables: 'limit.tables',
  tableElements: 'limit.table-elements',
  globals: 'limit.globals',
  elementSegments: 'limit.element-segments',
  elementEntries: 'limit.elements',
  dataSegments: 'limit.data-segments',
  dataBytes: 'limit.data-bytes',
  functionLocals: 'limit.locals',
  functionBodyBytes: 'limit.function-bytes',
} as const;

