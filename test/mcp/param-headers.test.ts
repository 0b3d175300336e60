/** The SEP-2243 rules as the SDK's McpServer applies them: which declarations count, and what matches. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { modernToolCall, paramHeaderDeclarations, paramHeaderMismatch } from '../../src/mcp/param-headers.js';

const headersOf = (values: Record<string, string>) => (name: string) => values[name.toLowerCase()] ?? null;

describe('paramHeaderDeclarations', () => {
  it('finds declarations along chains of properties, at any depth', () => {
    const found = paramHeaderDeclarations({
      type: 'object',
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        target: { type: 'object', properties: { zone: { type: 'integer', 'x-mcp-header': 'Zone' } } },
      },
    });
    assert.deepEqual(found, [
      { path: ['region'], headerName: 'Region', type: 'string' },
      { path: ['target', 'zone'], headerName: 'Zone', type: 'integer' },
    ]);
  });

  it('an invalid declaration anywhere means none are checked (a conforming client drops the tool)', () => {
    const valid = { type: 'string', 'x-mcp-header': 'Region' };
    const cases: Record<string, unknown> = {
      'under items': { type: 'object', properties: { a: valid, list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } } },
      'under anyOf': { type: 'object', properties: { a: valid }, anyOf: [{ properties: { b: { type: 'string', 'x-mcp-header': 'B' } } }] },
      'on the root': { type: 'object', 'x-mcp-header': 'Root', properties: { a: valid } },
      'not a token': { type: 'object', properties: { a: valid, b: { type: 'string', 'x-mcp-header': 'Has Space' } } },
      'an object type': { type: 'object', properties: { a: valid, b: { type: 'object', 'x-mcp-header': 'B' } } },
      'a name twice, case aside': { type: 'object', properties: { a: valid, b: { type: 'string', 'x-mcp-header': 'region' } } },
    };
    for (const [what, schema] of Object.entries(cases)) assert.deepEqual(paramHeaderDeclarations(schema), [], what);
  });

  it('number-typed declarations are not permitted yet still checked, as the SDK does', () => {
    const found = paramHeaderDeclarations({ type: 'object', properties: { ratio: { type: 'number', 'x-mcp-header': 'Ratio' } } });
    assert.deepEqual(found, [{ path: ['ratio'], headerName: 'Ratio', type: 'number' }]);
  });
});

describe('paramHeaderMismatch', () => {
  const declarations = paramHeaderDeclarations({
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      count: { type: 'integer', 'x-mcp-header': 'Count' },
      dry: { type: 'boolean', 'x-mcp-header': 'Dry' },
    },
  });

  it('accepts matching values: plain, Base64 sentinel, booleans, integers compared numerically', () => {
    const args = { region: ' padded ', count: 42, dry: false };
    const headers = { 'mcp-param-region': `=?base64?${Buffer.from(' padded ').toString('base64')}?=`, 'mcp-param-count': '42.0', 'mcp-param-dry': 'false' };
    assert.equal(paramHeaderMismatch(declarations, args, headersOf(headers)), undefined);
  });

  it('asks for no header when the argument is absent or null, and ignores one sent anyway', () => {
    assert.equal(paramHeaderMismatch(declarations, { region: null }, headersOf({ 'mcp-param-count': '9' })), undefined);
  });

  it('names the header for a missing, mismatched or badly encoded value', () => {
    assert.equal(paramHeaderMismatch(declarations, { dry: true }, headersOf({}))?.header, 'Mcp-Param-Dry');
    assert.equal(paramHeaderMismatch(declarations, { dry: true }, headersOf({ 'mcp-param-dry': 'True' }))?.header, 'Mcp-Param-Dry');
    assert.match(paramHeaderMismatch(declarations, { region: 'eu' }, headersOf({ 'mcp-param-region': '=?base64?ZX!1?=' }))!.message, /invalid Base64/);
    // A string argument is compared as text: "42.0" is not "42".
    const text = paramHeaderDeclarations({ type: 'object', properties: { v: { type: 'string', 'x-mcp-header': 'V' } } });
    assert.ok(paramHeaderMismatch(text, { v: '42' }, headersOf({ 'mcp-param-v': '42.0' })));
  });
});

describe('modernToolCall', () => {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
  it('is a tools/call request that claims 2026-07-28 or later in its envelope', () => {
    assert.deepEqual(modernToolCall({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', arguments: { a: 1 }, _meta: meta } }), { id: 1, name: 't', arguments: { a: 1 } });
    assert.equal(modernToolCall({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } } }), undefined);
    assert.equal(modernToolCall({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't' } }), undefined);
    assert.equal(modernToolCall({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }), undefined);
    assert.equal(modernToolCall([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 't', _meta: meta } }]), undefined);
  });
});
