import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRequest } from '../../src/function/protocol.js';
import { SUBAKO_VERSION } from '../../src/version.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'subako', version: SUBAKO_VERSION },
  'io.modelcontextprotocol/clientCapabilities': {},
};

test('a request is one line of compact JSON with the params, _meta last, and a fresh id', () => {
  const a = buildRequest('call', 'tools/call', { name: 'greet', arguments: { name: 'Ada "quoted"\n' } });
  const b = buildRequest('call', 'tools/call', {});
  assert.ok(a.line.endsWith('\n'));
  assert.equal(a.line.indexOf('\n'), a.line.length - 1);
  assert.deepEqual(JSON.parse(a.line), {
    jsonrpc: '2.0', id: a.id, method: 'tools/call',
    params: { name: 'greet', arguments: { name: 'Ada "quoted"\n' }, _meta: META },
  });
  assert.deepEqual(JSON.parse(b.line).params, { _meta: META });
  assert.notEqual(a.id, b.id);
});

test('a call that wants progress carries our own progressToken first in _meta, the rest unchanged', () => {
  const request = buildRequest('call', 'tools/call', { name: 'work' }, 'progress-abc-1');
  assert.deepEqual(JSON.parse(request.line).params, { name: 'work', _meta: { progressToken: 'progress-abc-1', ...META } });
  assert.ok(request.line.includes('"_meta":{"progressToken":"progress-abc-1",'));
});
