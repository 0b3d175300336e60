/**
 * Walks an instruction sequence (a function body or a constant expression) one instruction at a
 * time, skipping every immediate exactly, noting instructions of refused proposals, and telling an
 * optional visitor where each instruction lies (the memory rewrite uses that to find memory.grow).
 */
import { ByteReader } from './reader.js';
import {
  ATOMIC, GC, Imm, MISC, OP_END, type OpInfo, PREFIX_ATOMIC, PREFIX_GC, PREFIX_MISC, PREFIX_SIMD, SIMD, SINGLE,
} from './opcodes.js';
import { readBlockType, readHeapType, readValueType, type TypeContext } from './value-types.js';

export interface Instruction {
  /** The first byte (an opcode, or a prefix). */
  byte: number;
  /** The opcode after a prefix, or the first byte again. */
  code: number;
  info: OpInfo;
  start: number;
  end: number;
}

export interface WalkContext extends TypeContext {
  /** How many types the module declares, to check block type indices. */
  typeCount: number;
  /** A constant expression (initializer): only constant instructions are allowed. */
  constant?: boolean;
  visit?: (instruction: Instruction) => void;
}

/** Instructions allowed in a WebAssembly 2.0 constant expression. */
const CONSTANT_SINGLE = new Set([0x0b, 0x23, 0x41, 0x42, 0x43, 0x44, 0xd0, 0xd2]);
/** i32/i64 add, sub, mul: the extended-const proposal's additions. */
const EXTENDED_CONST = new Set([0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e]);
const OP_DELEGATE = 0x18;
const OPENS_BLOCK = new Set([0x02, 0x03, 0x04, 0x06, 0x1f]);

const hex = (n: number): string => `0x${n.toString(16)}`;

function decodeOpcode(r: ByteReader): { byte: number; code: number; info: OpInfo } {
  const start = r.pos;
  const byte = r.u8();
  let info: OpInfo | undefined;
  let code = byte;
  switch (byte) {
    case PREFIX_MISC: code = r.u32(); info = MISC[code]; break;
    case PREFIX_SIMD: code = r.u32(); info = SIMD.get(code); break;
    case PREFIX_ATOMIC: code = r.u32(); info = ATOMIC.get(code); break;
    case PREFIX_GC: code = r.u32(); info = GC.get(code); break;
    default: info = SINGLE[byte];
  }
  if (!info) {
    const name = code === byte ? hex(byte) : `${hex(byte)} ${hex(code)}`;
    r.fail(`unknown opcode ${name}`, start);
  }
  return { byte, code, info };
}

function readMemArg(r: ByteReader, ctx: WalkContext, name: string, at: number): void {
  const align = r.u32();
  if (align & 0x40) {
    const memory = r.u32();
    ctx.log.note('multi-memory', `${name} on memory ${memory} ${ctx.where} (byte offset ${hex(at)})`);
  }
  const offset = r.u64();
  if (offset > 0xffffffffn) ctx.log.note('memory64', `${name} with a 64-bit offset ${ctx.where} (byte offset ${hex(at)})`);
}

function readMemoryIndex(r: ByteReader, ctx: WalkContext, name: string, at: number): void {
  const memory = r.u32();
  if (memory !== 0) ctx.log.note('multi-memory', `${name} on memory ${memory} ${ctx.where} (byte offset ${hex(at)})`);
}

function readImmediates(r: ByteReader, ctx: WalkContext, info: OpInfo, at: number): void {
  switch (info.imm) {
    case Imm.None: return;
    case Imm.BlockType: {
      const index = readBlockType(r, ctx);
      if (index !== null && index >= ctx.typeCount) r.fail(`block type ${index} does not exist`, at);
      return;
    }
    case Imm.U32: r.u32(); return;
    case Imm.U32x2: r.u32(); r.u32(); return;
    case Imm.BrTable: {
      const labels = r.count('br_table label');
      for (let i = 0; i <= labels; i++) r.u32();
      return;
    }
    case Imm.MemArg: readMemArg(r, ctx, info.name, at); return;
    case Imm.MemArgLane: readMemArg(r, ctx, info.name, at); r.u8(); return;
    case Imm.MemIdx: readMemoryIndex(r, ctx, info.name, at); return;
    case Imm.MemIdx2: readMemoryIndex(r, ctx, info.name, at); readMemoryIndex(r, ctx, info.name, at); return;
    case Imm.DataMemIdx: r.u32(); readMemoryIndex(r, ctx, info.name, at); return;
    case Imm.I32: r.s32(); return;
    case Imm.I64: r.s64(); return;
    case Imm.F32: r.skip(4); return;
    case Imm.F64: r.skip(8); return;
    case Imm.Bytes16: r.skip(16); return;
    case Imm.Lane: r.u8(); return;
    case Imm.HeapType: readHeapType(r, ctx); return;
    case Imm.SelectTypes: {
      const count = r.count('select type');
      for (let i = 0; i < count; i++) readValueType(r, ctx);
      return;
    }
    case Imm.TryTable: {
      readBlockType(r, ctx);
      const catches = r.count('try_table catch');
      for (let i = 0; i < catches; i++) {
        const kind = r.u8();
        if (kind > 3) r.fail(`unknown try_table catch kind ${kind}`, at);
        if (kind < 2) r.u32();
        r.u32();
      }
      return;
    }
    case Imm.BrOnCast: r.u8(); r.u32(); readHeapType(r, ctx); readHeapType(r, ctx); return;
    case Imm.Zero: if (r.u8() !== 0) r.fail('atomic.fence takes a zero byte', at); return;
  }
}

/**
 * Reads instructions up to and including the `end` that closes the sequence, leaving the reader
 * right after it. Throws DecodeError on anything that is not an instruction.
 */
export function walkInstructions(r: ByteReader, ctx: WalkContext): void {
  let depth = 1;
  for (;;) {
    const start = r.pos;
    const { byte, code, info } = decodeOpcode(r);
    if (info.feature) ctx.log.note(info.feature, `${info.name} ${ctx.where} (byte offset ${hex(start)})`);
    if (ctx.constant && byte !== PREFIX_GC && !(byte === PREFIX_SIMD && code === 12) && !CONSTANT_SINGLE.has(byte)) {
      if (EXTENDED_CONST.has(byte)) ctx.log.note('extended-const', `arithmetic ${ctx.where} (byte offset ${hex(start)})`);
      else r.fail(`${info.name} is not allowed in a constant expression`, start);
    }
    readImmediates(r, ctx, info, start);
    ctx.visit?.({ byte, code, info, start, end: r.pos });
    if (byte === OP_END || byte === OP_DELEGATE) {
      depth--;
      if (depth === 0) {
        if (byte !== OP_END) r.fail('delegate cannot end a function', start);
        return;
      }
    } else if (OPENS_BLOCK.has(byte)) {
      depth++;
    }
  }
}
