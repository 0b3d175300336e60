/**
 * The opcode table against an independent decoder: for every opcode, wabt's binary reader (all
 * features on) and our walker must agree on whether it exists and on how many immediate bytes follow.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import wabtInit from 'wabt';
import { ATOMIC, GC, Imm, MISC, type OpInfo, SIMD, SINGLE } from '../../src/wasm/opcodes.js';
import { parseModule } from '../../src/wasm/parse-module.js';
import { encodeU32 } from '../../src/wasm/encode.js';
import { body, FUNC, moduleOf, section, vec } from './module-builder.js';

const ALL_FEATURES = {
  exceptions: true, mutable_globals: true, sat_float_to_int: true, sign_extension: true, simd: true, threads: true,
  function_references: true, multi_value: true, tail_call: true, bulk_memory: true, reference_types: true, gc: true,
  memory64: true, extended_const: true, relaxed_simd: true, multi_memory: true,
};

/**
 * Immediates for each kind, ending in a byte that is no opcode (0x27) or that is wrong where it would
 * land (0x07 `catch` outside a try), so a decoder that reads one byte too few or too many fails.
 */
const X = 0x27;
const IMMEDIATES: Record<Imm, number[]> = {
  [Imm.None]: [], [Imm.BlockType]: [0x40], [Imm.U32]: [X], [Imm.U32x2]: [X, X], [Imm.BrTable]: [1, X, X],
  [Imm.MemArg]: [0, X], [Imm.MemArgLane]: [0, X, 0x07], [Imm.MemIdx]: [0], [Imm.MemIdx2]: [0, 0],
  [Imm.DataMemIdx]: [X, 0], [Imm.I32]: [X], [Imm.I64]: [X], [Imm.F32]: [X, X, X, X], [Imm.F64]: Array(8).fill(X),
  [Imm.Bytes16]: Array(16).fill(1), [Imm.Lane]: [0x07], [Imm.HeapType]: [0x70], [Imm.SelectTypes]: [1, 0x7f],
  [Imm.TryTable]: [0x40, 0], [Imm.BrOnCast]: [0, X, 0x70, 0x70], [Imm.Zero]: [0],
};

/** Opcodes this wabt cannot decode (later GC / typed-reference drafts), or only inside a try block. */
const WABT_CANNOT = new Set(['catch', 'delegate', 'catch_all', 'else', 'end', 'call_ref', 'return_call_ref',
  'br_on_null', 'br_on_non_null', 'ref.as_non_null', 'ref.eq']);

function moduleWith(code: number[]): Uint8Array<ArrayBuffer> {
  return moduleOf(section(1, vec([[FUNC, 0, 0]])), section(3, vec([[0]])), section(12, [1]),
    section(10, vec([body([...code, 0x0b])])));
}

const tables: Array<[string, number | null, (code: number) => OpInfo | undefined, number]> = [
  ['single-byte', null, (c) => SINGLE[c], 0xfa],
  ['0xFC', 0xfc, (c) => MISC[c], 0x40],
  ['0xFD', 0xfd, (c) => SIMD.get(c), 0x140],
  ['0xFE', 0xfe, (c) => ATOMIC.get(c), 0x80],
];

describe('the opcode table agrees with wabt', async () => {
  const wabt = await wabtInit();
  const wabtReads = (bytes: Uint8Array): boolean => {
    try {
      wabt.readWasm(bytes, ALL_FEATURES).destroy();
      return true;
    } catch {
      return false;
    }
  };

  for (const [label, prefix, lookup, last] of tables) {
    test(`${label} opcodes: the same ones exist, with the same immediates`, () => {
      const disagreements: string[] = [];
      for (let code = 0; code <= last; code++) {
        if (prefix === null && code >= 0xfb) continue;
        const info = lookup(code);
        if (info && WABT_CANNOT.has(info.name)) continue;
        const opcode = prefix === null ? [code] : [prefix, ...encodeU32(code)];
        const closes = info && (info.imm === Imm.BlockType || info.imm === Imm.TryTable) ? [0x0b] : [];
        const bytes = moduleWith([...opcode, ...(info ? IMMEDIATES[info.imm] : []), ...closes]);
        const ours = parseModule(bytes).malformed.length === 0;
        if (ours !== wabtReads(bytes)) disagreements.push(`0x${code.toString(16)} (${info?.name ?? 'unknown'})`);
      }
      assert.deepEqual(disagreements, []);
    });
  }

  test('every 0xFB (GC) opcode is known to be refused, and unassigned ones are malformed', () => {
    assert.equal(GC.size, 31);
    for (const info of GC.values()) assert.equal(info.feature, 'gc');
    assert.match(parseModule(moduleWith([0xfb, 0x40])).malformed[0].message, /unknown opcode 0xfb 0x40/);
  });
});
