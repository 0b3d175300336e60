/**
 * RFC 7009 token revocation, for a connection a person or an operator ends: each token is revoked at the
 * authorization server when it advertises a `revocation_endpoint`, so that a copy somewhere else stops working
 * too, not only subako's. Without the endpoint there is nothing to call, and that is said (`advertised: false`).
 * A failure says only that it failed and the server's status: never the token.
 */
import type { AuthorizationServerMetadata, FetchLike, OAuthClientInformationMixed } from '@modelcontextprotocol/client';
import { boundedFetch } from './bounded-fetch.js';

export interface RevocationRequest {
  /** The authorization server's metadata: only `revocation_endpoint` is read (RFC 8414 §2). */
  metadata: AuthorizationServerMetadata | { revocation_endpoint?: string };
  client: OAuthClientInformationMixed;
  /** Revoked in this order: the refresh token first (RFC 7009 §2.1: the server may then drop the grant's access tokens too). */
  tokens: { token: string; hint: 'refresh_token' | 'access_token' }[];
  fetch?: FetchLike;
  timeoutMs?: number;
}

export interface RevocationOutcome {
  /** Whether the server advertises revocation at all. */
  advertised: boolean;
  /** How many tokens it acknowledged (HTTP 200, as RFC 7009 §2.2 answers even for an unknown token). */
  revoked: number;
  /** Why a token was not revoked, without the token. */
  failures: string[];
}

export async function revokeTokens(request: RevocationRequest): Promise<RevocationOutcome> {
  const advertised = (request.metadata as { revocation_endpoint?: unknown }).revocation_endpoint;
  const endpoint = typeof advertised === 'string' && URL.canParse(advertised) ? advertised : undefined;
  if (endpoint === undefined) return { advertised: false, revoked: 0, failures: [] };
  const fetchFn = boundedFetch(request.fetch, { timeoutMs: request.timeoutMs ?? 15_000, maxBodyBytes: 64 * 1024 });
  const outcome: RevocationOutcome = { advertised: true, revoked: 0, failures: [] };
  for (const { token, hint } of request.tokens) {
    const form = new URLSearchParams({ token, token_type_hint: hint });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    const secret = 'client_secret' in request.client ? request.client.client_secret : undefined;
    if (secret) headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(request.client.client_id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
    else form.set('client_id', request.client.client_id);
    try {
      const response = await fetchFn(endpoint, { method: 'POST', headers, body: form.toString() });
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) outcome.revoked += 1;
      else outcome.failures.push(`the ${hint.replace('_', ' ')} was not revoked: ${new URL(endpoint).origin} answered HTTP ${response.status}`);
    } catch {
      outcome.failures.push(`the ${hint.replace('_', ' ')} was not revoked: ${new URL(endpoint).origin} could not be reached`);
    }
  }
  return outcome;
}
