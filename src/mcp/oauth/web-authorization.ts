/**
 * The authorization-code flow with PKCE (S256) as a server-side web client: the platform's per-user connections,
 * where the person is sent from a consent link to the authorization server and comes back to the server's own
 * public callback, not to a loopback listener as in the CLI's `login`.
 *
 * Two halves, split by the person's round trip through the browser:
 * - `beginWebAuthorization`: the authorization URL, with the `resource` indicator (RFC 8707), the scopes and the
 *   caller's `state` (the platform seals what it must find again into it), and the PKCE verifier to keep;
 * - `finishWebAuthorization`: the code exchanged, with the RFC 9207 `iss` check (a code minted by another
 *   authorization server, mixed up by an attacker, is refused before it is sent anywhere).
 *
 * Discovery and the client's choice are discovery.ts's and client-registration.ts's; this file adds the order a
 * web client follows and failures that never repeat a code, a token or a verifier.
 */
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  OAuthError,
  startAuthorization,
  type AuthorizationServerMetadata,
  type FetchLike,
  type OAuthClientInformationMixed,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import { LoginError } from './errors.js';
import { messageOf } from './discovery.js';
import { boundedFetch } from './bounded-fetch.js';
import { MAX_TOKEN_ANSWER_BYTES } from './token-refresh.js';

export interface WebAuthorizationStart {
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata;
  client: OAuthClientInformationMixed;
  /** The platform's public callback (registered with the client). */
  redirectUri: string;
  scope?: string;
  /** RFC 8707: the resource the tokens are for. */
  resource: string;
  /**
   * Opaque to the authorization server; returned with the code. A function is given the PKCE verifier, for a
   * caller that keeps it inside the state (a sealed state: nothing stored between the two halves).
   */
  state: string | ((codeVerifier: string) => string);
}

/** Where to send the person, and the PKCE verifier the exchange needs (kept by the caller, never shown). */
export async function beginWebAuthorization(start: WebAuthorizationStart): Promise<{ url: string; codeVerifier: string }> {
  if (!start.metadata.code_challenge_methods_supported?.includes('S256')) {
    // OAuth 2.1 and the MCP authorization spec: without S256 PKCE the flow is not run at all.
    throw new LoginError('discovery', `the authorization server ${start.authorizationServerUrl} does not advertise PKCE S256 (code_challenge_methods_supported); subako connects only with it`);
  }
  try {
    const { authorizationUrl, codeVerifier } = await startAuthorization(start.authorizationServerUrl, {
      metadata: start.metadata,
      clientInformation: start.client,
      redirectUrl: start.redirectUri,
      ...(start.scope ? { scope: start.scope } : {}),
      state: typeof start.state === 'string' ? start.state : 'pending',
      resource: start.resource,
    });
    if (typeof start.state !== 'string') authorizationUrl.searchParams.set('state', start.state(codeVerifier));
    return { url: authorizationUrl.href, codeVerifier };
  } catch (err) {
    throw new LoginError('discovery', `the authorization server cannot run this authorization: ${messageOf(err)}`, { cause: err });
  }
}

export interface WebAuthorizationFinish {
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata;
  client: OAuthClientInformationMixed;
  redirectUri: string;
  resource: string;
  code: string;
  /** The callback's `iss` parameter, as received (RFC 9207). */
  iss: string | undefined;
  codeVerifier: string;
  fetch?: FetchLike;
  timeoutMs?: number;
}

/** The tokens for a code; LoginError `token` (the server's error code only) when it will not give them. */
export async function finishWebAuthorization(finish: WebAuthorizationFinish): Promise<OAuthTokens> {
  const issuer = finish.metadata.issuer;
  // RFC 9207 §2.4: an `iss` that is not this server's issuer means the response is not from the server we sent the person to.
  if (finish.iss !== undefined && finish.iss !== issuer) {
    throw new LoginError('authorization', `the authorization response names issuer ${JSON.stringify(finish.iss.slice(0, 200))}, not ${issuer} where the person was sent; refusing it (RFC 9207)`);
  }
  try {
    return await exchangeAuthorization(finish.authorizationServerUrl, {
      metadata: finish.metadata,
      clientInformation: finish.client,
      authorizationCode: finish.code,
      ...(finish.iss !== undefined ? { iss: finish.iss } : {}),
      codeVerifier: finish.codeVerifier,
      redirectUri: finish.redirectUri,
      resource: new URL(finish.resource),
      fetchFn: boundedFetch(finish.fetch, { timeoutMs: finish.timeoutMs, maxBodyBytes: MAX_TOKEN_ANSWER_BYTES }),
    });
  } catch (err) {
    const code = OAuthError.isInstance(err) && /^[A-Za-z0-9_.-]{1,64}$/.test(err.code) ? ` (${err.code})` : '';
    throw new LoginError('token', `the authorization server would not exchange the authorization code for tokens${code}`);
  }
}

/** An issuer's metadata (RFC 8414, with the OpenID Connect fallback): for a connection named by its issuer, not by an MCP server. */
export async function issuerMetadata(issuer: string, fetchFn?: FetchLike): Promise<AuthorizationServerMetadata> {
  let metadata: AuthorizationServerMetadata | undefined;
  try {
    metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn: boundedFetch(fetchFn) });
  } catch (err) {
    throw new LoginError('discovery', `the authorization server metadata of ${issuer} could not be read: ${messageOf(err)}`, { cause: err });
  }
  if (metadata === undefined) throw new LoginError('discovery', `${issuer} publishes no authorization server metadata (RFC 8414 or OpenID Connect discovery)`);
  return metadata;
}
