/**
 * Decoding value, reference, heap and block types, and limits. WebAssembly 2.0 types pass quietly;
 * types from refused proposals are decoded in full (so decoding can go on) and noted in the log.
 */
import type { ByteReader } from './reader.js';
import type { FeatureLog } from './feature-log.js';
import type { ResizableLimits, ValueType } from './module-types.js';

/** Where in the module a type is being read, for the feature log (`in the type section`). */
export interface TypeContext {
  log: FeatureLog;
  where: string;
}

const NUMERIC: Readonly<Record<number, ValueType>> = {
  0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64', 0x7b: 'v128',
};

/** Abstract heap types by their one-byte code, and the proposal each needs (none for func/extern). */
const ABSTRACT_HEAP: Readonly<Record<number, { name: string; feature?: 'gc' | 'exceptions' }>> = {
  0x70: { name: 'func' }, 0x6f: { name: 'extern' },
  0x73: { name: 'nofunc', feature: 'gc' }, 0x72: { name: 'noextern', feature: 'gc' },
  0x71: { name: 'none', feature: 'gc' }, 0x6e: { name: 'any', feature: 'gc' }, 0x6d: { name: 'eq', feature: 'gc' },
  0x6c: { name: 'i31', feature: 'gc' }, 0x6b: { name: 'struct', feature: 'gc' }, 0x6a: { name: 'array', feature: 'gc' },
  0x69: { name: 'exn', feature: 'exceptions' }, 0x74: { name: 'noexn', feature: 'exceptions' },
};

/** True when `byte` alone is a negative s33, i.e. a type code rather than the start of a type index. */
const isTypeCode = (byte: number): boolean => (byte & 0xc0) === 0x40;

export function readHeapType(r: ByteReader, ctx: TypeContext): string {
  const start = r.pos;
  const byte = r.peekU8();
  if (isTypeCode(byte)) {
    r.u8();
    const known = ABSTRACT_HEAP[byte];
    if (!known) r.fail(`unknown heap type 0x${byte.toString(16)}`, start);
    if (known.feature) ctx.log.note(known.feature, `heap type ${known.name} ${ctx.where}`);
    return known.name;
  }
  const index = r.s33();
  if (index < 0) r.fail('malformed heap type', start);
  ctx.log.note('gc', `typed reference to type ${index} ${ctx.where}`);
  return String(index);
}

export function readValueType(r: ByteReader, ctx: TypeContext): ValueType {
  const start = r.pos;
  const byte = r.u8();
  const numeric = NUMERIC[byte];
  if (numeric) return numeric;
  if (byte === 0x70) return 'funcref';
  if (byte === 0x6f) return 'externref';
  if (byte === 0x63 || byte === 0x64) {
    const nullable = byte === 0x63;
    const heap = readHeapType(r, ctx);
    ctx.log.note('gc', `typed reference type (ref ${nullable ? 'null ' : ''}${heap}) ${ctx.where}`);
    return `(ref ${nullable ? 'null ' : ''}${heap})`;
  }
  const abstract = ABSTRACT_HEAP[byte];
  if (abstract) {
    if (abstract.feature) ctx.log.note(abstract.feature, `value type ${abstract.name}ref ${ctx.where}`);
    return `${abstract.name}ref`;
  }
  return r.fail(`unknown value type 0x${byte.toString(16)}`, start);
}

export function readRefType(r: ByteReader, ctx: TypeContext): ValueType {
  const start = r.pos;
  const type = readValueType(r, ctx);
  if (NUMERIC[r.bytes[start]]) r.fail(`expected a reference type, found ${type}`, start);
  return type;
}

/**
 * A block type: empty, one value type, or a type index (multi-value). Returns the type index when
 * there is one, so the caller can check it against the type section.
 */
export function readBlockType(r: ByteReader, ctx: TypeContext): number | null {
  const byte = r.peekU8();
  if (byte === 0x40) {
    r.u8();
    return null;
  }
  if (isTypeCode(byte) || byte === 0x63 || byte === 0x64) {
    readValueType(r, ctx);
    return null;
  }
  const start = r.pos;
  const index = r.s33();
  if (index < 0) r.fail('malformed block type', start);
  return index;
}

/**
 * Limits of a memory or table: flag 0x01 a maximum follows, 0x02 shared (threads), 0x04 64-bit
 * (memory64). Other flag bits are not WebAssembly this host knows.
 */
export function readLimits(r: ByteReader, ctx: TypeContext, of: 'memory' | 'table'): ResizableLimits {
  const start = r.pos;
  const flags = r.u8();
  if ((flags & ~0x07) !== 0) r.fail(`unknown ${of} limits flags 0x${flags.toString(16)}`, start);
  const shared = (flags & 0x02) !== 0;
  const is64 = (flags & 0x04) !== 0;
  if (shared) ctx.log.note('threads', `shared ${of} ${ctx.where}`);
  if (is64) ctx.log.note('memory64', `64-bit ${of} ${ctx.where}`);
  const read = (): number => (is64 ? Number(r.u64()) : r.u32());
  const min = read();
  const max = (flags & 0x01) !== 0 ? read() : null;
  if (max !== null && max < min) r.fail(`${of} maximum ${max} is below its minimum ${min}`, start);
  return { min, max, shared, is64 };
}
