/** The random pool: fresh bytes every take, across refills, and a clear refusal of what it cannot give. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { takeRandomBytes } from '../../src/common/index.js';

test('every take is fresh: 20,000 takes of 8 bytes (forty refills of the pool) never repeat, and no take is all zeros', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 20_000; i++) {
    const bytes = takeRandomBytes(8);
    assert.equal(bytes.length, 8);
    const hex = Buffer.from(bytes).toString('hex');
    assert.notEqual(hex, '0000000000000000');
    assert.ok(!seen.has(hex), `a repeated take: ${hex}`);
    seen.add(hex);
  }
});

test('a take is a copy the taker owns, and more than the pool holds is refused by name', () => {
  const a = takeRandomBytes(16);
  const copy = Buffer.from(a).toString('hex');
  takeRandomBytes(4096);
  assert.equal(Buffer.from(a).toString('hex'), copy, 'a refill does not change what was taken');
  assert.equal(a.buffer.byteLength, 16);
  assert.throws(() => takeRandomBytes(4097), /takes 0 to 4096 bytes, not 4097/);
  assert.throws(() => takeRandomBytes(-1), RangeError);
});
