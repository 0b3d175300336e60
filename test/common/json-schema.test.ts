import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkAgainstSchema, checkArguments, compileSchema, InvalidSchemaError, queryParameter, REQUEST_BODY,
} from '../../src/common/index.js';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1 },
    tags: { type: 'array', items: { type: 'string' } },
    mode: { enum: ['fast', 'safe'] },
    nested: { type: 'object', properties: { 'a/b': { type: 'number', minimum: 0 } } },
    when: { type: 'string', format: 'date-time' },
  },
  required: ['name'],
  additionalProperties: false,
};

function problems(args: unknown, s: Record<string, unknown> = schema) {
  const check = checkArguments(s, args);
  return check.ok ? [] : check.problems.map(({ path, rule }) => `${path} ${rule}`);
}

describe('arguments are checked against the input schema (JSON Schema 2020-12)', () => {
  it('valid arguments pass', () => {
    assert.deepEqual(problems({ name: 'x', tags: ['a'], mode: 'fast', nested: { 'a/b': 1 } }), []);
  });

  it('each problem names its JSON Pointer path and its rule', () => {
    assert.deepEqual(problems({ name: '', tags: ['a', 2], mode: 'slow', nested: { 'a/b': -1 }, extra: true }).sort(), [
      '/extra additionalProperties',
      '/mode enum',
      '/name minLength',
      '/nested/a~1b minimum',
      '/tags/1 type',
    ]);
  });

  it('a missing required property is named by the path it should have', () => {
    assert.deepEqual(problems({}), ['/name required']);
  });

  it('the arguments must be an object', () => {
    assert.deepEqual(problems([1]), [' type']);
    assert.deepEqual(problems(null), [' type']);
  });

  it('2020-12 keywords work (prefixItems, dependentRequired, unevaluatedProperties)', () => {
    const s = {
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] }, a: {}, b: {} },
      dependentRequired: { a: ['b'] },
      unevaluatedProperties: false,
    };
    assert.deepEqual(problems({ pair: ['x', 1] }, s), []);
    assert.deepEqual(problems({ pair: [1, 1] }, s), ['/pair/0 type']);
    assert.deepEqual(problems({ a: 1 }, s), [' dependentRequired']);
    assert.deepEqual(problems({ c: 1 }, s), ['/c unevaluatedProperties']);
  });

  it('format is an annotation: an unknown or unchecked format never refuses a value', () => {
    assert.deepEqual(problems({ name: 'x', when: 'not a date' }), []);
  });

  it('a draft-07 schema is validated by draft-07 rules', () => {
    const s = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { v: { type: 'integer' } }, required: ['v'] };
    assert.deepEqual(problems({ v: 1.5 }, s), ['/v type']);
  });

  it('schemas that reuse an $id do not collide', () => {
    const a = { $id: 'https://example.com/same.json', type: 'object', required: ['a'] };
    const b = { $id: 'https://example.com/same.json', type: 'object', required: ['b'] };
    assert.deepEqual(problems({ a: 1 }, a), []);
    assert.deepEqual(problems({ a: 1 }, b), ['/b required']);
  });

  it('compiled validators are cached per schema, by identity and by content', () => {
    const s = { type: 'object', properties: { q: { type: 'string' } } };
    assert.equal(compileSchema(s), compileSchema(s));
    assert.equal(compileSchema(structuredClone(s)), compileSchema(s));
  });

  it('a schema that cannot be compiled is an InvalidSchemaError', () => {
    assert.throws(() => compileSchema({ type: 'object', properties: { x: { $ref: '#/nowhere' } } }), InvalidSchemaError);
  });
});

describe('the messages name what was checked: tool arguments, a REST body, a query parameter', () => {
  const messages = (check: ReturnType<typeof checkAgainstSchema>) => (check.ok ? [] : check.problems.map((p) => p.message));

  it('tool arguments read "argument /name" and "the arguments"', () => {
    assert.deepEqual(messages(checkArguments(schema, { name: 42 })), ['argument /name must be string (rule: type)']);
    assert.deepEqual(messages(checkArguments({ type: 'object', minProperties: 1 }, {})), [
      'the arguments must NOT have fewer than 1 properties (rule: minProperties)',
    ]);
  });

  it('a REST body reads "field /name" and "the body", never "argument"', () => {
    const body = checkAgainstSchema(schema, { name: 42 }, REQUEST_BODY);
    assert.deepEqual(messages(body), ['field /name must be string (rule: type)']);
    assert.equal(body.ok ? '' : body.problems[0].code, 'body.type');
    assert.deepEqual(messages(checkAgainstSchema(schema, [], REQUEST_BODY)), ['the body must be object (rule: type)']);
  });

  it('a query parameter is named by its name', () => {
    assert.deepEqual(messages(checkAgainstSchema({ type: 'integer', minimum: 1 }, 0, queryParameter('limit'))), [
      'query parameter limit must be >= 1 (rule: minimum)',
    ]);
  });
});
