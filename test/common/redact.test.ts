import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { REDACTED, redactArguments, redactText } from '../../src/common/index.js';

describe('redacting the call log', () => {
  it('replaces values under keys that name secrets', () => {
    assert.deepEqual(redactArguments({ user: 'ada', password: 'hunter2', nested: { api_key: 'k', Authorization: 'Bearer x' } }), {
      user: 'ada', password: REDACTED, nested: { api_key: REDACTED, Authorization: REDACTED },
    });
  });

  it('replaces the session\'s known secret values wherever they appear', () => {
    assert.deepEqual(redactArguments({ note: 'my token is tok_123456 ok', list: ['tok_123456'] }, ['tok_123456']), {
      note: `my token is ${REDACTED} ok`, list: [REDACTED],
    });
    assert.equal(redactText('x tok_123456 y', ['tok_123456']), `x ${REDACTED} y`);
  });

  it('bounds what it keeps', () => {
    const out = redactArguments({ big: 'x'.repeat(200_000) }) as { truncated: boolean; preview: string };
    assert.equal(out.truncated, true);
    assert.ok(out.preview.length <= 64 * 1024);
  });
});
