import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkDiscoverResult, checkTools, readToolsPage } from '../../src/function/tool-rules.js';

const tool = (name: string, extra: Record<string, unknown> = {}) => ({ name, description: 'd', inputSchema: { type: 'object' }, ...extra });
const codes = (problems: { code: string }[]) => problems.map((p) => p.code);

describe('server/discover', () => {
  test('an answer that speaks 2026-07-28 and offers tools is accepted', () => {
    assert.deepEqual(checkDiscoverResult({ supportedVersions: ['2025-11-25', '2026-07-28'], capabilities: { tools: {} } }), []);
  });
  test('no 2026-07-28 in supportedVersions is refused', () => {
    assert.deepEqual(codes(checkDiscoverResult({ supportedVersions: ['2025-11-25'], capabilities: { tools: {} } })), ['discovery.version']);
  });
  test('no tools capability is refused', () => {
    assert.deepEqual(codes(checkDiscoverResult({ supportedVersions: ['2026-07-28'], capabilities: {} })), ['discovery.capability']);
  });
  test('a non-object answer is refused', () => {
    assert.deepEqual(codes(checkDiscoverResult('yes')), ['discovery.result']);
  });
});

describe('tools/list pages', () => {
  test('a page without a tools array is refused', () => {
    assert.equal((readToolsPage({}, 1) as { code: string }).code, 'discovery.tools-list');
  });
  test('a non-string nextCursor is refused', () => {
    assert.equal((readToolsPage({ tools: [], nextCursor: 3 }, 2) as { code: string }).code, 'discovery.cursor');
  });
  test('a string nextCursor asks for the next page', () => {
    assert.deepEqual(readToolsPage({ tools: [], nextCursor: 'p2' }, 1), { tools: [], nextCursor: 'p2' });
  });
});

describe('the tools table', () => {
  test('1 to 64 tools with unique, well-formed names are accepted', () => {
    const tools = Array.from({ length: 64 }, (_, i) => tool(`t_${i}-x`));
    const checked = checkTools(tools);
    assert.deepEqual(checked.problems, []);
    assert.equal(checked.tools.length, 64);
  });
  test('0 tools is refused', () => assert.deepEqual(codes(checkTools([]).problems), ['tools.count']));
  test('65 tools is refused', () => {
    assert.deepEqual(codes(checkTools(Array.from({ length: 65 }, (_, i) => tool(`t${i}`))).problems), ['tools.count']);
  });
  test('duplicate names are refused', () => assert.deepEqual(codes(checkTools([tool('a'), tool('a')]).problems), ['tools.duplicate']));
  for (const name of ['', 'Upper', 'has space', 'dot.name', 'x'.repeat(65), 'ünï']) {
    test(`a name outside ^[a-z0-9_-]{1,64}$ is refused: ${JSON.stringify(name)}`, () => {
      assert.deepEqual(codes(checkTools([tool(name)]).problems), ['tools.name']);
    });
  }
  test('a name of exactly 64 characters is accepted', () => assert.deepEqual(checkTools([tool('x'.repeat(64))]).problems, []));
  test('a description over 1,024 characters is refused; 1,024 is accepted', () => {
    assert.deepEqual(checkTools([tool('a', { description: 'é'.repeat(1024) })]).problems, []);
    assert.deepEqual(codes(checkTools([tool('a', { description: 'd'.repeat(1025) })]).problems), ['tools.description']);
  });
  test('an inputSchema without "type": "object" at its top is refused', () => {
    assert.deepEqual(codes(checkTools([tool('a', { inputSchema: { type: 'string' } })]).problems), ['tools.input-schema']);
    assert.deepEqual(codes(checkTools([tool('a', { inputSchema: undefined })]).problems), ['tools.input-schema']);
  });
  test('an inputSchema over 64 KiB is refused', () => {
    const big = { type: 'object', description: 'x'.repeat(64 * 1024) };
    assert.deepEqual(codes(checkTools([tool('a', { inputSchema: big })]).problems), ['tools.input-schema-size']);
  });
  test('an outputSchema over 64 KiB is refused', () => {
    const big = { type: 'object', description: 'x'.repeat(64 * 1024) };
    assert.deepEqual(codes(checkTools([tool('a', { outputSchema: big })]).problems), ['tools.output-schema-size']);
  });
  test('all tools together over 256 KiB are refused', () => {
    const tools = Array.from({ length: 5 }, (_, i) => tool(`t${i}`, { inputSchema: { type: 'object', description: 'x'.repeat(60 * 1024) } }));
    assert.deepEqual(codes(checkTools(tools).problems), ['tools.total-size']);
  });
  test('every broken rule is reported at once', () => {
    assert.deepEqual(codes(checkTools([tool('A'), tool('b', { inputSchema: {} }), tool('b')]).problems), ['tools.name', 'tools.input-schema', 'tools.duplicate']);
  });
});
