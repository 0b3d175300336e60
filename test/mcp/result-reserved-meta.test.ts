/** withoutReservedMeta: a served result drops the protocol's reserved `_meta` keys and keeps the rest. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withoutReservedMeta } from '../../src/mcp/result.js';

describe('a served result carries no reserved _meta key of its producer', () => {
  it('drops every io.modelcontextprotocol/ key, keeps the others', () => {
    const result = withoutReservedMeta({
      content: [{ type: 'text', text: 'x' }],
      isError: true,
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'up', version: '1' }, 'io.modelcontextprotocol/related-task': {}, 'acme.dev/id': 7 },
    });
    assert.deepEqual(result, { content: [{ type: 'text', text: 'x' }], isError: true, _meta: { 'acme.dev/id': 7 } });
  });

  it('a _meta left empty is dropped; a result without reserved keys is returned as it is', () => {
    assert.deepEqual(withoutReservedMeta({ content: [], _meta: { 'io.modelcontextprotocol/serverInfo': {} } }), { content: [] });
    const untouched = { content: [], _meta: { 'io.modelcontextprotocol': 'not the prefix', other: 1 } };
    assert.equal(withoutReservedMeta(untouched), untouched);
  });
});
