import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidationError } from '../../src/errors.js';
import { canonicalOrigin, createHttpBridge, EgressError, parseEgressPolicyFile } from '../../src/egress/index.js';
import { assertNoCredentialHeader, credentialForOrigin } from '../../src/egress/credentials.js';

const SECRET = 'Bearer s3cr3t-value-never-shown';

describe('credentials: origins', () => {
  it('origins are compared in canonical form', () => {
    assert.equal(canonicalOrigin('https://API.Example.com'), 'https://api.example.com');
    assert.equal(canonicalOrigin('https://api.example.com:443/'), 'https://api.example.com');
    assert.equal(canonicalOrigin('https://api.example.com.:8443'), 'https://api.example.com:8443');
    assert.equal(canonicalOrigin('https://bücher.example'), 'https://xn--bcher-kva.example');
  });
  it('anything but an https origin is not one', () => {
    for (const text of ['http://a.example', 'https://a.example/path', 'https://a.example/?q', 'https://u:p@a.example', 'a.example', '']) {
      assert.equal(canonicalOrigin(text), null, text);
    }
  });
});

describe('credentials: which one rides on a request', () => {
  const grants = new Set(['https://api.example.com']);
  it('a granted origin with exactly one credential gets its headers (names lowercased)', () => {
    const vault: { origin: string; headers: Record<string, string> }[] = [
      { origin: 'https://api.example.com', headers: { Authorization: SECRET } },
      { origin: 'https://other.example', headers: { 'x-key': 'k' } },
    ];
    assert.deepEqual(credentialForOrigin('https://api.example.com', { grants, vault }), { authorization: SECRET });
  });
  it('an origin that is not granted gets nothing, even when the vault has a credential for it', () => {
    const vault = [{ origin: 'https://other.example', headers: { 'x-key': 'k' } }];
    assert.equal(credentialForOrigin('https://other.example', { grants, vault }), null);
  });
  for (const [name, vault] of [
    ['no credential', []],
    ['two credentials', [{ origin: 'https://api.example.com', headers: { authorization: 'a' } }, { origin: 'https://api.example.com/', headers: { 'x-key': 'b' } }]],
    ['only an unusable credential (empty headers)', [{ origin: 'https://api.example.com', headers: {} }]],
    ['only an unusable credential (a value with a newline)', [{ origin: 'https://api.example.com', headers: { authorization: `${SECRET}\r\nx: 1` } }]],
  ] as const) {
    it(`a granted origin with ${name} is credential_unavailable, and the message holds no secret`, () => {
      assert.throws(
        () => credentialForOrigin('https://api.example.com', { grants, vault: vault as never }),
        (e: unknown) => e instanceof EgressError && e.kind === 'credential_unavailable' && !e.message.includes('s3cr3t'),
      );
    });
  }
  it('a guest header that the credential sets is credential_header; the message names the header, not the value', () => {
    assert.throws(
      () => assertNoCredentialHeader({ authorization: 'mine', accept: '*/*' }, { authorization: SECRET }, 'https://api.example.com'),
      (e: unknown) => e instanceof EgressError && e.kind === 'credential_header' && e.message.includes('authorization') && !e.message.includes('s3cr3t'),
    );
    assert.doesNotThrow(() => assertNoCredentialHeader({ accept: '*/*' }, { authorization: SECRET }, 'https://api.example.com'));
  });
});

describe('policy file (--policy FILE)', () => {
  it('parses the documented shape', () => {
    const policy = parseEgressPolicyFile(JSON.stringify({
      allow: ['api.example.com', '*.example.org:8443'], grants: ['https://api.example.com'],
      vault: [{ origin: 'https://api.example.com', headers: { authorization: SECRET } }], privateDestinations: 'deny',
    }));
    assert.deepEqual(policy.allow, ['api.example.com', '*.example.org:8443']);
    assert.deepEqual(policy.grants, ['https://api.example.com']);
    assert.deepEqual(policy.vault, [{ origin: 'https://api.example.com', headers: { authorization: SECRET } }]);
    assert.equal(policy.privateDestinations, 'deny');
  });
  it('every field is optional', () => {
    assert.deepEqual(parseEgressPolicyFile('{}'), { allow: [], grants: [], vault: [], privateDestinations: 'deny' });
  });
  it('names every problem, with stable codes, and never a secret', () => {
    let caught: unknown;
    try {
      parseEgressPolicyFile({
        allow: ['https://x.example/'], grants: ['http://a.example'], vault: [{ origin: 'nope', headers: { 'bad name': SECRET } }],
        privateDestinations: 'sometimes', extra: true,
      });
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof ValidationError);
    const codes = caught.problems.map((p) => p.code).sort();
    assert.deepEqual(codes, ['egress.policy.allow', 'egress.policy.field', 'egress.policy.grant', 'egress.policy.private_destinations', 'egress.policy.vault', 'egress.policy.vault']);
    assert.ok(!caught.message.includes('s3cr3t'));
  });
  it('refuses text that is not a JSON object', () => {
    for (const text of ['{', '[]', '"x"', 'null']) assert.throws(() => parseEgressPolicyFile(text), ValidationError);
  });
  it('createHttpBridge refuses a bad policy up front', () => {
    assert.throws(() => createHttpBridge({ policy: { allow: ['*'], grants: [] }, credentials: [], volume: [], log: [] }), ValidationError);
  });
});
