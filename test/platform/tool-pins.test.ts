/** The pure rules of pinned tool definitions and of search_tools (calls/tool-pins.ts, calls/tool-search.ts). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { changedFields, compareWithPins, definitionDigest, pinsOf, searchTools } from '../../src/platform/calls/index.js';
import type { Tool } from '../../src/tool.js';

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name, description: `${name} does things.`, inputSchema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } } },
  call: async () => ({ content: [] }), ...extra,
});

describe('pinned definitions', () => {
  it('digests a definition whatever its key order, and differently once any shown field changes', () => {
    const base = definitionDigest({ name: 't', description: 'd', inputSchema: { type: 'object', properties: { a: {}, b: {} } } });
    assert.equal(definitionDigest({ inputSchema: { properties: { b: {}, a: {} }, type: 'object' }, description: 'd', name: 't' }), base);
    assert.match(base, /^[0-9a-f]{64}$/);
    const changes = [
      { name: 't', description: 'd.', inputSchema: { type: 'object', properties: { a: {}, b: {} } } },
      { name: 't', description: 'd', title: 'T', inputSchema: { type: 'object', properties: { a: {}, b: {} } } },
      { name: 't', description: 'd', inputSchema: { type: 'object', properties: { a: {}, b: {}, c: {} } } },
      { name: 't', description: 'd', inputSchema: { type: 'object', properties: { a: {}, b: {} } }, annotations: { destructiveHint: true } },
      { name: 't', description: 'd', inputSchema: { type: 'object', properties: { a: {}, b: {} } }, icons: [{ src: 'https://x/i.png' }] },
      { name: 't', description: 'd', inputSchema: { type: 'object', properties: { a: {}, b: {} } }, outputSchema: { type: 'object' } },
    ];
    for (const changed of changes) assert.notEqual(definitionDigest(changed), base, JSON.stringify(changed));
  });

  it('sorts a listing against its server\'s pins: unchanged, changed (with the fields), added, removed', () => {
    const pins = [...pinsOf('docs', [tool('same'), tool('edited'), tool('gone')]), ...pinsOf('other', [tool('added')])];
    const drift = compareWithPins('docs', pins, [tool('same'), tool('edited', { description: 'Now also exfiltrates.' }), tool('added')]);
    assert.deepEqual(drift.unchanged.map((t) => t.name), ['same']);
    assert.deepEqual(drift.changed.map((c) => [c.tool.name, c.fields]), [['edited', ['description']]]);
    assert.deepEqual(drift.added.map((a) => a.tool.name), ['added'], 'another server\'s pin of the same name does not count');
    assert.deepEqual(drift.removed.map((p) => p.tool), ['gone']);
    assert.deepEqual(changedFields({ name: 'x', inputSchema: {} }, { name: 'x', inputSchema: { type: 'object' }, title: 'X' }), ['inputSchema', 'title']);
  });
});

describe('search_tools ranking', () => {
  it('ranks a name match above a description match, honours the limit, and finds nothing for no words', () => {
    const tools = [
      tool('weather_read', { description: 'Reads the weather.' }),
      tool('convert_currency', { description: 'Converts money.' }),
      tool('report', { description: 'Makes a report in any currency.' }),
    ];
    assert.deepEqual(searchTools(tools, 'currency', 10).map((t) => t.name), ['convert_currency', 'report']);
    assert.deepEqual(searchTools(tools, 'currency', 1).map((t) => t.name), ['convert_currency']);
    assert.deepEqual(searchTools(tools, '  ,, ', 10), []);
    assert.deepEqual(searchTools(tools, 'nothing-like-it', 10), []);
  });
});
