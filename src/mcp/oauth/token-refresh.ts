/**
 * The refresh-token grant (RFC 6749 §6), once for every OAuth credential subako holds: the command line's
 * named credentials (refresh.ts) and the platform's vault credentials (platform/oauth-refresh.ts). The SDK's
 * `refreshAuthorization` speaks the protocol — client authentication (none, client_secret_basic,
 * client_secret_post), the RFC 8707 `resource`, the token response's shape (RFC 6749 §5.1), error responses
 * (§5.2); this file adds when to refresh, a deadline and a size bound on every request, and a failure that says
 * "refused" or "unavailable" without repeating anything the server sent beyond its error code.
 */
import {
  OAuthError,
  refreshAuthorization,
  type AuthorizationServerMetadata,
  type FetchLike,
  type OAuthClientInformationMixed,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import { TokenRefreshError } from './errors.js';
import { boundedFetch } from './bounded-fetch.js';

/** Refresh this long before the access token expires, so a call never starts with a dying token. */
export const REFRESH_EARLY_MS = 60_000;

/**
 * Whether an access token is due for a refresh: from `earlyMs` before its expiry (ms since the epoch) on.
 * A token whose server gave no expiry (`undefined`) never is; one whose expiry cannot be read (NaN) always is.
 */
export function needsRefresh(expiresAt: number | undefined, now: number, earlyMs = REFRESH_EARLY_MS): boolean {
  if (expiresAt === undefined) return false;
  return Number.isNaN(expiresAt) || now >= expiresAt - earlyMs;
}

/** A token answer is a few kilobytes; one past this is refused rather than read into memory. */
export const MAX_TOKEN_ANSWER_BYTES = 256 * 1024;

export interface TokenRefreshRequest {
  /**
   * Where the token endpoint is: an authorization server's URL and its metadata (RFC 8414), whose
   * `token_endpoint` and `token_endpoint_auth_methods_supported` are used; or the token endpoint itself.
   */
  server: { url: string | URL; metadata?: AuthorizationServerMetadata } | { tokenEndpoint: string };
  /** The client, with its secret and `token_endpoint_auth_method` when it has them. */
  client: OAuthClientInformationMixed;
  refreshToken: string;
  /** RFC 8707: the resource the tokens are for. */
  resource?: string;
  scope?: string;
  fetch?: FetchLike;
  /** Each request's deadline. */
  timeoutMs?: number;
}

/**
 * New tokens for a refresh token. The answer keeps the presented refresh token when the server did not rotate
 * it. Throws TokenRefreshError: `refused` when the server answered with an error that only a new authorization
 * cures (invalid_grant, invalid_client, …), `unavailable` when it could not be reached, failed itself, or sent
 * no usable answer.
 */
export async function refreshTokens(request: TokenRefreshRequest): Promise<OAuthTokens> {
  let tokens: OAuthTokens;
  try {
    const where = 'tokenEndpoint' in request.server
      ? { url: new URL(request.server.tokenEndpoint).origin, metadata: tokenEndpointOnly(request.server.tokenEndpoint) }
      : request.server;
    tokens = await refreshAuthorization(where.url, {
      metadata: where.metadata,
      clientInformation: request.client,
      refreshToken: request.refreshToken,
      ...(request.resource !== undefined ? { resource: request.resource } : {}),
      ...(request.scope !== undefined ? { scope: request.scope } : {}),
      fetchFn: boundedFetch(request.fetch, { timeoutMs: request.timeoutMs, maxBodyBytes: MAX_TOKEN_ANSWER_BYTES }),
    });
  } catch (err) {
    throw refreshFailure(err);
  }
  checkSendableToken(tokens);
  // An empty refresh token is none: the presented one stays the one to present next time.
  return { ...tokens, refresh_token: tokens.refresh_token || request.refreshToken };
}

/** The longest access token taken: JWTs with many claims run to a few kilobytes. */
const MAX_ACCESS_TOKEN_CHARS = 16 * 1024;

/** A token that goes into an `Authorization` header as it is: not empty, bounded, no control characters. */
function isSendableToken(token: string): boolean {
  return token.length > 0 && token.length <= MAX_ACCESS_TOKEN_CHARS && !/[\x00-\x1f\x7f]/.test(token);
}

/** Refuses (as `unavailable`) an answer whose access token could not go into a header, from any grant. */
export function checkSendableToken(tokens: OAuthTokens): void {
  if (!isSendableToken(tokens.access_token)) {
    throw new TokenRefreshError('unavailable', 'the authorization server sent an access token that cannot be sent in a header (empty, too long, or with control characters)');
  }
}

/**
 * Metadata naming only a token endpoint, for a credential that was given one rather than discovered: the
 * refresh reads `token_endpoint` (and the supported client authentications, left empty so that the client's
 * own `token_endpoint_auth_method` decides) and nothing else of it.
 */
function tokenEndpointOnly(tokenEndpoint: string): AuthorizationServerMetadata {
  return { token_endpoint: tokenEndpoint } as AuthorizationServerMetadata;
}

/** An RFC 6749 error code as it may be repeated: the spec's own alphabet in practice, and short. */
const ERROR_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

function refreshFailure(err: unknown): TokenRefreshError {
  return tokenRequestFailure(err, 'refresh the token');
}

/**
 * How a failed token request reads, for any grant (`what` says what was asked, e.g. "refresh the token"):
 * `unavailable` when the server could not be reached, failed itself or sent nothing usable; `refused` when it
 * answered with an error only new credentials or a new authorization cure. Only the error code is repeated.
 */
export function tokenRequestFailure(err: unknown, what: string): TokenRefreshError {
  if (!OAuthError.isInstance(err)) {
    return new TokenRefreshError('unavailable', 'the authorization server could not be reached or sent no usable answer');
  }
  const code = ERROR_CODE.test(err.code) ? err.code : undefined;
  const named = code === undefined ? 'an error' : code;
  // The SDK reads an answer it cannot parse as `server_error`: the server failed, a retry may get past it.
  if (err.code === 'server_error' || err.code === 'temporarily_unavailable') {
    return new TokenRefreshError('unavailable', `the authorization server failed to ${what} (${named})`, code);
  }
  return new TokenRefreshError('refused', `the authorization server refused to ${what} (${named})`, code);
}
