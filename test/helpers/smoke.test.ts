import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wat } from './wat.js';

test('the WAT helper compiles a module that WebAssembly accepts', async () => {
  const bytes = await wat('(module (func (export "_start")) (memory (export "memory") 1))');
  assert.equal(WebAssembly.validate(bytes), true);
  assert.deepEqual([...bytes.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d]);
});
