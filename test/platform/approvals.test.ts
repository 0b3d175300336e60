/**
 * The pure parts of approvals (platform/approvals.ts): what an approval is bound to of the arguments (their
 * canonical JSON, so a client's key order does not matter but every value does), and which request
 * capabilities let the endpoint ask a client's person (mcp/'s `elicitsForms`). The flows themselves run
 * against real clients in test/server/approvals.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { argumentsDigest, canonicalJson } from '../../src/platform/index.js';
import { elicitsForms } from '../../src/mcp/index.js';

describe('an approval is bound to the canonical JSON of the arguments', () => {
  it('object keys are sorted at every depth', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
    assert.equal(argumentsDigest({ path: '/x', recursive: true }), argumentsDigest({ recursive: true, path: '/x' }));
  });

  it('every value counts: array order, types, strings and nesting change the digest', () => {
    const base = argumentsDigest({ paths: ['/a', '/b'], n: 1 });
    for (const other of [{ paths: ['/b', '/a'], n: 1 }, { paths: ['/a', '/b'], n: '1' }, { paths: ['/a', '/b'] }, { paths: ['/a', '/b'], n: 1, extra: false }, { paths: [['/a', '/b']], n: 1 }]) {
      assert.notEqual(argumentsDigest(other), base, JSON.stringify(other));
    }
  });

  it('agrees with JSON.stringify on what JSON carries (strings escaped, undefined members dropped)', () => {
    assert.equal(canonicalJson({ s: 'a"\n\u2028', u: undefined, list: [undefined, 1.5, -0, true] }), '{"list":[null,1.5,0,true],"s":"a\\"\\n\u2028"}');
    assert.equal(canonicalJson({ k: 'v' }), JSON.stringify({ k: 'v' }));
  });
});

describe('which clients are asked through elicitation', () => {
  it('a client that declared form elicitation (or elicitation with no modes, which means form)', () => {
    assert.equal(elicitsForms({ elicitation: {} }), true);
    assert.equal(elicitsForms({ elicitation: { form: {} } }), true);
    assert.equal(elicitsForms({ elicitation: { form: {}, url: {} } }), true);
  });

  it('not one that declared only URL elicitation, or none', () => {
    assert.equal(elicitsForms({ elicitation: { url: {} } }), false);
    assert.equal(elicitsForms({}), false);
    assert.equal(elicitsForms({ sampling: {} }), false);
    assert.equal(elicitsForms(undefined), false);
    assert.equal(elicitsForms({ elicitation: true }), false);
  });
});
