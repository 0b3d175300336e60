/**
 * `checkModule(bytes, rules)`: decides whether bytes are a WebAssembly 2.0 core module this host
 * runs, within the caps on what a module may declare (`module-limits.ts`), and (with function-package
 * rules) whether it has the exports and only the imports ABI 1 allows. Every problem is reported at once;
 * nothing in the bytes can make it throw, or make it hold much more memory than the bytes themselves.
 */
import type { Problem } from '../errors.js';
import { describeNonWasm } from './header.js';
import { parseModule, type ParseResult } from './parse-module.js';
import { FEATURE_ADVICE, FEATURE_CODES, FORMAT_COMPONENT, FORMAT_MALFORMED, FORMAT_NOT_WASM, type RefusedFeature } from './problem-codes.js';
import { checkExports, checkImports } from './check-interface.js';
import { findLimitOverruns, limitProblem } from './check-limits.js';
import { MODULE_LIMITS, type ModuleLimits } from './module-limits.js';
import type { ExternKind, ResizableLimits, Signature } from './module-types.js';

export interface ModuleRules {
  /**
   * The functions each import module provides, by name; any other import is refused. `null` skips the
   * import checks (format and features only).
   */
  imports: Readonly<Record<string, Readonly<Record<string, Signature>>>> | null;
  /** Require `_start: () -> ()` and `memory` exports (a WASI command that is a function package). */
  requireFunctionExports: boolean;
  /** The caps on what the module declares; `MODULE_LIMITS` when left out. */
  limits?: ModuleLimits;
}

/** Format and feature checks only. */
export const FORMAT_ONLY_RULES: ModuleRules = Object.freeze({ imports: null, requireFunctionExports: false });

export interface ModuleInfo {
  kind: 'module' | 'component' | 'unknown';
  imports: Array<{ module: string; name: string; kind: ExternKind }>;
  exports: Array<{ name: string; kind: ExternKind }>;
  /** The first memory (imported or defined), in 64 KiB pages. */
  memory: (ResizableLimits & { imported: boolean }) | null;
  functionCount: number;
  /** Refused proposals the module uses. */
  refusedFeatures: RefusedFeature[];
}

export interface ModuleCheck {
  ok: boolean;
  problems: Problem[];
  info: ModuleInfo;
}

/** More malformed notes than this are summarized: one broken module must not print a thousand lines. */
const MAX_MALFORMED = 10;

export function checkModule(bytes: Uint8Array, rules: ModuleRules = FORMAT_ONLY_RULES): ModuleCheck {
  const limits = rules.limits ?? MODULE_LIMITS;
  if (bytes.length > limits.moduleBytes) {
    // Not decoded at all: whatever else is wrong with it, a module this large is refused.
    return result([limitProblem({ limit: 'moduleBytes', found: bytes.length }, limits)], null);
  }
  let parsed: ParseResult;
  try {
    parsed = parseModule(bytes, { limits });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return result([{ code: FORMAT_MALFORMED, message: `The module could not be decoded (internal decoder error: ${message}).` }], null);
  }
  const problems = [...formatProblems(bytes, parsed), ...featureProblems(parsed)];
  if (parsed.header.kind === 'module') {
    problems.push(...findLimitOverruns(parsed, bytes.length, limits).map((overrun) => limitProblem(overrun, limits)));
    if (rules.imports) problems.push(...checkImports(parsed.module, rules.imports, !parsed.brokenSections.has(1)));
    // A section left undecoded (malformed, or past a cap) may hold the exports: do not claim they are missing.
    const incomplete = parsed.malformed.length > 0 || parsed.brokenSections.size > 0;
    if (rules.requireFunctionExports) problems.push(...checkExports(parsed, incomplete));
    if (problems.length === 0) problems.push(...engineProblems(bytes));
  }
  return result(problems, parsed);
}

function formatProblems(bytes: Uint8Array, parsed: ParseResult): Problem[] {
  const { header } = parsed;
  switch (header.kind) {
    case 'not-wasm':
      return [{ code: FORMAT_NOT_WASM, message: `This is not a WebAssembly module: ${describeNonWasm(bytes)}. A function package is a WebAssembly core module (wasm32-wasip1).` }];
    case 'component':
      return [{ code: FORMAT_COMPONENT, message: 'This is a WebAssembly component (layer 1), not a core module. Subako runs WASI preview 1 core modules: build for wasm32-wasip1 (not wasm32-wasip2) or take the core module out of the component.' }];
    case 'truncated':
      return [{ code: FORMAT_MALFORMED, message: `The module is truncated: it has ${bytes.length} bytes, fewer than the 8-byte header (magic and version 1).` }];
    case 'unknown-version':
      return [{ code: FORMAT_MALFORMED, message: `The module has binary format version ${header.version}; only version 1 (a core module, bytes 4–7 "01 00 00 00") is accepted.` }];
    case 'module':
      break;
  }
  const notes = parsed.malformed.slice(0, MAX_MALFORMED).map((note) => ({
    code: FORMAT_MALFORMED,
    message: `The module is malformed at byte offset 0x${note.offset.toString(16)}: ${note.message}. A valid WebAssembly 2.0 binary is required; rebuild it, or check that the file was copied whole.`,
  }));
  const more = parsed.malformed.length + parsed.malformedOmitted - MAX_MALFORMED;
  if (more > 0) notes.push({ code: FORMAT_MALFORMED, message: `The module has ${more} more malformed parts not listed here.` });
  return notes;
}

function featureProblems(parsed: ParseResult): Problem[] {
  return parsed.features.sightings().map(({ feature, count, first }) => {
    const { what, instead } = FEATURE_ADVICE[feature];
    const others = count > 1 ? ` and ${count - 1} more place${count > 2 ? 's' : ''}` : '';
    return {
      code: FEATURE_CODES[feature],
      message: `The module uses ${what}: first seen ${first}${others}. Subako runs WebAssembly 2.0 without these; ${instead}.`,
    };
  });
}

/**
 * After our own checks pass, the engine's validator catches what a decoder does not check (types of
 * instructions, index ranges inside bodies). This is not feature gating: features were decided above.
 */
function engineProblems(bytes: Uint8Array): Problem[] {
  const own = bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
  let detail = 'it does not validate';
  try {
    if (WebAssembly.validate(own)) return [];
    new WebAssembly.Module(own);
  } catch (error) {
    if (error instanceof Error) detail = error.message.replace(/^WebAssembly\.Module\(\): /, '');
  }
  return [{ code: FORMAT_MALFORMED, message: `The module is not valid WebAssembly: ${detail}. Rebuild it with a toolchain for wasm32-wasip1.` }];
}

function result(problems: Problem[], parsed: ParseResult | null): ModuleCheck {
  return { ok: problems.length === 0, problems, info: describe(parsed) };
}

function describe(parsed: ParseResult | null): ModuleInfo {
  const kind = parsed?.header.kind === 'module' || parsed?.header.kind === 'component' ? parsed.header.kind : 'unknown';
  if (!parsed || kind !== 'module') {
    return { kind, imports: [], exports: [], memory: null, functionCount: 0, refusedFeatures: [] };
  }
  const { module } = parsed;
  const importedMemory = module.imports.find((i) => i.kind === 'memory')?.memory;
  const memory = importedMemory
    ? { ...importedMemory, imported: true }
    : module.memories[0] ? { ...module.memories[0], imported: false } : null;
  return {
    kind,
    imports: module.imports.map(({ module: from, name, kind: k }) => ({ module: from, name, kind: k })),
    exports: module.exports.map(({ name, kind: k }) => ({ name, kind: k })),
    memory,
    functionCount: module.imports.filter((i) => i.kind === 'func').length + module.functions.length,
    refusedFeatures: parsed.features.sightings().map((s) => s.feature),
  };
}
