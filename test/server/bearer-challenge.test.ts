/** The 401 challenge and the OAuth paths, as data (bearer-challenge.ts). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bearerChallenge, isOAuthDiscoveryPath } from '../../src/server/bearer-challenge.js';

describe('bearerChallenge', () => {
  it('a request without credentials gets the scheme and realm only (RFC 6750 §3: no error code)', () => {
    assert.equal(bearerChallenge({ tokenSent: false }), 'Bearer realm="subako"');
  });
  it('a description that would break the quoting is refused', () => {
    assert.throws(() => bearerChallenge({ tokenSent: true, description: 'a "quoted" word' }), RangeError);
    assert.throws(() => bearerChallenge({ tokenSent: true, description: 'back\\slash' }), RangeError);
    assert.throws(() => bearerChallenge({ tokenSent: true, description: 'new\nline' }), RangeError);
  });
});

describe('isOAuthDiscoveryPath', () => {
  it('names the well-known documents (with a path suffix too) and the fallback endpoints, nothing near them', () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp/x', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/register', '/token', '/authorize']) {
      assert.equal(isOAuthDiscoveryPath(path), true, path);
    }
    for (const path of ['/.well-known/oauth-protected-resourcex', '/registers', '/v1/register', '/']) assert.equal(isOAuthDiscoveryPath(path), false, path);
  });
});
