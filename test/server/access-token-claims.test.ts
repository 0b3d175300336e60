/** What a checked access token says, read as the platform needs it (access-token-claims.ts). Pure. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { missingScopes, scopesOf, userIdOf } from '../../src/server/access-token-claims.js';
import { metadataUrlOf, protectedResourceMetadata } from '../../src/server/protected-resource.js';

describe('the user a token names', () => {
  it('is the configured claim, taken as it is', () => {
    assert.deepEqual(userIdOf({ sub: 'auth0|ada' }, 'sub'), { userId: 'auth0|ada' });
    assert.deepEqual(userIdOf({ sub: 'x', email: 'ada@example.com' }, 'email'), { userId: 'ada@example.com' });
  });
  it('is refused when the claim is missing or not a string, saying which claim', () => {
    for (const claims of [{}, { sub: 42 }, { sub: '' }, { sub: ['a'] }]) {
      const answer = userIdOf(claims, 'sub');
      assert.ok('kind' in answer, JSON.stringify(claims));
      assert.match(answer.message, /sub claim/);
    }
  });
});

describe('the scopes a token carries', () => {
  it('come from RFC 9068 scope (a string) or the scp array some providers send', () => {
    assert.deepEqual([...scopesOf({ scope: 'a b  c' })], ['a', 'b', 'c']);
    assert.deepEqual([...scopesOf({ scp: ['a', 7, 'b'] })], ['a', 'b']);
    assert.deepEqual([...scopesOf({})], []);
  });
  it('missing ones are named in the order required; none required, none missing', () => {
    assert.deepEqual(missingScopes({ scope: 'b' }, ['a', 'b', 'c']), ['a', 'c']);
    assert.deepEqual(missingScopes({}, []), []);
  });
});

describe('the protected resource metadata (RFC 9728)', () => {
  it('is at the well-known path between the origin and the resource\'s path, and names the resource itself', () => {
    assert.equal(metadataUrlOf('https://tools.example.com/v1/agents/a/mcp'), 'https://tools.example.com/.well-known/oauth-protected-resource/v1/agents/a/mcp');
    assert.equal(metadataUrlOf('http://127.0.0.1:7070/'), 'http://127.0.0.1:7070/.well-known/oauth-protected-resource');
    assert.deepEqual(protectedResourceMetadata('https://t/v1/agents/a/mcp', { issuer: 'https://login/', scopes: ['s'] }), {
      resource: 'https://t/v1/agents/a/mcp', authorization_servers: ['https://login/'], scopes_supported: ['s'], bearer_methods_supported: ['header'],
      resource_name: 'subako MCP endpoint',
    });
  });
});
