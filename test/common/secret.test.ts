import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { inspect, format } from 'node:util';
import { Secret, REDACTED, redactSecrets } from '../../src/common/index.js';
import { mcp } from '../../src/mcp/index.js';

const VALUE = 'sk-live-0123456789abcdef';

describe('a Secret is revealed only to the transport', () => {
  const secret = new Secret(VALUE);

  it('reveal() returns the value', () => {
    assert.equal(secret.reveal(), VALUE);
  });

  it('String(), template literals and concatenation show it redacted', () => {
    assert.equal(String(secret), REDACTED);
    assert.equal(`${secret}`, REDACTED);
    assert.equal('x' + secret, `x${REDACTED}`);
  });

  it('JSON.stringify shows it redacted, also nested', () => {
    assert.equal(JSON.stringify({ auth: secret }), `{"auth":"${REDACTED}"}`);
  });

  it('util.inspect, util.format and console-style formatting show it redacted, even with showHidden', () => {
    for (const text of [inspect(secret), inspect({ deep: { secret } }, { showHidden: true, depth: 10 }), format('%s %o %j', secret, secret, secret)]) {
      assert.ok(!text.includes(VALUE), text);
    }
  });

  it('reflection does not reach the value', () => {
    assert.deepEqual(Object.keys(secret), []);
    assert.deepEqual(Object.getOwnPropertyNames(secret), []);
    assert.ok(!JSON.stringify(structuredClone(secret)).includes(VALUE));
  });

  it('an error message built from it is redacted', () => {
    const err = new Error(`bad key ${secret}`);
    assert.ok(!err.message.includes(VALUE));
    assert.ok(!inspect(err).includes(VALUE));
  });

  it('Secret.concat joins strings and secrets into a secret', () => {
    const header = Secret.concat('Bearer ', secret);
    assert.ok(header instanceof Secret);
    assert.equal(header.reveal(), `Bearer ${VALUE}`);
    assert.equal(String(header), REDACTED);
  });

  it('fingerprints are equal for equal values and never contain the value', () => {
    assert.equal(new Secret(VALUE).fingerprint(), secret.fingerprint());
    assert.notEqual(new Secret(`${VALUE}x`).fingerprint(), secret.fingerprint());
    assert.ok(!secret.fingerprint().includes(VALUE));
  });
});

describe('auth descriptors keep header values secret', () => {
  it('mcp.headers wraps plain strings too, so inspecting or serializing auth shows no value', () => {
    const auth = mcp.headers({ Authorization: `Bearer ${VALUE}`, 'X-Key': new Secret(VALUE) });
    assert.ok(!inspect(auth, { depth: 10 }).includes(VALUE));
    assert.ok(!JSON.stringify(auth).includes(VALUE));
    assert.equal(auth.values.Authorization.reveal(), `Bearer ${VALUE}`);
  });

  it('refuses header names the transport owns and values with line breaks', () => {
    assert.throws(() => mcp.headers({ 'Mcp-Session-Id': 'x' }), TypeError);
    assert.throws(() => mcp.headers({ 'X-A': 'a\r\nInjected: 1' }), TypeError);
    assert.throws(() => mcp.headers({ 'Bad Name': 'x' }), TypeError);
  });
});

describe('redactSecrets cuts known secrets out of foreign text', () => {
  it('removes the whole value and the token part of a scheme-prefixed value', () => {
    const text = `server said: Bearer ${VALUE} and later ${VALUE}`;
    const out = redactSecrets(text, [new Secret(`Bearer ${VALUE}`)]);
    assert.ok(!out.includes(VALUE), out);
    assert.equal(out, `server said: ${REDACTED} and later ${REDACTED}`);
  });
});
