/**
 * The web client's halves of the authorization-code flow (web-authorization.ts) and RFC 7009 revocation
 * (revocation.ts), against the test authorization server on loopback: the URL carries PKCE S256, the resource and the
 * state made from the verifier; a response naming another issuer is refused before the code is sent (RFC 9207); a
 * server without S256 is not used; revoked tokens stop working at once, and a server without revocation says so.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestAuthServer } from './auth-server.js';
import { beginWebAuthorization, finishWebAuthorization, revokeTokens, LoginError } from '../../../src/mcp/oauth/index.js';

let auth: TestAuthServer;
const redirectUri = 'https://subako.example.com/v1/connections/callback';
const resource = 'https://upstream.example.com/mcp';

before(async () => {
  auth = await new TestAuthServer().start();
  auth.preRegister('web-client', undefined, [redirectUri]);
});
after(() => auth?.close());

/** Runs the authorization endpoint as a browser would, and answers the redirect's query. */
async function authorize(url: string): Promise<URLSearchParams> {
  const answer = await fetch(url, { redirect: 'manual' });
  assert.equal(answer.status, 302, await answer.text());
  return new URL(answer.headers.get('location')!).searchParams;
}

describe('the web authorization', () => {
  const metadata = () => auth.metadata() as never;
  const client = { client_id: 'web-client', redirect_uris: [redirectUri] };

  it('sends PKCE S256, the resource and a state made from the verifier, and exchanges the code with the issuer checked', async () => {
    let given = '';
    const begun = await beginWebAuthorization({
      authorizationServerUrl: auth.url, metadata: metadata(), client, redirectUri, scope: 'tools:call', resource,
      state: (verifier) => { given = verifier; return `sealed:${verifier.length}`; },
    });
    assert.equal(given, begun.codeVerifier);
    const query = new URL(begun.url).searchParams;
    assert.equal(query.get('code_challenge_method'), 'S256');
    assert.equal(query.get('resource'), resource);
    assert.equal(query.get('state'), `sealed:${begun.codeVerifier.length}`);
    const back = await authorize(begun.url);
    const tokens = await finishWebAuthorization({
      authorizationServerUrl: auth.url, metadata: metadata(), client, redirectUri, resource, code: back.get('code')!, iss: back.get('iss')!, codeVerifier: begun.codeVerifier,
    });
    assert.equal(auth.introspect(tokens.access_token)?.resource, resource);

    const outcome = await revokeTokens({ metadata: metadata(), client, tokens: [{ token: tokens.refresh_token!, hint: 'refresh_token' }, { token: tokens.access_token, hint: 'access_token' }] });
    assert.deepEqual(outcome, { advertised: true, revoked: 2, failures: [] });
    assert.equal(auth.introspect(tokens.access_token), undefined, 'revoked at once');
  });

  it('refuses a response that names another issuer, before the code is sent', async () => {
    const begun = await beginWebAuthorization({ authorizationServerUrl: auth.url, metadata: metadata(), client, redirectUri, resource, state: 's' });
    const back = await authorize(begun.url);
    const before = auth.tokenRequests.length;
    await assert.rejects(
      finishWebAuthorization({
        authorizationServerUrl: auth.url, metadata: metadata(), client, redirectUri, resource, code: back.get('code')!, iss: 'https://evil.example.com', codeVerifier: begun.codeVerifier,
      }),
      (err: unknown) => err instanceof LoginError && err.reason === 'authorization' && /names issuer "https:\/\/evil\.example\.com", not http:\/\/127\.0\.0\.1:\d+ .*RFC 9207/.test(err.message),
    );
    assert.equal(auth.tokenRequests.length, before, 'the code was not sent');
  });

  it('does not use a server without PKCE S256, and says when a server offers no revocation', async () => {
    const plain = { ...auth.metadata(), code_challenge_methods_supported: ['plain'] } as never;
    await assert.rejects(
      beginWebAuthorization({ authorizationServerUrl: auth.url, metadata: plain, client, redirectUri, resource, state: 's' }),
      (err: unknown) => err instanceof LoginError && /does not advertise PKCE S256/.test(err.message),
    );
    const outcome = await revokeTokens({ metadata: {}, client, tokens: [{ token: 'whatever', hint: 'access_token' }] });
    assert.deepEqual(outcome, { advertised: false, revoked: 0, failures: [] });
  });
});
