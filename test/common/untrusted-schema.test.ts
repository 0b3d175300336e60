/**
 * A schema subako did not write (origin `untrusted`: a remote MCP server's, a package's) is checked on bounded
 * engines: the same answers as our own engine for what it can check in time, and past the budget a refusal
 * that names the keyword — never a check skipped, never the event loop held.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkAgainstSchema, checkArguments, InvalidSchemaError, MAX_UNTRUSTED_SCHEMA_CHARS, REQUEST_BODY } from '../../src/common/index.js';
import { canonicalJson, lastDuplicate } from '../../src/common/unique-items.js';
import { MAX_MATCH_STEPS } from '../../src/common/schema-budget.js';

const both = (schema: Record<string, unknown>, value: unknown) => [checkArguments(schema, value), checkArguments(schema, value, 'untrusted')] as const;

/** Schemas that use each bounded piece: patterns, uniqueItems, enum, const, $ref, the three dialects. */
const SCHEMAS: Array<Record<string, unknown>> = [
  {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, pattern: '^\\S+( \\S+)*$' },
      tags: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,15}$' }, uniqueItems: true },
      mode: { enum: ['fast', 'safe', { deep: [1, 2] }] },
      exact: { const: { a: [1, { b: null }] } },
      records: { type: 'array', uniqueItems: true },
      numbers: { type: 'array', items: { type: 'number' }, uniqueItems: true },
    },
    patternProperties: { '^x-': { type: 'string' } },
    propertyNames: { pattern: '^[a-z-]+$' },
    required: ['name'],
    additionalProperties: false,
  },
  {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    definitions: { node: { type: 'object', properties: { next: { $ref: '#/definitions/node' }, v: { type: 'integer' } } } },
    properties: { list: { $ref: '#/definitions/node' }, pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], uniqueItems: true } },
  },
];

const VALUES: unknown[] = [
  { name: 'Ada Lovelace', tags: ['a', 'b-2'], mode: 'fast', exact: { a: [1, { b: null }] }, records: [{ a: 1 }, { a: 2 }], numbers: [1, 2] },
  { name: 'Ada\u00a0Lovelace' },
  { name: ' Ada', tags: ['a', 'a', 'Bad'], mode: { deep: [1, 2] }, records: [{ a: 1, b: 2 }, { b: 2, a: 1 }], numbers: [1, 1.0, 2] },
  { name: '', 'x-extra': 3, Upper: 1, exact: { a: [1, { b: 0 }] }, records: [[1], [1], 'x', 'x'] },
  { list: { v: 1, next: { v: 'two', next: { v: 3 } } }, pair: ['a', 1] },
  { pair: ['a', 'a'], list: { next: { next: { v: 1.5 } } } },
  'not an object',
];

describe('what the bounded engine can check, it answers exactly as our own engine', () => {
  it('the same problems, path by path and message by message, for each schema and value', () => {
    for (const schema of SCHEMAS) {
      for (const value of VALUES) {
        const [ours, bounded] = both(schema, value);
        assert.deepEqual(bounded, ours, JSON.stringify(value));
      }
    }
  });

  it('uniqueItems: the same verdict and the same pair of items for random arrays of JSON values (property)', () => {
    const schema = { type: 'object', properties: { xs: { type: 'array', uniqueItems: true } } };
    const item = fc.oneof(fc.constantFrom(0, 1, -0, 1.5, 'a', '1', true, null), fc.jsonValue({ maxDepth: 2 }));
    fc.assert(
      fc.property(fc.array(item, { maxLength: 12 }), (xs) => {
        const [ours, bounded] = both(schema, { xs });
        assert.deepEqual(bounded, ours);
      }),
      { numRuns: 2_000 },
    );
  });

  it('uniqueItems over items with a "toString" key: our own engine answers (it used to throw a TypeError from Ajv\'s pairwise equality)', () => {
    const schema = { type: 'object', properties: { xs: { type: 'array', uniqueItems: true } } };
    assert.deepEqual(checkArguments(schema, { xs: [{ toString: 1 }, { toString: 2 }] }), { ok: true });
    const duplicate = checkArguments(schema, { xs: [{ toString: 1 }, { valueOf: null }, { toString: 1 }] });
    assert.equal(duplicate.ok, false);
    assert.match(JSON.stringify(duplicate), /items ## 0 and 2 are identical/);
  });

  it('canonical JSON: equal values meet whatever their key order, different ones never do', () => {
    assert.equal(canonicalJson({ b: [1, { d: 1, c: 2 }], a: 'x' }), canonicalJson({ a: 'x', b: [1, { c: 2, d: 1 }] }));
    assert.notEqual(canonicalJson({ a: 1 }), canonicalJson({ a: '1' }));
    assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
    assert.notEqual(canonicalJson({ a: undefined }), canonicalJson({}));
    assert.equal(canonicalJson(-0), canonicalJson(0));
    assert.deepEqual(lastDuplicate([{ a: 1 }, 2, { a: 1 }, 2, 3]), { i: 3, j: 1 });
    assert.equal(lastDuplicate([{ a: 1 }, { a: 2 }]), undefined);
  });

  it('the same schema is still checked by our engine as before for our own callers (a lookahead is fine there)', () => {
    const schema = { type: 'object', properties: { p: { type: 'string', pattern: '^(?=.*\\d).{4,}$' } } };
    assert.deepEqual(checkArguments(schema, { p: 'abc1' }), { ok: true });
    assert.equal(checkArguments(schema, { p: 'abcd' }).ok, false);
  });
});

describe('what a schema subako did not write makes expensive is refused, naming the keyword', () => {
  const refused = (check: ReturnType<typeof checkArguments>) => {
    assert.equal(check.ok, false);
    return (check as { problems: Array<{ code: string; rule: string; message: string; path: string }> }).problems;
  };

  it('$refs that double at every level (2^40 evaluations of one string): refused within the budget, naming the keyword', () => {
    const $defs: Record<string, unknown> = { d0: { type: 'string', minLength: 1 } };
    for (let level = 1; level <= 40; level++) $defs[`d${level}`] = { allOf: [{ $ref: `#/$defs/d${level - 1}` }, { $ref: `#/$defs/d${level - 1}` }] };
    const [problem] = refused(checkArguments({ type: 'object', $defs, properties: { s: { $ref: '#/$defs/d40' } } }, { s: 'x' }, 'untrusted'));
    assert.ok(['$ref', 'allOf', 'minLength'].includes(problem.rule), problem.rule);
    assert.equal(problem.code, `call.${problem.rule}`);
    assert.match(problem.message, /the arguments cannot be checked against the schema's \S+ at #\S*: checking takes more than \d+ ms/);
    assert.match(problem.message, /\(rule: (\$ref|allOf|minLength)\)$/);
  });

  it('a big enum of objects against many items: refused naming enum', () => {
    const values = Array.from({ length: 2_000 }, (_, i) => ({ id: i, kind: 'k' }));
    const schema = { type: 'object', properties: { xs: { type: 'array', items: { enum: values } } } };
    const xs = Array.from({ length: 200_000 }, () => ({ id: -1, kind: 'k' }));
    const [problem] = refused(checkArguments(schema, { xs }, 'untrusted'));
    assert.equal(problem.rule, 'enum');
    assert.match(problem.message, /schema's enum at #\/properties\/xs\/items\/enum: checking takes more than/);
  });

  it('a match longer than one match may take is refused before it runs, naming pattern and what is accepted', () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^[a-z]{1,64}$' } } };
    const [problem] = refused(checkArguments(schema, { s: 'a'.repeat(20_000) }, 'untrusted'));
    assert.equal(problem.rule, 'pattern');
    assert.match(problem.message, new RegExp(`matching 20000 characters against pattern "\\^\\[a-z\\]\\{1,64\\}\\$" \\(\\d+ instructions\\) takes more than the ${MAX_MATCH_STEPS} steps`));
    assert.match(problem.message, /a shorter string is checked; refused \(rule: pattern\)$/);
    assert.deepEqual(checkArguments(schema, { s: 'abc' }, 'untrusted'), { ok: true });
  });

  it('a value nested deeper than the stack, through a recursive $ref: refused naming $ref (not a crash)', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const schema = { type: 'object', $defs: { n: { type: 'array', items: { $ref: '#/$defs/n' } } }, properties: { d: { $ref: '#/$defs/n' } } };
    const [problem] = refused(checkArguments(schema, { d: deep }, 'untrusted'));
    assert.equal(problem.rule, '$ref');
    assert.match(problem.message, /nests deeper than the checker follows/);
  });

  it('the words are the subject\'s: a REST body is "the body"', () => {
    const [problem] = refused(checkAgainstSchema({ type: 'string', pattern: '^a{1,500}$' }, 'a'.repeat(10_000), REQUEST_BODY, 'untrusted'));
    assert.equal(problem.code, 'body.pattern');
    assert.match(problem.message, /^the body cannot be checked/);
  });
});

describe('a schema subako did not write that it cannot check bounded is not usable (InvalidSchemaError)', () => {
  const invalid = (schema: Record<string, unknown>, reason: RegExp) => {
    assert.throws(() => checkArguments(schema, {}, 'untrusted'), (err: unknown) => {
      assert.ok(err instanceof InvalidSchemaError);
      assert.match(err.message, reason);
      return true;
    });
  };

  it('a pattern with lookahead, naming the pattern and the construct', () => {
    invalid({ type: 'object', properties: { p: { type: 'string', pattern: '^(?=.*\\d).{4,}$' } } }, /pattern "\^\(\?=\.\*\\\\d\)\.\{4,\}\$" uses lookahead/);
  });

  it('a patternProperties key with a backreference', () => {
    invalid({ type: 'object', patternProperties: { '^(a)\\1$': {} } }, /uses a backreference \(\\1\)/);
  });

  it(`a schema of more than ${MAX_UNTRUSTED_SCHEMA_CHARS / 1024} KiB`, () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; JSON.stringify(properties).length <= MAX_UNTRUSTED_SCHEMA_CHARS; i++) properties[`p${i}`] = { type: 'string', description: 'x'.repeat(100) };
    invalid({ type: 'object', properties }, new RegExp(`at most ${MAX_UNTRUSTED_SCHEMA_CHARS / 1024} KiB of a schema subako did not write is compiled`));
    // Ours are not bounded by size: the same schema compiles on our engine.
    assert.deepEqual(checkArguments({ type: 'object', properties }, { p0: 'x' }), { ok: true });
  });
});
