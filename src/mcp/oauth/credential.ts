/**
 * What one stored OAuth credential holds, and the pure rules about it: how a token response becomes a stored
 * credential (when it is due for a refresh is token-refresh.ts's rule). Everything here is sealed at rest.
 */
import type { AuthorizationServerMetadata, OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/client';
import { CredentialStoreError } from './errors.js';

export interface StoredTokens {
  accessToken: string;
  tokenType: string;
  refreshToken?: string;
  scope?: string;
  /** When the access token expires (ms since the epoch); absent when the server did not say. */
  expiresAt?: number;
}

export interface StoredCredential {
  version: 1;
  /** The MCP server the credential was made for, as given to `login`. */
  serverUrl: string;
  /** The RFC 8707 resource indicator sent with every authorization and token request. */
  resource: string;
  /** The authorization server (its issuer URL) and the metadata refreshes need. */
  authorizationServer: { url: string; metadata: AuthorizationServerMetadata };
  /** The client registration (dynamic, RFC 7591), reused by the next login to the same server. */
  client: OAuthClientInformationFull;
  scope?: string;
  tokens: StoredTokens;
  /**
   * Present on a machine-to-machine credential (the client-credentials grant, extension
   * `io.modelcontextprotocol/oauth-client-credentials`): how the client authenticates when the grant is run
   * again in place of a refresh. A client secret is in `client.client_secret`; a private key is here.
   */
  clientCredentials?: ClientCredentialsAuthentication;
}

/** The algorithms a `private_key_jwt` client assertion is signed with. */
export const PRIVATE_KEY_ALGORITHMS = ['ES256', 'RS256'] as const;
export type PrivateKeyAlgorithm = (typeof PRIVATE_KEY_ALGORITHMS)[number];

export type ClientCredentialsAuthentication =
  | { method: 'client_secret' }
  | { method: 'private_key_jwt'; privateKeyPem: string; algorithm: PrivateKeyAlgorithm };

/**
 * A token response as stored. A refresh response without a refresh token keeps the old one (RFC 6749
 * §6: the server may or may not rotate it); with one, the new one replaces it.
 */
export function storedTokens(tokens: OAuthTokens, now: number, previous?: StoredTokens): StoredTokens {
  const expiresIn = typeof tokens.expires_in === 'number' && Number.isFinite(tokens.expires_in) ? tokens.expires_in : undefined;
  const stored: StoredTokens = { accessToken: tokens.access_token, tokenType: tokens.token_type ?? 'Bearer' };
  const refreshToken = tokens.refresh_token ?? previous?.refreshToken;
  if (refreshToken !== undefined) stored.refreshToken = refreshToken;
  const scope = tokens.scope ?? previous?.scope;
  if (scope !== undefined) stored.scope = scope;
  if (expiresIn !== undefined) stored.expiresAt = now + Math.max(0, expiresIn) * 1000;
  return stored;
}

/** Parses an entry's plain text, refusing anything this version did not write. */
export function parseCredential(text: string, name: string): StoredCredential {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
    throw new CredentialStoreError('corrupt', `the stored credential "${name}" is not valid JSON`);
  }
  const c = value as Partial<StoredCredential> | null;
  const ok =
    c !== null &&
    typeof c === 'object' &&
    c.version === 1 &&
    typeof c.serverUrl === 'string' &&
    typeof c.resource === 'string' &&
    typeof c.authorizationServer?.url === 'string' &&
    typeof c.authorizationServer.metadata === 'object' &&
    typeof c.client?.client_id === 'string' &&
    typeof c.tokens?.accessToken === 'string' &&
    typeof c.tokens.tokenType === 'string';
  if (!ok) throw new CredentialStoreError('corrupt', `the stored credential "${name}" is not one this version of subako wrote`);
  return c as StoredCredential;
}
