/**
 * The instruction set as the code walker needs it: for each opcode, how its immediates are encoded
 * (so they can be skipped exactly) and, for instructions of a refused proposal, which one.
 * Covers WebAssembly 2.0 and the proposals the checks refuse (threads, exceptions, tail calls,
 * memory64 memargs, multi-memory, relaxed SIMD, GC and typed function references, extended const).
 */
import type { RefusedFeature } from './problem-codes.js';

export const enum Imm {
  None,
  BlockType,
  /** One u32 index or depth. */
  U32,
  /** Two u32 indices (call_indirect, table.copy, struct.get …). */
  U32x2,
  BrTable,
  MemArg,
  MemArgLane,
  /** memory.size / memory.grow / memory.fill: one memory index (0 unless multi-memory). */
  MemIdx,
  /** memory.copy: two memory indices. */
  MemIdx2,
  /** memory.init: a data index, then a memory index. */
  DataMemIdx,
  I32,
  I64,
  F32,
  F64,
  /** v128.const, i8x16.shuffle: sixteen bytes. */
  Bytes16,
  Lane,
  HeapType,
  SelectTypes,
  TryTable,
  BrOnCast,
  /** atomic.fence: one reserved zero byte. */
  Zero,
}

export interface OpInfo {
  name: string;
  imm: Imm;
  feature?: RefusedFeature;
}

const op = (name: string, imm: Imm = Imm.None, feature?: RefusedFeature): OpInfo =>
  feature ? { name, imm, feature } : { name, imm };

/** Single-byte opcodes. Numeric instructions 0x45–0xC4 have no immediates and are filled in below. */
export const SINGLE: Array<OpInfo | undefined> = new Array(256);
const single: Record<number, OpInfo> = {
  0x00: op('unreachable'), 0x01: op('nop'),
  0x02: op('block', Imm.BlockType), 0x03: op('loop', Imm.BlockType), 0x04: op('if', Imm.BlockType),
  0x05: op('else'),
  0x06: op('try', Imm.BlockType, 'exceptions'), 0x07: op('catch', Imm.U32, 'exceptions'),
  0x08: op('throw', Imm.U32, 'exceptions'), 0x09: op('rethrow', Imm.U32, 'exceptions'),
  0x0a: op('throw_ref', Imm.None, 'exceptions'),
  0x0b: op('end'), 0x0c: op('br', Imm.U32), 0x0d: op('br_if', Imm.U32), 0x0e: op('br_table', Imm.BrTable),
  0x0f: op('return'), 0x10: op('call', Imm.U32), 0x11: op('call_indirect', Imm.U32x2),
  0x12: op('return_call', Imm.U32, 'tail-call'), 0x13: op('return_call_indirect', Imm.U32x2, 'tail-call'),
  0x14: op('call_ref', Imm.U32, 'gc'), 0x15: op('return_call_ref', Imm.U32, 'tail-call'),
  0x18: op('delegate', Imm.U32, 'exceptions'), 0x19: op('catch_all', Imm.None, 'exceptions'),
  0x1a: op('drop'), 0x1b: op('select'), 0x1c: op('select', Imm.SelectTypes),
  0x1f: op('try_table', Imm.TryTable, 'exceptions'),
  0x20: op('local.get', Imm.U32), 0x21: op('local.set', Imm.U32), 0x22: op('local.tee', Imm.U32),
  0x23: op('global.get', Imm.U32), 0x24: op('global.set', Imm.U32),
  0x25: op('table.get', Imm.U32), 0x26: op('table.set', Imm.U32),
  0x3f: op('memory.size', Imm.MemIdx), 0x40: op('memory.grow', Imm.MemIdx),
  0x41: op('i32.const', Imm.I32), 0x42: op('i64.const', Imm.I64),
  0x43: op('f32.const', Imm.F32), 0x44: op('f64.const', Imm.F64),
  0xd0: op('ref.null', Imm.HeapType), 0xd1: op('ref.is_null'), 0xd2: op('ref.func', Imm.U32),
  0xd3: op('ref.as_non_null', Imm.None, 'gc'), 0xd4: op('br_on_null', Imm.U32, 'gc'),
  0xd5: op('ref.eq', Imm.None, 'gc'), 0xd6: op('br_on_non_null', Imm.U32, 'gc'),
};
const LOAD_STORE = [
  'i32.load', 'i64.load', 'f32.load', 'f64.load', 'i32.load8_s', 'i32.load8_u', 'i32.load16_s', 'i32.load16_u',
  'i64.load8_s', 'i64.load8_u', 'i64.load16_s', 'i64.load16_u', 'i64.load32_s', 'i64.load32_u',
  'i32.store', 'i64.store', 'f32.store', 'f64.store', 'i32.store8', 'i32.store16', 'i64.store8', 'i64.store16',
  'i64.store32',
];
LOAD_STORE.forEach((name, i) => { single[0x28 + i] = op(name, Imm.MemArg); });
for (let code = 0x45; code <= 0xc4; code++) single[code] = op(`numeric 0x${code.toString(16)}`);
for (const [code, info] of Object.entries(single)) SINGLE[Number(code)] = info;

/** 0xFC prefix: saturating truncation, bulk memory, table instructions. */
export const MISC: Record<number, OpInfo> = {
  0: op('i32.trunc_sat_f32_s'), 1: op('i32.trunc_sat_f32_u'), 2: op('i32.trunc_sat_f64_s'), 3: op('i32.trunc_sat_f64_u'),
  4: op('i64.trunc_sat_f32_s'), 5: op('i64.trunc_sat_f32_u'), 6: op('i64.trunc_sat_f64_s'), 7: op('i64.trunc_sat_f64_u'),
  8: op('memory.init', Imm.DataMemIdx), 9: op('data.drop', Imm.U32),
  10: op('memory.copy', Imm.MemIdx2), 11: op('memory.fill', Imm.MemIdx),
  12: op('table.init', Imm.U32x2), 13: op('elem.drop', Imm.U32), 14: op('table.copy', Imm.U32x2),
  15: op('table.grow', Imm.U32), 16: op('table.size', Imm.U32), 17: op('table.fill', Imm.U32),
};

/** 0xFD prefix: 128-bit SIMD; 0x100–0x113 are relaxed SIMD. */
export const SIMD: Map<number, OpInfo> = new Map();
{
  const memarg = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 92, 93];
  for (const code of memarg) SIMD.set(code, op(`simd 0x${code.toString(16)}`, Imm.MemArg));
  SIMD.set(12, op('v128.const', Imm.Bytes16));
  SIMD.set(13, op('i8x16.shuffle', Imm.Bytes16));
  for (let code = 21; code <= 34; code++) SIMD.set(code, op(`simd lane 0x${code.toString(16)}`, Imm.Lane));
  for (let code = 84; code <= 91; code++) SIMD.set(code, op(`simd lane memory 0x${code.toString(16)}`, Imm.MemArgLane));
  // Opcodes the final SIMD proposal leaves unassigned.
  const unassigned = new Set([0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb, 0xc2, 0xc5, 0xc6, 0xcf,
    0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee]);
  for (let code = 0; code <= 0xff; code++) {
    if (!SIMD.has(code) && !unassigned.has(code)) SIMD.set(code, op(`simd 0x${code.toString(16)}`));
  }
  const relaxed = [
    'i8x16.relaxed_swizzle', 'i32x4.relaxed_trunc_f32x4_s', 'i32x4.relaxed_trunc_f32x4_u',
    'i32x4.relaxed_trunc_f64x2_s_zero', 'i32x4.relaxed_trunc_f64x2_u_zero', 'f32x4.relaxed_madd',
    'f32x4.relaxed_nmadd', 'f64x2.relaxed_madd', 'f64x2.relaxed_nmadd', 'i8x16.relaxed_laneselect',
    'i16x8.relaxed_laneselect', 'i32x4.relaxed_laneselect', 'i64x2.relaxed_laneselect', 'f32x4.relaxed_min',
    'f32x4.relaxed_max', 'f64x2.relaxed_min', 'f64x2.relaxed_max', 'i16x8.relaxed_q15mulr_s',
    'i16x8.relaxed_dot_i8x16_i7x16_s', 'i32x4.relaxed_dot_i8x16_i7x16_add_s',
  ];
  relaxed.forEach((name, i) => SIMD.set(0x100 + i, op(name, Imm.None, 'relaxed-simd')));
}

/** 0xFE prefix: threads (atomics). */
export const ATOMIC: Map<number, OpInfo> = new Map([
  [0x00, op('memory.atomic.notify', Imm.MemArg, 'threads')],
  [0x01, op('memory.atomic.wait32', Imm.MemArg, 'threads')],
  [0x02, op('memory.atomic.wait64', Imm.MemArg, 'threads')],
  [0x03, op('atomic.fence', Imm.Zero, 'threads')],
]);
for (let code = 0x10; code <= 0x4e; code++) ATOMIC.set(code, op(`atomic 0x${code.toString(16)}`, Imm.MemArg, 'threads'));

/** 0xFB prefix: GC. Every one is refused, but skipped exactly so the rest of the body is still checked. */
export const GC: Map<number, OpInfo> = new Map();
{
  const table: Array<[number, string, Imm]> = [
    [0, 'struct.new', Imm.U32], [1, 'struct.new_default', Imm.U32], [2, 'struct.get', Imm.U32x2],
    [3, 'struct.get_s', Imm.U32x2], [4, 'struct.get_u', Imm.U32x2], [5, 'struct.set', Imm.U32x2],
    [6, 'array.new', Imm.U32], [7, 'array.new_default', Imm.U32], [8, 'array.new_fixed', Imm.U32x2],
    [9, 'array.new_data', Imm.U32x2], [10, 'array.new_elem', Imm.U32x2], [11, 'array.get', Imm.U32],
    [12, 'array.get_s', Imm.U32], [13, 'array.get_u', Imm.U32], [14, 'array.set', Imm.U32],
    [15, 'array.len', Imm.None], [16, 'array.fill', Imm.U32], [17, 'array.copy', Imm.U32x2],
    [18, 'array.init_data', Imm.U32x2], [19, 'array.init_elem', Imm.U32x2], [20, 'ref.test', Imm.HeapType],
    [21, 'ref.test null', Imm.HeapType], [22, 'ref.cast', Imm.HeapType], [23, 'ref.cast null', Imm.HeapType],
    [24, 'br_on_cast', Imm.BrOnCast], [25, 'br_on_cast_fail', Imm.BrOnCast], [26, 'any.convert_extern', Imm.None],
    [27, 'extern.convert_any', Imm.None], [28, 'ref.i31', Imm.None], [29, 'i31.get_s', Imm.None],
    [30, 'i31.get_u', Imm.None],
  ];
  for (const [code, name, imm] of table) GC.set(code, op(name, imm, 'gc'));
}

export const PREFIX_GC = 0xfb;
export const PREFIX_MISC = 0xfc;
export const PREFIX_SIMD = 0xfd;
export const PREFIX_ATOMIC = 0xfe;

export const OP_END = 0x0b;
export const OP_MEMORY_GROW = 0x40;
