import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { FunctionHost } from '../../src/function/host.js';
import { GREET, probe, Scratch } from './guests.js';

const tools = (list: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ tools: list, ...extra });
const tool = (name: string, extra: Record<string, unknown> = {}) => ({ name, description: 'd', inputSchema: { type: 'object' }, ...extra });

let host: FunctionHost;
let scratch: Scratch;
before(() => {
  host = new FunctionHost({ poolSize: 2, limits: { discoveryTimeoutMs: 3000, memoryBytes: 64 << 20 } });
  scratch = new Scratch();
});
after(async () => {
  await host.close();
  scratch.cleanup();
});

async function discover(assets: Record<string, string> | null) {
  const loaded = await host.load(probe(assets ? scratch.files(assets) : null));
  return host.discover(loaded);
}
const codes = (result: { problems: { code: string }[] }) => result.problems.map((p) => p.code);

describe('discovery, as on upload', () => {
  test('the greet example offers its one tool', async () => {
    const result = await host.discover(await host.load({ name: 'greet', moduleBytes: GREET, assetsDir: null }));
    assert.deepEqual(result.problems, []);
    assert.deepEqual(result.tools?.map((t) => t.name), ['greet']);
    assert.deepEqual(result.tools?.[0].inputSchema.required, ['name']);
  });

  test('a guest without assets runs with nothing mounted and answers its own list', async () => {
    const result = await discover(null);
    assert.equal(result.ok, true);
    assert.ok(result.tools?.some((t) => t.name === 'raw'));
  });

  test('nextCursor asks for another page; every page is collected', async () => {
    const result = await discover({
      'tools.json': tools([tool('a')], { nextCursor: 'p2' }),
      'tools-p2.json': tools([tool('b')], { nextCursor: 'p3' }),
      'tools-p3.json': tools([tool('c')]),
    });
    assert.deepEqual(result.tools?.map((t) => t.name), ['a', 'b', 'c']);
  });

  test('16 pages are accepted; a 17th page asked for is refused', async () => {
    const pages = (count: number) => {
      const files: Record<string, string> = {};
      for (let page = 1; page <= count; page += 1) {
        const next = page < count ? { nextCursor: String(page + 1) } : {};
        files[page === 1 ? 'tools.json' : `tools-${page}.json`] = tools([tool(`t${page}`)], next);
      }
      return files;
    };
    assert.equal((await discover(pages(16))).tools?.length, 16);
    const files = pages(16);
    files['tools-16.json'] = tools([tool('t16')], { nextCursor: '17' });
    files['tools-17.json'] = tools([tool('t17')]);
    assert.deepEqual(codes(await discover(files)), ['discovery.pages']);
  });

  const rules: [string, Record<string, string>, string][] = [
    ['no 2026-07-28 in supportedVersions', { 'discover.json': '{"supportedVersions":["2025-11-25"],"capabilities":{"tools":{}}}' }, 'discovery.version'],
    ['no tools capability', { 'discover.json': '{"supportedVersions":["2026-07-28"],"capabilities":{}}' }, 'discovery.capability'],
    ['0 tools', { 'tools.json': tools([]) }, 'tools.count'],
    ['more than 64 tools', { 'tools.json': tools(Array.from({ length: 65 }, (_, i) => tool(`t${i}`))) }, 'tools.count'],
    ['duplicate names', { 'tools.json': tools([tool('same'), tool('same')]) }, 'tools.duplicate'],
    ['a name outside ^[a-z0-9_-]{1,64}$', { 'tools.json': tools([tool('Not.Allowed')]) }, 'tools.name'],
    ['a description over 1,024 characters', { 'tools.json': tools([tool('a', { description: 'x'.repeat(1025) })]) }, 'tools.description'],
    ['an inputSchema without "type": "object"', { 'tools.json': tools([tool('a', { inputSchema: { type: 'array' } })]) }, 'tools.input-schema'],
    ['an inputSchema over 64 KiB', { 'tools.json': tools([tool('a', { inputSchema: { type: 'object', description: 'x'.repeat(65536) } })]) }, 'tools.input-schema-size'],
    ['an outputSchema over 64 KiB', { 'tools.json': tools([tool('a', { outputSchema: { type: 'object', description: 'x'.repeat(65536) } })]) }, 'tools.output-schema-size'],
    ['all tools together over 256 KiB', { 'tools.json': tools(Array.from({ length: 5 }, (_, i) => tool(`t${i}`, { description: 'd', inputSchema: { type: 'object', description: 'x'.repeat(60000) } }))) }, 'tools.total-size'],
  ];
  for (const [rule, assets, code] of rules) {
    test(`refused: ${rule} (${code})`, async () => {
      const result = await discover(assets);
      assert.equal(result.ok, false);
      assert.equal(result.tools, null);
      assert.deepEqual(codes(result), [code]);
    });
  }

  for (const mode of ['trap', 'not_jsonrpc', 'jsonrpc_error', 'exited_early', 'exit_status', 'module_request']) {
    test(`a crash during discovery is refused with its reason: ${mode}`, async () => {
      const result = await discover({ mode });
      assert.deepEqual(codes(result), [`discovery.crash.${mode}`]);
    });
  }

  test('discovery has 10 seconds in all (here 3): a guest that never answers is refused for its time', async () => {
    const result = await discover({ mode: 'timeout' });
    assert.deepEqual(codes(result), ['discovery.crash.timeout']);
  });

  test('discovery has no network: a subako_http request answers host_not_allowed', async () => {
    const result = await discover({ mode: 'http_discover' });
    assert.equal(result.ok, true, JSON.stringify(result.problems));
    const answer = JSON.parse(result.tools?.[0].description ?? 'null');
    assert.equal(answer.error.kind, 'host_not_allowed');
  });
});
