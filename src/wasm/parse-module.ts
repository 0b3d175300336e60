/**
 * Decodes a whole module: the header, then every section in turn. Never throws on bad input: what
 * cannot be decoded becomes a `malformed` note with its offset, and decoding goes on wherever the
 * section and body sizes still say where the next part starts.
 */
import { ByteReader, DecodeError } from './reader.js';
import { FeatureLog } from './feature-log.js';
import { HEADER_SIZE, readHeader, type Header } from './header.js';
import type { Instruction } from './code-walker.js';
import { emptyModule, importCount, type ParsedModule, SECTION_NAMES, SECTION_ORDER } from './module-types.js';
import { MODULE_LIMITS, type LimitOverrun, type ModuleLimits } from './module-limits.js';
import * as sections from './sections.js';

export interface MalformedNote {
  message: string;
  offset: number;
}

export interface ParseResult {
  header: Header;
  module: ParsedModule;
  features: FeatureLog;
  /** The first notes of what could not be decoded (at most `MAX_MALFORMED_NOTES`). */
  malformed: MalformedNote[];
  /** How many more malformed parts there were than `malformed` keeps. */
  malformedOmitted: number;
  /** Sections that declare more than a cap: each stopped the decoding of its section. */
  overruns: LimitOverrun[];
  /**
   * Ids of sections whose content could not be decoded, or was not because it declares more than a cap:
   * what they declare may be missing from `module`.
   */
  brokenSections: Set<number>;
}

export interface ParseOptions {
  /** Called for every instruction of every function body (not for constant expressions). */
  visit?: (instruction: Instruction, functionIndex: number) => void;
  /** The caps past which a section is not decoded (by default, `MODULE_LIMITS`). */
  limits?: ModuleLimits;
}

/** A module broken everywhere must not make the decoder keep a note per broken function body. */
export const MAX_MALFORMED_NOTES = 100;

type SectionReader = (r: ByteReader, ctx: sections.SectionContext) => void;

const READERS: Readonly<Record<number, SectionReader>> = {
  1: sections.readTypeSection, 2: sections.readImportSection, 3: sections.readFunctionSection,
  4: sections.readTableSection, 5: sections.readMemorySection, 6: sections.readGlobalSection,
  7: sections.readExportSection, 8: sections.readStartSection, 9: sections.readElementSection,
  10: sections.readCodeSection, 11: sections.readDataSection, 12: sections.readDataCountSection,
  13: sections.readTagSection,
};

const hex = (n: number): string => `0x${n.toString(16)}`;

export function parseModule(bytes: Uint8Array, options: ParseOptions = {}): ParseResult {
  const result: ParseResult = {
    header: readHeader(bytes), module: emptyModule(), features: new FeatureLog(), malformed: [], malformedOmitted: 0,
    overruns: [], brokenSections: new Set(),
  };
  if (result.header.kind !== 'module') return result;
  try {
    readSections(bytes, result, options);
    crossCheck(result);
  } catch (error) {
    // A bug in a decoder must still not escape as an exception: report it as malformed input.
    const message = error instanceof Error ? error.message : String(error);
    noteMalformed(result, `could not be decoded (internal decoder error: ${message})`, 0);
  }
  return result;
}

function noteMalformed(result: ParseResult, message: string, offset: number): void {
  if (result.malformed.length < MAX_MALFORMED_NOTES) result.malformed.push({ message, offset });
  else result.malformedOmitted++;
}

function readSections(bytes: Uint8Array, result: ParseResult, options: ParseOptions): void {
  const r = new ByteReader(bytes, HEADER_SIZE);
  const { module, features } = result;
  const limits = options.limits ?? MODULE_LIMITS;
  const malformed = { push: (note: MalformedNote): void => noteMalformed(result, note.message, note.offset) };
  let lastRank = 0;
  while (!r.atEnd()) {
    const start = r.pos;
    let id: number;
    let size: number;
    try {
      id = r.u8();
      size = r.u32();
    } catch (error) {
      malformed.push({ message: 'the last section header is cut off (the file is truncated)', offset: start });
      return;
    }
    const contentStart = r.pos;
    const name = SECTION_NAMES[id] ?? `unknown (id ${id})`;
    if (size > r.remaining) {
      malformed.push({
        message: `the ${name} section claims ${size} bytes but only ${r.remaining} remain (the file is truncated)`,
        offset: start,
      });
      result.brokenSections.add(id);
      return;
    }
    const end = contentStart + size;
    module.sections.push({ id, start, contentStart, end });
    r.pos = end;
    if (id === 0) {
      readCustomSection(bytes, contentStart, end, result);
      continue;
    }
    const reader = READERS[id];
    if (!reader) {
      malformed.push({ message: `unknown section id ${id}`, offset: start });
      continue;
    }
    const rank = SECTION_ORDER[id];
    if (rank <= lastRank) {
      malformed.push({ message: `the ${name} section is repeated or out of order`, offset: start });
      result.brokenSections.add(id);
      continue;
    }
    lastRank = rank;
    const content = new ByteReader(bytes, contentStart, end);
    const ctx: sections.SectionContext = {
      module, log: features, limits, typesIncomplete: result.brokenSections.has(1),
      reportBody: (error, functionIndex) => {
        malformed.push({ message: `in function ${functionIndex}: ${error.message}`, offset: error.offset });
      },
      visit: options.visit,
    };
    try {
      reader(content, ctx);
      if (!content.atEnd()) content.fail(`${content.remaining} unexpected bytes at the end of the section`);
    } catch (error) {
      if (error instanceof sections.OverLimit) {
        result.overruns.push(error.overrun);
      } else if (error instanceof DecodeError) {
        malformed.push({ message: `in the ${name} section: ${error.message}`, offset: error.offset });
      } else {
        throw error;
      }
      result.brokenSections.add(id);
    }
  }
}

function readCustomSection(bytes: Uint8Array, start: number, end: number, result: ParseResult): void {
  try {
    new ByteReader(bytes, start, end).name();
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    noteMalformed(result, `in a custom section's name: ${error.message}`, error.offset);
  }
}

/** Checks that span sections: counts that must agree, indices that must exist. */
function crossCheck(result: ParseResult): void {
  const { module, brokenSections, features } = result;
  const malformed = { push: (note: MalformedNote): void => noteMalformed(result, note.message, note.offset) };
  const bodiesBroken = brokenSections.has(3) || brokenSections.has(10);
  if (!bodiesBroken && module.functions.length !== module.codes.length) {
    malformed.push({
      message: `the module declares ${module.functions.length} functions but has ${module.codes.length} function bodies`,
      offset: HEADER_SIZE,
    });
  }
  if (module.dataCount !== null && !brokenSections.has(11) && module.dataCount !== module.dataSegments) {
    malformed.push({
      message: `the data count section says ${module.dataCount} segments but the data section has ${module.dataSegments}`,
      offset: HEADER_SIZE,
    });
  }
  const memoryCount = importCount(module, 'memory') + module.memoriesDeclared;
  if (memoryCount > 1) features.note('multi-memory', `${memoryCount} memories are declared`);
  const spaces: Record<string, number> = {
    func: importCount(module, 'func') + module.functions.length,
    table: importCount(module, 'table') + module.tables.length,
    memory: memoryCount,
    global: importCount(module, 'global') + module.globals.length,
  };
  for (const entry of module.exports) {
    const size = spaces[entry.kind];
    if (size !== undefined && entry.index >= size && brokenSections.size === 0) {
      malformed.push({ message: `the export "${entry.name}" names ${entry.kind} ${entry.index}, which does not exist`, offset: HEADER_SIZE });
    }
  }
  if (module.start !== null && module.start >= spaces.func && brokenSections.size === 0) {
    malformed.push({ message: `the start function ${module.start} does not exist`, offset: HEADER_SIZE });
  }
}

export { hex as formatOffset };
