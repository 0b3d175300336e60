/**
 * The OAuth client-credentials grant (RFC 6749 §4.4; MCP extension `io.modelcontextprotocol/oauth-client-credentials`,
 * SEP-1046): a machine asks the token endpoint for an access token in its own name, with no person and no
 * redirect. The client authenticates with a secret (`client_secret_basic` or `client_secret_post`, whichever the
 * authorization server advertises) or a signed assertion (`private_key_jwt`, RFC 7523). The SDK's providers speak
 * the protocol (`ClientCredentialsProvider`, `PrivateKeyJwtProvider`, `fetchToken`); this file adds the deadline
 * and size bound every token request has, and a failure that repeats nothing but the server's error code.
 *
 * The same grant is the "refresh" of such a credential: there is usually no refresh token, so a new access
 * token comes from running the grant again (refresh.ts).
 */
import {
  ClientCredentialsProvider,
  fetchToken,
  PrivateKeyJwtProvider,
  type AuthorizationServerMetadata,
  type FetchLike,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import { Secret } from '../../common/index.js';
import { boundedFetch } from './bounded-fetch.js';
import type { PrivateKeyAlgorithm, StoredCredential } from './credential.js';
import { checkSendableToken, MAX_TOKEN_ANSWER_BYTES, tokenRequestFailure } from './token-refresh.js';

export const CLIENT_CREDENTIALS_EXTENSION = 'io.modelcontextprotocol/oauth-client-credentials';

/** A client that authenticates itself: with a secret, or with a private key whose public half the server holds. */
export type ClientCredentialsClient =
  | { clientId: string; clientSecret: Secret }
  | { clientId: string; privateKey: { pem: string; algorithm: PrivateKeyAlgorithm } };

export interface ClientCredentialsGrantRequest {
  /** The authorization server: its issuer URL and metadata (the token endpoint, the client authentications it takes). */
  server: { url: string; metadata: AuthorizationServerMetadata };
  client: ClientCredentialsClient;
  scope?: string;
  /** RFC 8707: the resource the token is for. */
  resource?: string;
  fetch?: FetchLike;
  timeoutMs?: number;
}

/**
 * An access token for the client itself. Throws TokenRefreshError: `refused` when the server answered with an
 * error (invalid_client: a wrong secret or key; unauthorized_client; invalid_scope), `unavailable` when it could
 * not be reached, failed, or sent no usable answer.
 */
export async function clientCredentialsGrant(request: ClientCredentialsGrantRequest): Promise<OAuthTokens> {
  const { server, client, scope } = request;
  // The issuer stamp (SEP-2352): the SDK refuses to send these credentials to any other authorization server.
  const expectedIssuer = server.metadata.issuer ?? server.url;
  const provider =
    'clientSecret' in client
      ? new ClientCredentialsProvider({ clientId: client.clientId, clientSecret: client.clientSecret.reveal(), clientName: 'subako', scope, expectedIssuer })
      : new PrivateKeyJwtProvider({
          clientId: client.clientId,
          privateKey: client.privateKey.pem,
          algorithm: client.privateKey.algorithm,
          clientName: 'subako',
          scope,
          expectedIssuer,
        });
  let tokens: OAuthTokens;
  try {
    tokens = await fetchToken(provider, server.url, {
      metadata: server.metadata,
      ...(request.resource !== undefined ? { resource: request.resource } : {}),
      ...(scope !== undefined ? { scope } : {}),
      fetchFn: boundedFetch(request.fetch, { timeoutMs: request.timeoutMs, maxBodyBytes: MAX_TOKEN_ANSWER_BYTES }),
    });
  } catch (err) {
    throw tokenRequestFailure(err, 'issue a token for the client credentials');
  }
  checkSendableToken(tokens);
  return tokens;
}

/** The client of a stored machine-to-machine credential, as the grant needs it; undefined for any other credential. */
export function clientCredentialsClientOf(credential: StoredCredential): ClientCredentialsClient | undefined {
  const how = credential.clientCredentials;
  if (how === undefined) return undefined;
  if (how.method === 'private_key_jwt') {
    return { clientId: credential.client.client_id, privateKey: { pem: how.privateKeyPem, algorithm: how.algorithm } };
  }
  const secret = credential.client.client_secret;
  return secret === undefined ? undefined : { clientId: credential.client.client_id, clientSecret: new Secret(secret) };
}
