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

describe('bearerChallenge at the door (RFC 9728 §5.1, RFC 6750 §3)', () => {
  const door = { resourceMetadata: 'https://tools.example.com/.well-known/oauth-protected-resource/v1/agents/a/mcp', scopes: ['mcp:tools', 'profile'] };
  it('a request without credentials is pointed at the resource metadata, with the scopes to ask for', () => {
    assert.equal(bearerChallenge({ tokenSent: false }, door),
      `Bearer realm="subako", resource_metadata="${door.resourceMetadata}", scope="mcp:tools profile"`);
    assert.equal(bearerChallenge({ tokenSent: false }, { ...door, scopes: [] }), `Bearer realm="subako", resource_metadata="${door.resourceMetadata}"`);
  });
  it('a wrong token is invalid_token, one short of scope insufficient_scope, each with its description', () => {
    assert.equal(bearerChallenge({ tokenSent: true, description: 'expired' }, door),
      `Bearer realm="subako", error="invalid_token", error_description="expired", resource_metadata="${door.resourceMetadata}", scope="mcp:tools profile"`);
    assert.match(bearerChallenge({ tokenSent: true, error: 'insufficient_scope', description: 'needs mcp:tools' }, door), /^Bearer realm="subako", error="insufficient_scope", error_description="needs mcp:tools", resource_metadata=/);
  });
  it('a metadata URL or scope that would break the quoting is refused', () => {
    assert.throws(() => bearerChallenge({ tokenSent: false }, { ...door, resourceMetadata: 'https://x/"' }), RangeError);
    assert.throws(() => bearerChallenge({ tokenSent: false }, { ...door, scopes: ['a\\b'] }), RangeError);
  });
});
