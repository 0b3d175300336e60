import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { publishToolNames } from '../../src/platform/tool-names.js';

describe('tool names across an agent\'s sources', () => {
  it('a name no other source uses is kept as it is', () => {
    const names = publishToolNames([{ source: 'greet', tools: ['greet'] }, { source: 'github', tools: ['create_issue'] }]);
    assert.deepEqual(names.map((n) => n.name), ['greet', 'create_issue']);
  });

  it('a name two sources use is prefixed with the source name in every one of them', () => {
    const names = publishToolNames([{ source: 'a', tools: ['search', 'only_a'] }, { source: 'b', tools: ['search'] }]);
    assert.deepEqual(names.map((n) => n.name), ['a__search', 'only_a', 'b__search']);
  });

  it('a prefixed name that is already taken gets _2, in source order', () => {
    const names = publishToolNames([
      { source: 'a', tools: ['x', 'b__x'] },
      { source: 'b', tools: ['x'] },
    ]);
    assert.deepEqual(names.map((n) => n.name), ['a__x', 'b__x', 'b__x_2']);
  });

  it('is predictable: the same sources always give the same names', () => {
    const sources = [{ source: 'p', tools: ['t', 'u'] }, { source: 'q', tools: ['t'] }, { source: 'r', tools: ['u', 't'] }];
    assert.deepEqual(publishToolNames(sources), publishToolNames(sources));
    assert.deepEqual(publishToolNames(sources).map((n) => n.name), ['p__t', 'p__u', 'q__t', 'r__u', 'r__t']);
  });
});
