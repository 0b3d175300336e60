/**
 * The OAuth 2.0 refresh-token grant (RFC 6749 §6), for vault credentials whose access token is about to
 * expire. One function: given the refresh settings, fetch a new token. Errors never carry the tokens.
 */
import { isHttpsOrLoopback } from '../common/index.js';
import { UpstreamError } from './errors.js';

export interface OAuthRefreshSettings {
  token_endpoint: string;
  client_id: string;
  client_secret?: string;
  scope?: string;
  refresh_token: string;
  /** How the client authenticates at the token endpoint; `none` (public client) by default. */
  token_endpoint_auth?: 'none' | 'client_secret_basic' | 'client_secret_post';
}

export interface RefreshedToken {
  access_token: string;
  /** ISO time, when the server said how long the token lives. */
  expires_at: string | null;
  /** A rotated refresh token, when the server issued one. */
  refresh_token: string | null;
}

const REFRESH_TIMEOUT_MS = 15_000;

/** Token endpoints must be https, except on the loopback interface (local development and tests). */
export function isAcceptableTokenEndpoint(text: string): boolean {
  return isHttpsOrLoopback(text);
}

export async function refreshAccessToken(settings: OAuthRefreshSettings, now: number): Promise<RefreshedToken> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: settings.refresh_token });
  if (settings.scope) form.set('scope', settings.scope);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  const auth = settings.token_endpoint_auth ?? 'none';
  if (auth === 'client_secret_basic') {
    const pair = `${encodeURIComponent(settings.client_id)}:${encodeURIComponent(settings.client_secret ?? '')}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else {
    form.set('client_id', settings.client_id);
    if (auth === 'client_secret_post' && settings.client_secret) form.set('client_secret', settings.client_secret);
  }
  let response: Response;
  try {
    response = await fetch(settings.token_endpoint, {
      method: 'POST',
      headers,
      body: form.toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(REFRESH_TIMEOUT_MS),
    });
  } catch (err) {
    throw new UpstreamError(`the token endpoint ${new URL(settings.token_endpoint).origin} could not be reached`, 'oauth_refresh_failed', { cause: err });
  }
  const text = await response.text().catch(() => '');
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    // A non-JSON answer is handled below as a failure.
    if (!(error instanceof SyntaxError)) throw error;
  }
  if (!response.ok || typeof body.access_token !== 'string' || body.access_token.length === 0) {
    const reason = typeof body.error === 'string' ? ` (${body.error.slice(0, 100)})` : '';
    throw new UpstreamError(`the token endpoint refused to refresh the access token: HTTP ${response.status}${reason}`, 'oauth_refresh_failed');
  }
  const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : null;
  return {
    access_token: body.access_token,
    expires_at: expiresIn === null ? null : new Date(now + expiresIn * 1000).toISOString(),
    refresh_token: typeof body.refresh_token === 'string' && body.refresh_token.length > 0 ? body.refresh_token : null,
  };
}
