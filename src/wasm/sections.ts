/**
 * Decoders for each known section's content. Each reads from a reader bounded to its section,
 * fills the module model, notes refused features, and throws DecodeError on malformed content.
 */
import type { FeatureLog } from './feature-log.js';
import { walkInstructions, type Instruction } from './code-walker.js';
import { importCount, type ExternKind, type GlobalType, type ParsedModule, type TableType } from './module-types.js';
import type { LimitOverrun, ModuleLimitName, ModuleLimits } from './module-limits.js';
import { readLimits, readRefType, readValueType, type TypeContext } from './value-types.js';
import { ByteReader, DecodeError } from './reader.js';

/**
 * Thrown when a section declares more of something than its cap: the decoder stops there rather than
 * store millions of entries, and the parser reports the overrun (a `limit.*` problem, not malformed input).
 */
export class OverLimit extends Error {
  readonly overrun: LimitOverrun;

  constructor(overrun: LimitOverrun) {
    super(`${overrun.limit} ${overrun.found}`);
    this.overrun = overrun;
  }
}

export interface SectionContext {
  module: ParsedModule;
  log: FeatureLog;
  limits: ModuleLimits;
  /**
   * The type section could not be decoded whole (malformed, or past a cap): type indices cannot be
   * checked, and are not, rather than report every use of a type as one that does not exist.
   */
  typesIncomplete: boolean;
  /** A body that fails to decode is reported here and skipped; the next one is still checked. */
  reportBody: (error: DecodeError, functionIndex: number) => void;
  visit?: (instruction: Instruction, functionIndex: number) => void;
}

const typeCtx = (ctx: SectionContext, where: string): TypeContext => ({ log: ctx.log, where });

/** Stops decoding the section when `found` is past the cap (checked before anything is stored). */
function cap(ctx: SectionContext, limit: ModuleLimitName, found: number, where?: string): void {
  if (found > ctx.limits[limit]) throw new OverLimit(where === undefined ? { limit, found } : { limit, found, where });
}

/** The vector count at the start of a section, checked against the cap on what it adds up to. */
function capped(r: ByteReader, ctx: SectionContext, what: string, limit: ModuleLimitName, already = 0): number {
  const count = r.count(what);
  cap(ctx, limit, already + count);
  return count;
}

const knownTypes = (ctx: SectionContext): number => (ctx.typesIncomplete ? Infinity : ctx.module.types.length);

function readConstantExpression(r: ByteReader, ctx: SectionContext, where: string): void {
  walkInstructions(r, { log: ctx.log, where, typeCount: knownTypes(ctx), constant: true });
}

function checkFuncTypeIndex(r: ByteReader, ctx: SectionContext, index: number, at: number): void {
  if (ctx.typesIncomplete) return;
  if (index >= ctx.module.types.length) r.fail(`type ${index} does not exist`, at);
  if (ctx.module.types[index] === null) r.fail(`type ${index} is not a function type`, at);
}

function readFieldType(r: ByteReader, tc: TypeContext): void {
  const byte = r.peekU8();
  if (byte === 0x78 || byte === 0x77) r.u8(); // packed i8 / i16
  else readValueType(r, tc);
  if (r.u8() > 1) r.fail('malformed field mutability');
}

/** One composite type: a function type, or (GC) a struct or array type. */
function readCompositeType(r: ByteReader, ctx: SectionContext, tc: TypeContext): void {
  const at = r.pos;
  const form = r.u8();
  if (form === 0x60) {
    const where = `type ${ctx.module.types.length}`;
    const paramCount = r.count('parameter');
    cap(ctx, 'typeParams', paramCount, where);
    const params = Array.from({ length: paramCount }, () => readValueType(r, tc));
    const resultCount = r.count('result');
    cap(ctx, 'typeResults', resultCount, where);
    const results = Array.from({ length: resultCount }, () => readValueType(r, tc));
    ctx.module.types.push({ params, results });
    return;
  }
  if (form === 0x5f) {
    ctx.log.note('gc', `struct type ${tc.where}`);
    const fields = r.count('field');
    for (let i = 0; i < fields; i++) readFieldType(r, tc);
  } else if (form === 0x5e) {
    ctx.log.note('gc', `array type ${tc.where}`);
    readFieldType(r, tc);
  } else {
    r.fail(`unknown type form 0x${form.toString(16)}`, at);
  }
  ctx.module.types.push(null);
}

function readSubType(r: ByteReader, ctx: SectionContext, tc: TypeContext): void {
  const form = r.peekU8();
  if (form === 0x50 || form === 0x4f) {
    r.u8();
    ctx.log.note('gc', `subtype declaration ${tc.where}`);
    const supers = r.count('supertype');
    for (let i = 0; i < supers; i++) r.u32();
  }
  readCompositeType(r, ctx, tc);
}

export function readTypeSection(r: ByteReader, ctx: SectionContext): void {
  const count = capped(r, ctx, 'type', 'types');
  for (let i = 0; i < count; i++) {
    const tc = typeCtx(ctx, `in type ${ctx.module.types.length}`);
    if (r.peekU8() === 0x4e) {
      r.u8();
      ctx.log.note('gc', `recursive type group ${tc.where}`);
      const members = r.count('rec group member');
      cap(ctx, 'types', ctx.module.types.length + members + (count - i - 1));
      for (let j = 0; j < members; j++) readSubType(r, ctx, tc);
    } else {
      readSubType(r, ctx, tc);
    }
  }
}

function readTableType(r: ByteReader, tc: TypeContext): TableType {
  const element = readRefType(r, tc);
  const start = r.pos;
  const limits = readLimits(r, tc, 'table');
  return { element, limits, limitsSpan: { start, end: r.pos } };
}

function readGlobalType(r: ByteReader, tc: TypeContext): GlobalType {
  const type = readValueType(r, tc);
  const mutability = r.u8();
  if (mutability > 1) r.fail(`malformed global mutability ${mutability}`, r.pos - 1);
  return { type, mutable: mutability === 1 };
}

const KINDS: readonly ExternKind[] = ['func', 'table', 'memory', 'global', 'tag'];

function readKind(r: ByteReader): ExternKind {
  const at = r.pos;
  const kind = KINDS[r.u8()];
  if (!kind) r.fail(`unknown import or export kind 0x${r.bytes[at].toString(16)}`, at);
  return kind;
}

export function readImportSection(r: ByteReader, ctx: SectionContext): void {
  const count = capped(r, ctx, 'import', 'imports');
  for (let i = 0; i < count; i++) {
    const module = r.name();
    const name = r.name();
    const tc = typeCtx(ctx, `in the import "${module}"."${name}"`);
    const kind = readKind(r);
    switch (kind) {
      case 'func': {
        const at = r.pos;
        const typeIndex = r.u32();
        checkFuncTypeIndex(r, ctx, typeIndex, at);
        ctx.module.imports.push({ module, name, kind, typeIndex });
        break;
      }
      case 'table': ctx.module.imports.push({ module, name, kind, table: readTableType(r, tc) }); break;
      case 'memory': ctx.module.imports.push({ module, name, kind, memory: readLimits(r, tc, 'memory') }); break;
      case 'global': ctx.module.imports.push({ module, name, kind, global: readGlobalType(r, tc) }); break;
      case 'tag': {
        ctx.log.note('exceptions', `imported tag ${tc.where.replace(/^in the /, '')}`);
        r.u8();
        ctx.module.imports.push({ module, name, kind, typeIndex: r.u32() });
        break;
      }
    }
  }
}

export function readFunctionSection(r: ByteReader, ctx: SectionContext): void {
  const count = capped(r, ctx, 'function', 'functions', importCount(ctx.module, 'func'));
  for (let i = 0; i < count; i++) {
    const at = r.pos;
    const typeIndex = r.u32();
    checkFuncTypeIndex(r, ctx, typeIndex, at);
    ctx.module.functions.push(typeIndex);
  }
}

export function readTableSection(r: ByteReader, ctx: SectionContext): void {
  const count = capped(r, ctx, 'table', 'tables', importCount(ctx.module, 'table'));
  for (let i = 0; i < count; i++) {
    const where = `in table ${ctx.module.tables.length}`;
    const tc = typeCtx(ctx, where);
    if (r.peekU8() === 0x40) {
      r.u8();
      if (r.u8() !== 0) r.fail('malformed table with initializer');
      ctx.log.note('gc', `table with an initializer ${where}`);
      ctx.module.tables.push(readTableType(r, tc));
      readConstantExpression(r, ctx, `in the initializer of table ${ctx.module.tables.length - 1}`);
    } else {
      ctx.module.tables.push(readTableType(r, tc));
    }
  }
}

/** A module may have one memory; a second is kept to say so, and the rest are only counted. */
const MEMORIES_KEPT = 2;

export function readMemorySection(r: ByteReader, ctx: SectionContext): void {
  const count = r.count('memory');
  ctx.module.memoriesDeclared = count;
  for (let i = 0; i < count; i++) {
    const memory = readLimits(r, typeCtx(ctx, `in memory ${i}`), 'memory');
    if (ctx.module.memories.length < MEMORIES_KEPT) ctx.module.memories.push(memory);
  }
}

export function readTagSection(r: ByteReader, ctx: SectionContext): void {
  ctx.log.note('exceptions', 'in the tag section');
  const count = r.count('tag');
  for (let i = 0; i < count; i++) {
    r.u8();
    r.u32();
  }
}

export function readGlobalSection(r: ByteReader, ctx: SectionContext): void {
  const imported = importCount(ctx.module, 'global');
  const count = capped(r, ctx, 'global', 'globals', imported);
  for (let i = 0; i < count; i++) {
    const index = imported + i;
    ctx.module.globals.push(readGlobalType(r, typeCtx(ctx, `in global ${index}`)));
    readConstantExpression(r, ctx, `in the initializer of global ${index}`);
  }
}

export function readExportSection(r: ByteReader, ctx: SectionContext): void {
  const count = capped(r, ctx, 'export', 'exports');
  const names = new Set<string>();
  for (let i = 0; i < count; i++) {
    const at = r.pos;
    const name = r.name();
    if (names.has(name)) r.fail(`the export name "${name}" is used twice`, at);
    names.add(name);
    const kind = readKind(r);
    if (kind === 'tag') ctx.log.note('exceptions', `exported tag "${name}"`);
    ctx.module.exports.push({ name, kind, index: r.u32() });
  }
}

export function readStartSection(r: ByteReader, ctx: SectionContext): void {
  ctx.module.start = r.u32();
}

export function readElementSection(r: ByteReader, ctx: SectionContext): void {
  const count = r.count('element segment');
  for (let i = 0; i < count; i++) {
    const at = r.pos;
    const where = `in element segment ${i}`;
    const tc = typeCtx(ctx, where);
    const flags = r.u32();
    if (flags > 7) r.fail(`unknown element segment flags ${flags}`, at);
    const active = (flags & 0x01) === 0;
    const explicitTable = (flags & 0x02) !== 0;
    const usesExpressions = (flags & 0x04) !== 0;
    if (active && explicitTable) r.u32();
    if (active) readConstantExpression(r, ctx, `in the offset of element segment ${i}`);
    if (!active || explicitTable) {
      if (usesExpressions) readRefType(r, tc);
      else if (r.u8() !== 0x00) r.fail('unknown element kind', r.pos - 1);
    }
    const items = r.count('element');
    for (let j = 0; j < items; j++) {
      if (usesExpressions) readConstantExpression(r, ctx, `in element ${j} of segment ${i}`);
      else r.u32();
    }
    ctx.module.elementSegments++;
    ctx.module.elementEntries += items;
  }
}

export function readDataCountSection(r: ByteReader, ctx: SectionContext): void {
  ctx.module.dataCount = r.u32();
}

export function readDataSection(r: ByteReader, ctx: SectionContext): void {
  const count = r.count('data segment');
  for (let i = 0; i < count; i++) {
    const at = r.pos;
    const flags = r.u32();
    if (flags > 2) r.fail(`unknown data segment flags ${flags}`, at);
    if (flags === 2) {
      const memory = r.u32();
      if (memory !== 0) ctx.log.note('multi-memory', `data segment ${i} for memory ${memory}`);
    }
    if (flags !== 1) readConstantExpression(r, ctx, `in the offset of data segment ${i}`);
    const size = r.u32();
    r.skip(size);
    ctx.module.dataSegments++;
    ctx.module.dataBytes += size;
  }
}

export function readCodeSection(r: ByteReader, ctx: SectionContext): void {
  const firstIndex = importCount(ctx.module, 'func');
  const count = capped(r, ctx, 'function body', 'functions', firstIndex);
  for (let i = 0; i < count; i++) {
    const start = r.pos;
    const size = r.u32();
    const bodyStart = r.pos;
    if (size > r.remaining) r.fail(`function body ${i} claims ${size} bytes but ${r.remaining} are left`, start);
    const end = bodyStart + size;
    const functionIndex = firstIndex + i;
    const body = new ByteReader(r.bytes, bodyStart, end);
    let codeStart = bodyStart;
    let locals = 0;
    try {
      const where = `in function ${functionIndex}`;
      const decls = body.count('local declaration');
      for (let j = 0; j < decls; j++) {
        locals += body.u32();
        if (locals > 0xffffffff) body.fail('too many locals');
        readValueType(body, typeCtx(ctx, where));
      }
      codeStart = body.pos;
      walkInstructions(body, {
        log: ctx.log, where, typeCount: knownTypes(ctx),
        visit: ctx.visit ? (instruction) => ctx.visit?.(instruction, functionIndex) : undefined,
      });
      if (!body.atEnd()) body.fail(`${body.remaining} bytes follow the final end of function ${functionIndex}`);
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error;
      ctx.reportBody(error, functionIndex);
    }
    ctx.module.codes.push({ start, bodyStart, codeStart, end, locals });
    r.pos = end;
  }
}
