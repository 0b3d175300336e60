/**
 * The library face keeps the first names of the call limits (`Limits`, `DEFAULT_LIMITS`) beside the names
 * that say which limits they are, so a caller written against either compiles and gets the same values.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as subako from '../src/index.js';
import type { CallLimits, Limits } from '../src/index.js';

test('DEFAULT_LIMITS is DEFAULT_CALL_LIMITS, and a Limits is a CallLimits', () => {
  assert.equal(subako.DEFAULT_LIMITS, subako.DEFAULT_CALL_LIMITS);
  assert.equal(subako.DEFAULT_CALL_LIMITS.callTimeoutMs, 30_000);
  // Both ways assignable: the old name is the same type, not a look-alike.
  const old: Limits = { ...subako.DEFAULT_CALL_LIMITS };
  const renamed: CallLimits = old;
  assert.deepEqual(renamed, subako.DEFAULT_LIMITS);
});
