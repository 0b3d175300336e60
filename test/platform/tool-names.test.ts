/**
 * The naming rule of an agent's tools (src/platform/tool-names.ts), as pure data: examples of each rule, then
 * properties over any sources and tools — unique names, prefixes no other source can take, and names that
 * stay put when another source changes without clashing.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LEFT_OUT_WARNINGS_PER_SOURCE, overlappingSource, publishToolNames, type SourceTools, type ToolNaming } from '../../src/platform/calls/tool-names.js';

const names = (sources: SourceTools[]): string[] => publishToolNames(sources).published.map((n) => n.name);
const reasons = (naming: ToolNaming): [string, string, string][] => naming.leftOut.map((l) => [l.source, l.tool, l.reason]);

describe('a tool keeps its own name when no other source uses it', () => {
  it('a name no other source uses is kept as it is', () => {
    assert.deepEqual(names([{ source: 'greet', tools: ['greet'] }, { source: 'github', tools: ['create_issue'] }]), ['greet', 'create_issue']);
  });

  it('a name two sources use is prefixed with the source name in every one of them', () => {
    assert.deepEqual(names([{ source: 'a', tools: ['search', 'only_a'] }, { source: 'b', tools: ['search'] }]), ['a__search', 'only_a', 'b__search']);
  });

  it('names that differ only in letter case clash: neither source keeps it', () => {
    assert.deepEqual(names([{ source: 'rt2', tools: ['put'] }, { source: 'evil', tools: ['PUT'] }]), ['rt2__put', 'evil__PUT']);
  });

  it('a source listing a tool twice publishes it once; its own tools differing in case are both its own', () => {
    assert.deepEqual(names([{ source: 'a', tools: ['x', 'x', 'X'] }]), ['x', 'X']);
  });
});

describe('a name inside a source\'s prefix is that source\'s tool, and no other\'s', () => {
  it('another source\'s tool named `<source>__<tool>` is published inside its own prefix, and the prefixed name stays the source\'s', () => {
    const naming = publishToolNames([{ source: 'rt2', tools: ['put', 'get'] }, { source: 'evil', tools: ['rt2__put', 'put', 'RT2__put', 'rt2__other'] }]);
    assert.deepEqual(naming.published, [
      { source: 'rt2', tool: 'put', name: 'rt2__put' },
      { source: 'rt2', tool: 'get', name: 'get' },
      { source: 'evil', tool: 'rt2__put', name: 'evil__rt2__put' },
      { source: 'evil', tool: 'put', name: 'evil__put' },
      { source: 'evil', tool: 'RT2__put', name: 'evil__RT2__put' },
      { source: 'evil', tool: 'rt2__other', name: 'evil__rt2__other' },
    ]);
    assert.deepEqual(naming.leftOut, []);
  });

  it('so does a tool named inside another source\'s prefix when nothing clashes', () => {
    assert.deepEqual(names([{ source: 'rt2', tools: ['get'] }, { source: 'evil', tools: ['rt2__get'] }]), ['get', 'evil__rt2__get']);
  });

  it('a source\'s own tool named inside its own prefix is prefixed too, so `<source>__<tool>` always means its tool `<tool>`', () => {
    assert.deepEqual(names([{ source: 'a', tools: ['x', 'a__x'] }, { source: 'b', tools: ['x'] }]), ['a__x', 'a__a__x', 'b__x']);
    assert.deepEqual(names([{ source: 'a', tools: ['a__x'] }]), ['a__a__x']);
  });

  it('a name that is only close to a prefix is not inside it', () => {
    assert.deepEqual(names([{ source: 'rt2', tools: ['put'] }, { source: 'evil', tools: ['rt2_put', 'rt2-put', 'rt2.put', 'rt2', 'xrt2__put'] }]),
      ['put', 'rt2_put', 'rt2-put', 'rt2.put', 'rt2', 'xrt2__put']);
  });

  it('sources whose prefixes overlap: a prefixed name that would begin with the other\'s prefix is left out, named in a warning', () => {
    const naming = publishToolNames([{ source: 'a', tools: ['x', 'b__y'] }, { source: 'a__b', tools: ['x', 'b__y', 'z'] }]);
    // a's `b__y` would be `a__b__y`, inside a__b's prefix; a__b's `x` and `b__y` would begin with `a__`, a's prefix.
    assert.deepEqual(naming.published, [{ source: 'a', tool: 'x', name: 'a__x' }, { source: 'a__b', tool: 'z', name: 'z' }]);
    assert.deepEqual(reasons(naming), [['a', 'b__y', 'inside_another_prefix'], ['a__b', 'x', 'inside_another_prefix'], ['a__b', 'b__y', 'inside_another_prefix']]);
    assert.match(naming.warnings[0], /^tool "b__y" of a is left out: its prefixed name a__b__y would begin with a__b__, which names the tools of a__b$/);
  });

  it('a source named twice: the later one\'s tools are left out', () => {
    const naming = publishToolNames([{ source: 'a', tools: ['x'] }, { source: 'a', tools: ['y'] }]);
    assert.deepEqual(naming.published, [{ source: 'a', tool: 'x', name: 'x' }]);
    assert.deepEqual(reasons(naming), [['a', 'y', 'duplicate_source']]);
  });
});

describe('which source names overlap (refused when an agent is made)', () => {
  for (const [a, b] of [['a', 'a_'], ['a', 'a__b'], ['a', 'a___'], ['a_', 'a__'], ['rt2', 'rt2__x']]) {
    it(`${a} and ${b} overlap, whichever comes first`, () => {
      assert.equal(overlappingSource(b, [a]), a);
      assert.equal(overlappingSource(a, [b]), b);
    });
  }
  for (const [a, b] of [['a', 'a-'], ['a', 'a_b'], ['a', 'ab'], ['a-', 'a_'], ['rt2', 'rt22'], ['a', 'a']]) {
    it(`${a} and ${b} do not`, () => assert.equal(overlappingSource(b, [a]), undefined));
  }
});

describe('a published name is an MCP tool name: 1-128 of A-Z a-z 0-9 _ - .', () => {
  it('a remote tool whose own name is not a tool name is left out, named (escaped, cut short) in a warning', () => {
    const long = 'x'.repeat(129);
    const naming = publishToolNames([{ source: 'evil', tools: ['ok', 'two words', 'line\nbreak', '', 'ü', long] }]);
    assert.deepEqual(names([{ source: 'evil', tools: ['ok', 'two words', 'line\nbreak', '', 'ü', long] }]), ['ok']);
    assert.deepEqual(reasons(naming).map((r) => r[2]), Array(5).fill('not_a_tool_name'));
    assert.equal(naming.warnings[1], 'tool "line\\nbreak" of evil is left out: its name is not a tool name (1-128 of A-Z a-z 0-9 _ - .)');
    assert.equal(naming.warnings[4], `tool "${'x'.repeat(64)}…" of evil is left out: its name is not a tool name (1-128 of A-Z a-z 0-9 _ - .)`);
  });

  it('a prefixed name of 128 characters is published; one of 129 or more is left out with why', () => {
    const pkg = 'p'.repeat(62); // 62 + 2 + 64 = 128
    const fits = 't'.repeat(64);
    const over = 'u'.repeat(64);
    const naming = publishToolNames([{ source: pkg, tools: [fits] }, { source: 'q', tools: [fits, over] }, { source: 'pkg64'.padEnd(64, '4'), tools: [over] }]);
    assert.deepEqual(naming.published.map((n) => n.name), [`${pkg}__${fits}`, `q__${fits}`, `q__${over}`]);
    assert.equal(naming.published[0].name.length, 128);
    assert.deepEqual(reasons(naming), [['pkg64'.padEnd(64, '4'), over, 'prefixed_name_too_long']]);
    assert.match(naming.warnings[0], /needs the prefixed name pkg64{60}__u{64}, 130 characters, and a tool name is at most 128$/);
  });

  it('warnings are bounded per source: the first few by name, the rest counted', () => {
    const bad = Array.from({ length: 20 }, (_, i) => `bad name ${i}`);
    const naming = publishToolNames([{ source: 'evil', tools: bad }, { source: 'other', tools: ['also bad'] }]);
    assert.equal(naming.leftOut.length, 21);
    assert.equal(naming.warnings.length, LEFT_OUT_WARNINGS_PER_SOURCE + 2);
    assert.match(naming.warnings.at(-2)!, /"also bad" of other/);
    assert.equal(naming.warnings.at(-1), `${20 - LEFT_OUT_WARNINGS_PER_SOURCE} more tools of evil are left out`);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Properties. Names come from small alphabets so that clashes, case variants, names inside other sources'
// prefixes and overlapping source names (a, a_, a__b) are common, not rare.

const chars = (alphabet: string, minLength: number, maxLength: number) => fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength });
const sourceName = fc.tuple(fc.constantFrom('a', 'b'), chars('ab_', 0, 4)).map(([first, rest]) => first + rest);
/** Tool names: a small common pool (so sources share them), or any short name. */
const baseTool = fc.oneof(fc.constantFrom('put', 'PUT', 'get', 'x', '_x', 'b.c'), chars('abAB_.', 1, 4));
const toolNameFor = (sources: readonly string[]) => fc.oneof(
  { weight: 4, arbitrary: baseTool },
  // A name inside some source's prefix, often exactly the prefixed form of a tool another source has.
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...sources), fc.boolean(), fc.oneof(baseTool, fc.constant(''))).map(([s, upper, t]) => `${upper ? s.toUpperCase() : s}__${t}`) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(128), 'y'.repeat(126), 'two words', '', 'é') },
);
const withTools = (sources: readonly string[]): fc.Arbitrary<SourceTools[]> =>
  fc.tuple(...sources.map((source) => fc.array(toolNameFor(sources), { maxLength: 6 }).map((tools) => ({ source, tools }))));
/** Any sources at all: names may repeat or overlap (an agent stored before they were refused). */
const anySources = fc.array(sourceName, { minLength: 1, maxLength: 5 }).chain(withTools);
/** An agent as agents.ts lets one be made: distinct source names, no two overlapping. */
const validNames = fc.uniqueArray(sourceName, { minLength: 1, maxLength: 5 })
  .map((list) => list.filter((name, i) => overlappingSource(name, list.slice(0, i)) === undefined));
const validSources = validNames.chain(withTools);

const prefix = (source: string) => `${source}__`;
const insidePrefix = (name: string, source: string) => name.toLowerCase().startsWith(prefix(source));
const distinctSources = (sources: readonly SourceTools[]) => [...new Set(sources.map((s) => s.source))];

describe('properties, for any sources and tools', () => {
  it('(1) every published name is unique, even ignoring letter case across sources', () => {
    fc.assert(fc.property(anySources, (sources) => {
      const { published } = publishToolNames(sources);
      assert.equal(new Set(published.map((p) => p.name)).size, published.length);
      const byLower = new Map<string, string>();
      for (const p of published) {
        const owner = byLower.get(p.name.toLowerCase()) ?? p.source;
        assert.equal(owner, p.source, `${p.name} and a case variant of it are published for two sources`);
        byLower.set(p.name.toLowerCase(), p.source);
      }
    }), { numRuns: 1000 });
  });

  it('(2) a name beginning with `<source>__` (any letter case) is only ever published for that source, as `<source>__<its tool>`', () => {
    fc.assert(fc.property(anySources, (sources) => {
      for (const p of publishToolNames(sources).published) {
        for (const source of distinctSources(sources)) {
          if (insidePrefix(p.name, source)) {
            assert.equal(p.source, source, `${p.name} is inside ${source}'s prefix but published for ${p.source}`);
            assert.equal(p.name, `${source}__${p.tool}`);
          }
        }
        // And a name outside every prefix is the tool's own.
        if (!distinctSources(sources).some((s) => insidePrefix(p.name, s))) assert.equal(p.name, p.tool);
      }
    }), { numRuns: 1000 });
  });

  it('every tool is published or left out with a reason, never both, never lost; every published name is an MCP tool name', () => {
    fc.assert(fc.property(anySources, (sources) => {
      const naming = publishToolNames(sources);
      const entries = (list: { source: string; tools: string[] }[]) => list.flatMap((s) => [...new Set(s.tools)].map((t) => JSON.stringify([s.source, t])));
      const accounted = [...naming.published, ...naming.leftOut].map((e) => JSON.stringify([e.source, e.tool]));
      // Each source's tools, once each, in order; a repeated source name is accounted for again.
      assert.deepEqual([...accounted].sort(), entries(sources).sort());
      for (const p of naming.published) assert.match(p.name, /^[A-Za-z0-9_.-]{1,128}$/);
    }), { numRuns: 500 });
  });

  it('an agent that can be made loses no tool but to the 128-character limit and names that are not tool names', () => {
    fc.assert(fc.property(validSources, (sources) => {
      for (const l of publishToolNames(sources).leftOut) assert.ok(l.reason === 'not_a_tool_name' || l.reason === 'prefixed_name_too_long', l.message);
    }), { numRuns: 500 });
  });
});

/**
 * Stable, precisely: a tool of source A clashes when another source lists a tool of the same name (letter
 * case ignored) or its name begins with some source's prefix. A's published names — which of its tools are
 * published, under which names, and which are left out — depend only on A's name, A's tools and which of
 * them clash. So nothing another source does without making one of A's tools clash, or stop clashing, moves
 * a name of A: not adding tools, not a new source, not the order of the sources.
 */
describe('(3) stable: a source\'s names do not move when other sources change without clashing with it', () => {
  const ofSource = (naming: ToolNaming, source: string) => ({
    published: naming.published.filter((p) => p.source === source),
    leftOut: naming.leftOut.filter((l) => l.source === source).map((l) => [l.tool, l.reason]),
  });
  const clashes = (sources: readonly SourceTools[], a: SourceTools, tool: string) =>
    sources.some((s) => s.source !== a.source && s.tools.some((t) => t.toLowerCase() === tool.toLowerCase())) ||
    sources.some((s) => insidePrefix(tool, s.source));

  /** An agent, one of its sources A, and changes to the others: tools added, a source added, the order shuffled. */
  const scenario = validSources.chain((sources) => fc.record({
    sources: fc.constant(sources),
    a: fc.nat({ max: sources.length - 1 }),
    added: fc.array(fc.tuple(fc.nat({ max: sources.length - 1 }), toolNameFor(sources.map((s) => s.source))), { maxLength: 6 }),
    newSource: fc.option(fc.tuple(sourceName, fc.array(toolNameFor(sources.map((s) => s.source)), { maxLength: 4 })), { nil: undefined }),
    order: fc.array(fc.nat(), { minLength: sources.length + 1, maxLength: sources.length + 1 }),
  }));

  it('holds for tools added to other sources, a new source, and any order, as long as A\'s clashes stay the same', () => {
    let changed = 0;
    fc.assert(fc.property(scenario, ({ sources, a, added, newSource, order }) => {
      const mine = sources[a];
      const after = sources.map((s) => ({ source: s.source, tools: [...s.tools] }));
      // Only changes that make none of A's tools clash anew.
      for (const [at, tool] of added) {
        if (at !== a && !mine.tools.some((t) => t.toLowerCase() === tool.toLowerCase())) after[at].tools.push(tool);
      }
      if (newSource) {
        const [name, tools] = newSource;
        const fits = !after.some((s) => s.source === name) && overlappingSource(name, after.map((s) => s.source)) === undefined;
        if (fits && !mine.tools.some((t) => insidePrefix(t, name))) {
          after.push({ source: name, tools: tools.filter((t) => !mine.tools.some((m) => m.toLowerCase() === t.toLowerCase())) });
        }
      }
      const shuffled = after.map((s, i) => ({ s, k: order[i] ?? 0 })).sort((x, y) => x.k - y.k).map((x) => x.s);
      // The precondition, checked rather than trusted: A's tools clash exactly as before.
      for (const tool of mine.tools) assert.equal(clashes(shuffled, mine, tool), clashes(sources, mine, tool));
      const sorted = (list: SourceTools[]) => JSON.stringify([...list].sort((x, y) => (x.source < y.source ? -1 : 1)));
      if (sorted(shuffled) !== sorted(sources)) changed += 1;
      assert.deepEqual(ofSource(publishToolNames(shuffled), mine.source), ofSource(publishToolNames(sources), mine.source));
    }), { numRuns: 500 });
    assert.ok(changed > 250, `only ${changed} of 500 runs added tools or a source`);
  });

  it('and what does move A\'s names is exactly a clash: its tool is then published as `A__<tool>` (or left out past 128)', () => {
    fc.assert(fc.property(validSources, (sources) => {
      const naming = publishToolNames(sources);
      for (const source of sources) {
        for (const tool of new Set(source.tools)) {
          const published = naming.published.find((p) => p.source === source.source && p.tool === tool);
          const expected = !/^[A-Za-z0-9_.-]{1,128}$/.test(tool) ? undefined
            : !clashes(sources, source, tool) ? tool
              : `${source.source}__${tool}`.length <= 128 ? `${source.source}__${tool}` : undefined;
          assert.equal(published?.name, expected);
        }
      }
    }), { numRuns: 500 });
  });
});
