/**
 * Which OAuth client subako runs as at an authorization server: one registered beforehand, a Client ID
 * Metadata Document URL (SEP-991), or a dynamic registration (RFC 7591) with the application type the flow
 * needs (SEP-837: `native` for the CLI's loopback redirect, `web` for the platform's public callback).
 */
import { OAuthError, registerClient, type FetchLike, type OAuthClientInformationFull } from '@modelcontextprotocol/client';
import { Secret } from '../../common/index.js';
import { LoginError } from './errors.js';
import { messageOf } from './discovery.js';

export interface PreRegisteredClient {
  clientId: string;
  clientSecret?: string | Secret;
}

export type AuthorizationMetadata = Parameters<typeof registerClient>[1]['metadata'];

export function preRegistered(client: PreRegisteredClient, redirectUri: string): OAuthClientInformationFull {
  if (typeof client.clientId !== 'string' || client.clientId.trim() === '' || /[\r\n\0]/.test(client.clientId)) {
    throw new LoginError('registration', 'a pre-registered client needs its client id: the non-empty id the authorization server gave it');
  }
  const secret = client.clientSecret === undefined ? undefined : Secret.from(client.clientSecret).reveal();
  if (secret === '') throw new LoginError('registration', 'the client secret is empty: leave it out for a public client, or give the one the authorization server issued');
  return { client_id: client.clientId, ...(secret !== undefined ? { client_secret: secret } : {}), redirect_uris: [redirectUri] };
}

/** SEP-991: a Client ID Metadata Document is named by an https URL with a path. */
export function checkMetadataDocumentUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    throw new LoginError('registration', `"${text}" is not a URL; a client metadata document URL is https with a path`);
  }
  if (url.protocol !== 'https:' || url.pathname === '/' || url.hash !== '') {
    throw new LoginError('registration', `a client metadata document URL is https with a path and no fragment, not ${url.href}`);
  }
  return url.href;
}

/**
 * How the application registers: `native` is the CLI (RFC 8252 loopback redirect, any port), `web` is the
 * platform's fixed public callback. SEP-837 asks for `application_type` so that the server applies the right
 * redirect rules instead of rejecting a loopback URI as a web client's.
 */
export interface RegistrationRequest {
  applicationType: 'native' | 'web';
  redirectUri: string;
  scope: string | undefined;
  /** What to tell the operator to do when the server has no dynamic registration. */
  registerByHand: string;
  fetchFn: FetchLike;
}

/** Dynamic client registration as a public client (PKCE, no secret). */
export async function register(
  authorizationServerUrl: string,
  metadata: AuthorizationMetadata,
  request: RegistrationRequest,
): Promise<OAuthClientInformationFull> {
  const { redirectUri, scope, fetchFn } = request;
  if (metadata?.registration_endpoint === undefined) {
    throw new LoginError(
      'registration',
      `the authorization server ${authorizationServerUrl} offers no dynamic client registration (RFC 7591): ${request.registerByHand}`,
    );
  }
  try {
    return await registerClient(authorizationServerUrl, {
      metadata,
      clientMetadata: {
        client_name: 'subako',
        application_type: request.applicationType,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        ...(scope !== undefined ? { scope } : {}),
      },
      scope,
      fetchFn,
    });
  } catch (err) {
    const code = OAuthError.isInstance(err) ? ` (${err.code})` : `: ${messageOf(err)}`;
    throw new LoginError('registration', `the authorization server refused to register subako as a client${code}`, { cause: err });
  }
}

