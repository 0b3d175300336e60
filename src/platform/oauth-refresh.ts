/**
 * The refresh of a vault's OAuth credential: its stored refresh settings put to mcp/'s one refresh-token grant
 * (the SDK's `refreshAuthorization`: RFC 6749 §6, client authentication, error answers), and the answer as the
 * vault stores it. Errors never carry the tokens, the client secret, or what the server said beyond its code.
 */
import { isHttpsOrLoopback } from '../common/index.js';
import { refreshTokens, TokenRefreshError } from '../mcp/oauth/index.js';
import { UpstreamError } from './errors.js';

export interface OAuthRefreshSettings {
  token_endpoint: string;
  client_id: string;
  client_secret?: string;
  scope?: string;
  refresh_token: string;
  /** RFC 8707: the resource the tokens are for (a user's connection names it; an operator's credential may not). */
  resource?: string;
  /** How the client authenticates at the token endpoint; `none` (public client) by default. */
  token_endpoint_auth?: 'none' | 'client_secret_basic' | 'client_secret_post';
}

export interface RefreshedToken {
  access_token: string;
  /** ISO time, when the server said how long the token lives. */
  expires_at: string | null;
  /** The refresh token to present next time: the rotated one, or the same when the server did not rotate it. */
  refresh_token: string;
}

/** On a call's path: shorter than the login's deadline. */
const REFRESH_TIMEOUT_MS = 15_000;
/** An expiry further out than this is taken as this (a date past year 275760 cannot be written at all). */
const LONGEST_LIFETIME_S = 10 * 365 * 24 * 3600;

/** Token endpoints must be https, except on the loopback interface (local development and tests). */
export function isAcceptableTokenEndpoint(text: string): boolean {
  return isHttpsOrLoopback(text);
}

export async function refreshAccessToken(settings: OAuthRefreshSettings, now: number): Promise<RefreshedToken> {
  const method = settings.token_endpoint_auth ?? 'none';
  const origin = new URL(settings.token_endpoint).origin;
  let tokens;
  try {
    tokens = await refreshTokens({
      server: { tokenEndpoint: settings.token_endpoint },
      client: {
        client_id: settings.client_id,
        // A public client's secret, if one was stored anyway, is never sent.
        ...(method !== 'none' && settings.client_secret !== undefined ? { client_secret: settings.client_secret } : {}),
        token_endpoint_auth_method: method,
        redirect_uris: [],
      },
      refreshToken: settings.refresh_token,
      ...(settings.scope ? { scope: settings.scope } : {}),
      ...(settings.resource ? { resource: settings.resource } : {}),
      timeoutMs: REFRESH_TIMEOUT_MS,
    });
  } catch (err) {
    if (!(err instanceof TokenRefreshError)) throw err;
    const code = err.oauthCode === undefined ? '' : ` (${err.oauthCode})`;
    throw new UpstreamError(
      err.reason === 'refused'
        ? `the token endpoint ${origin} refused to refresh the access token${code}: store the credential again with a new refresh token`
        : `the token endpoint ${origin} could not be reached, failed, or sent no usable answer${code}; the next use tries again`,
      'oauth_refresh_failed',
    );
  }
  const expiresIn = typeof tokens.expires_in === 'number' && tokens.expires_in > 0 ? Math.min(tokens.expires_in, LONGEST_LIFETIME_S) : null;
  return {
    access_token: tokens.access_token,
    expires_at: expiresIn === null ? null : new Date(now + expiresIn * 1000).toISOString(),
    refresh_token: tokens.refresh_token || settings.refresh_token,
  };
}
