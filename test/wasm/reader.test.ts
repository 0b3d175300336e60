import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteReader, DecodeError } from '../../src/wasm/reader.js';
import fc from 'fast-check';
import { encodeS32, encodeU32 } from '../../src/wasm/encode.js';

const reader = (...bytes: number[]): ByteReader => new ByteReader(new Uint8Array(bytes));

describe('LEB128 numbers', () => {
  test('unsigned 32-bit numbers decode, including the largest and a padded zero', () => {
    assert.equal(reader(0x00).u32(), 0);
    assert.equal(reader(0xe5, 0x8e, 0x26).u32(), 624485);
    assert.equal(reader(0xff, 0xff, 0xff, 0xff, 0x0f).u32(), 0xffffffff);
    assert.equal(reader(0x80, 0x80, 0x00).u32(), 0);
  });

  test('an unsigned 32-bit number too long or too large is a DecodeError at its start', () => {
    assert.throws(() => reader(0x80, 0x80, 0x80, 0x80, 0x80, 0x00).u32(), DecodeError);
    assert.throws(() => reader(0xff, 0xff, 0xff, 0xff, 0x1f).u32(), /too large/);
    const r = reader(0x01, 0x80, 0x80);
    r.u8();
    assert.throws(() => r.u32(), (error: DecodeError) => error.offset === 3 && /end of data/.test(error.message));
  });

  test('signed 32-bit numbers decode at both ends of the range', () => {
    assert.equal(reader(0x7f).s32(), -1);
    assert.equal(reader(0xc0, 0xbb, 0x78).s32(), -123456);
    assert.equal(reader(0x80, 0x80, 0x80, 0x80, 0x78).s32(), -2147483648);
    assert.equal(reader(0xff, 0xff, 0xff, 0xff, 0x07).s32(), 2147483647);
    assert.throws(() => reader(0xff, 0xff, 0xff, 0xff, 0x0f).s32(), /too large/);
  });

  test('signed 33-bit block types and 64-bit constants decode', () => {
    assert.equal(reader(0x40).s33(), -64);
    assert.equal(reader(0x05).s33(), 5);
    assert.equal(reader(0x80, 0x80, 0x80, 0x80, 0x7f).s64(), -(2n ** 28n));
    assert.equal(reader(...Array(9).fill(0xff), 0x00).s64(), 2n ** 63n - 1n);
    assert.equal(reader(...Array(9).fill(0x80), 0x7f).s64(), -(2n ** 63n));
    assert.throws(() => reader(...Array(9).fill(0xff), 0x01).s64(), /too large/);
  });

  test('unsigned 64-bit numbers decode up to 2^64 - 1', () => {
    assert.equal(reader(...Array(9).fill(0xff), 0x01).u64(), 2n ** 64n - 1n);
    assert.throws(() => reader(...Array(9).fill(0xff), 0x03).u64(), /too large/);
  });

  test('what the encoder writes, the reader reads back', () => {
    for (const value of [0, 1, 63, 64, 127, 128, 16383, 16384, 2 ** 31, 2 ** 32 - 1]) {
      assert.equal(new ByteReader(new Uint8Array(encodeU32(value))).u32(), value);
    }
    for (const value of [0, -1, 63, -64, 64, -65, 2 ** 31 - 1, -(2 ** 31)]) {
      assert.equal(new ByteReader(new Uint8Array(encodeS32(value))).s32(), value);
    }
  });
});

test('any 32-bit integer survives an encode and decode, signed and unsigned', () => {
  fc.assert(fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (value) => {
    assert.equal(new ByteReader(new Uint8Array(encodeS32(value))).s32(), value);
    assert.equal(new ByteReader(new Uint8Array(encodeU32(value >>> 0))).u32(), value >>> 0);
  }), { numRuns: 2000 });
});

describe('bounds', () => {
  test('a reader never reads past its end, even when the bytes go on', () => {
    const r = new ByteReader(new Uint8Array([1, 2, 3, 4]), 1, 3);
    assert.equal(r.u8(), 2);
    assert.equal(r.u8(), 3);
    assert.throws(() => r.u8(), DecodeError);
    assert.throws(() => new ByteReader(new Uint8Array([1, 2, 3]), 0, 2).skip(3), DecodeError);
  });

  test('a vector count larger than the bytes left is refused before anything is allocated', () => {
    assert.throws(() => reader(0xff, 0xff, 0xff, 0xff, 0x0f).count('import'), /import count 4294967295 is larger/);
  });

  test('names are length-prefixed UTF-8 and invalid UTF-8 is a DecodeError', () => {
    assert.equal(reader(0x03, 0x61, 0x62, 0x63).name(), 'abc');
    assert.equal(reader(0x02, 0xc3, 0xa9).name(), 'é');
    assert.throws(() => reader(0x02, 0xc3, 0x28).name(), /not valid UTF-8/);
    assert.throws(() => reader(0x05, 0x61).name(), DecodeError);
  });
});
