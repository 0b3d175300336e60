/**
 * Rewrites a module before the sandbox compiles it, so what it can allocate stays under the caps at run
 * time, and the host can tell "ran out of memory" from any other failure:
 * - the memory's maximum becomes min(declared maximum, cap), in 64 KiB pages (worker resource limits
 *   do not cover wasm memory, so this is the only limit that holds);
 * - every table's maximum becomes min(declared maximum, `limits.tableElements`), so `table.grow` past it
 *   returns -1, as the spec allows, before the engine allocates anything (a table without a maximum
 *   would otherwise grow to V8's 10,000,000 slots, about 550 MB each when grown at run time);
 * - every `memory.grow` becomes a call to an appended function that grows and, when growing fails
 *   (-1), sets an appended global exported as `__subako_grow_failed` to 1.
 * A module past any cap of `module-limits.ts` is refused here too (`ModuleLimitError`, with the code
 * the upload check gives), so a module that reached the sandbox unchecked is held to the same caps.
 * Nothing is inserted before an existing entry, so no existing function, type or global index moves.
 */
import { GROW_FAILED_EXPORT } from './grow-failed.js';
import { InstrumentError, MemoryCapError } from './instrument-errors.js';
import { parseModule } from './parse-module.js';
import { ByteReader } from './reader.js';
import { HEADER_SIZE } from './header.js';
import { ByteWriter, concatBytes, encodeName, encodeS32, encodeSection, encodeU32 } from './encode.js';
import { importCount, SECTION_ORDER, type ParsedModule, type SectionSpan } from './module-types.js';
import { OP_MEMORY_GROW } from './opcodes.js';
import { MODULE_LIMITS, type ModuleLimits } from './module-limits.js';
import { findLimitOverruns, ModuleLimitError } from './check-limits.js';

export { GROW_FAILED_EXPORT };
export { MemoryCapError, InstrumentError };
export const PAGE_BYTES = 65536;

export interface InstrumentOptions {
  maxMemoryBytes: number;
  /** The caps the module is held to, `tableElements` among them; `MODULE_LIMITS` when left out. */
  limits?: ModuleLimits;
}

/** The new content of each section the rewrite changes or adds, by section id. */
type Rewrites = Record<number, (section: SectionSpan | null) => Uint8Array>;

export function instrumentModule(bytes: Uint8Array, options: InstrumentOptions): Uint8Array<ArrayBuffer> {
  const limits = options.limits ?? MODULE_LIMITS;
  if (bytes.length > limits.moduleBytes) throw new ModuleLimitError({ limit: 'moduleBytes', found: bytes.length }, limits);
  // Every memory.grow, noted as the parser walks the code: the rewrite then copies the bodies around them
  // instead of walking every instruction a second time (the walk is most of what instrumenting costs).
  const grows = new GrowSites();
  const parsed = parseModule(bytes, {
    limits,
    visit: (instruction) => {
      if (instruction.byte === OP_MEMORY_GROW) grows.add(instruction.start, instruction.end);
    },
  });
  if (parsed.header.kind !== 'module' || parsed.malformed.length > 0) {
    throw new InstrumentError(`The module cannot be instrumented: ${parsed.malformed[0]?.message ?? 'it is not a WebAssembly core module'}.`);
  }
  const overrun = findLimitOverruns(parsed, bytes.length, limits)[0];
  if (overrun) throw new ModuleLimitError(overrun, limits);
  const { module } = parsed;
  if (importCount(module, 'memory') > 0) throw new InstrumentError('The module imports its memory; only a memory it defines can be capped.');
  if (importCount(module, 'table') > 0) {
    throw new InstrumentError('The module imports a table; Subako provides none, and only a table the module defines can be capped.');
  }
  const rewrites: Rewrites = {
    ...(module.tables.length > 0 ? tableRewrites(bytes, module, limits.tableElements) : {}),
    ...(module.memories.length > 0 ? memoryRewrites(bytes, module, options.maxMemoryBytes, grows) : {}),
  };
  if (Object.keys(rewrites).length === 0) return bytes.slice();
  return rebuild(bytes, module, rewrites);
}

/** Each table's limits, re-encoded with the maximum lowered to the cap (initial sizes were checked against it). */
function tableRewrites(bytes: Uint8Array, module: ParsedModule, cap: number): Rewrites {
  for (const table of module.tables) {
    if (table.limits.is64 || table.limits.shared) {
      throw new InstrumentError('The module has a 64-bit or shared table; only plain 32-bit tables can be capped.');
    }
  }
  return {
    4: (section) => {
      if (!section) throw new InstrumentError('The module declares tables but has no table section.');
      const out = new ByteWriter();
      let at = section.contentStart;
      for (const { limits, limitsSpan } of module.tables) {
        out.write(bytes.subarray(at, limitsSpan.start));
        out.write([0x01, ...encodeU32(limits.min), ...encodeU32(Math.min(limits.max ?? cap, cap))]);
        at = limitsSpan.end;
      }
      out.write(bytes.subarray(at, section.end));
      return out.view().slice();
    },
  };
}

interface Added {
  typeIndex: number;
  functionIndex: number;
  globalIndex: number;
}

function memoryRewrites(bytes: Uint8Array, module: ParsedModule, maxMemoryBytes: number, grows: GrowSites): Rewrites {
  const memory = module.memories[0];
  if (module.memories.length > 1 || memory.shared || memory.is64) {
    throw new InstrumentError('The module has more than one memory, or a shared or 64-bit one; only one plain 32-bit memory can be capped.');
  }
  if (module.exports.some((e) => e.name === GROW_FAILED_EXPORT)) {
    throw new InstrumentError(`The module already exports "${GROW_FAILED_EXPORT}", a name the host reserves.`);
  }
  const capPages = Math.floor(Math.max(0, maxMemoryBytes) / PAGE_BYTES);
  if (memory.min > capPages) throw new MemoryCapError(memory.min, capPages);
  const maxPages = Math.min(memory.max ?? capPages, capPages);
  const added: Added = {
    typeIndex: module.types.length,
    functionIndex: importCount(module, 'func') + module.functions.length,
    globalIndex: importCount(module, 'global') + module.globals.length,
  };
  return {
    1: (s) => appendEntry(bytes, s, [0x60, 1, 0x7f, 1, 0x7f]), // (i32) -> (i32)
    3: (s) => appendEntry(bytes, s, encodeU32(added.typeIndex)),
    5: () => concatBytes([[1, 0x01], encodeU32(memory.min), encodeU32(maxPages)]),
    6: (s) => appendEntry(bytes, s, [0x7f, 0x01, 0x41, 0x00, 0x0b]), // mutable i32 = 0
    7: (s) => appendEntry(bytes, s, [...encodeName(GROW_FAILED_EXPORT), 0x03, ...encodeU32(added.globalIndex)]),
    10: () => rewriteCode(bytes, module, added, grows),
  };
}

function rebuild(bytes: Uint8Array, module: ParsedModule, rewrites: Rewrites): Uint8Array<ArrayBuffer> {
  const pending = new Set(Object.keys(rewrites).map(Number));
  const out: Uint8Array[] = [bytes.subarray(0, HEADER_SIZE)];
  const flushBefore = (rank: number): void => {
    for (const id of [...pending].sort((a, b) => SECTION_ORDER[a] - SECTION_ORDER[b])) {
      if (SECTION_ORDER[id] >= rank) break;
      out.push(encodeSection(id, rewrites[id](null)));
      pending.delete(id);
    }
  };
  for (const section of module.sections) {
    if (section.id !== 0) flushBefore(SECTION_ORDER[section.id]);
    if (pending.has(section.id)) {
      out.push(encodeSection(section.id, rewrites[section.id](section)));
      pending.delete(section.id);
    } else {
      out.push(bytes.subarray(section.start, section.end));
    }
  }
  flushBefore(Infinity);
  return concatBytes(out);
}

/** A vector section with one more entry at its end (or a new section holding only that entry). */
function appendEntry(bytes: Uint8Array, section: SectionSpan | null, entry: readonly number[]): Uint8Array {
  if (!section) return concatBytes([[1], entry]);
  const r = new ByteReader(bytes, section.contentStart, section.end);
  const count = r.u32();
  return concatBytes([encodeU32(count + 1), bytes.subarray(r.pos, section.end), entry]);
}

/**
 * The function that replaces `memory.grow 0`: (pages) -> (old size or -1), like the instruction, and
 * on -1 it records the failure in the appended global before returning.
 */
function growFunctionBody(globalIndex: number): number[] {
  const g = encodeU32(globalIndex);
  const code = [
    0x00, // no locals: the parameter doubles as the result holder
    0x20, 0x00, 0x40, 0x00, 0x22, 0x00, // local.get 0, memory.grow 0, local.tee 0
    0x41, ...encodeS32(-1), 0x46, // i32.const -1, i32.eq
    0x04, 0x40, 0x41, 0x01, 0x24, ...g, 0x0b, // if: global.set $failed (i32.const 1) end
    0x20, 0x00, 0x0b, // local.get 0, end
  ];
  return [...encodeU32(code.length), ...code];
}

/**
 * The code section with every `memory.grow` replaced by a call to the appended function. Each body is
 * walked again here and written straight out, so a module made of millions of `memory.grow` costs its
 * output's size, not an object per site.
 */
/**
 * Where each memory.grow lies in the module's bytes (its start and end), in the order of the bytes: two numbers
 * a site in one typed array that doubles as it fills, not an object a site (a module may hold millions).
 */
class GrowSites {
  private offsets = new Uint32Array(64);
  length = 0;

  add(start: number, end: number): void {
    if (2 * this.length + 2 > this.offsets.length) {
      const bigger = new Uint32Array(this.offsets.length * 2);
      bigger.set(this.offsets);
      this.offsets = bigger;
    }
    this.offsets[2 * this.length] = start;
    this.offsets[2 * this.length + 1] = end;
    this.length += 1;
  }

  start(site: number): number {
    return this.offsets[2 * site];
  }

  end(site: number): number {
    return this.offsets[2 * site + 1];
  }
}

/** The code section with every memory.grow (`grows`) a call of the added function. */
function rewriteCode(bytes: Uint8Array, module: ParsedModule, added: Added, grows: GrowSites): Uint8Array {
  const call = [0x10, ...encodeU32(added.functionIndex)];
  const out = new ByteWriter();
  const body = new ByteWriter();
  let next = 0;
  out.u32(module.codes.length + 1);
  for (const span of module.codes) {
    let at = span.bodyStart;
    body.clear();
    // The bodies lie in order, and so do the sites: this body's are the next ones that start before its end.
    for (; next < grows.length && grows.start(next) < span.end; next += 1) {
      body.write(bytes.subarray(at, grows.start(next)));
      body.write(call);
      at = grows.end(next);
    }
    if (at === span.bodyStart) {
      out.write(bytes.subarray(span.start, span.end));
      continue;
    }
    body.write(bytes.subarray(at, span.end));
    out.u32(body.length);
    out.write(body.view());
  }
  out.write(growFunctionBody(added.globalIndex));
  return out.view();
}
