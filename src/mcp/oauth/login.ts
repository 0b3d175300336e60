/**
 * `login`: the OAuth 2.1 authorization-code flow the MCP authorization spec describes, run out of band to
 * make a named credential.
 *
 * 1. Ask the MCP server without a token; a 401 names its protected resource metadata in
 *    `WWW-Authenticate` (else the well-known location is tried) — RFC 9728.
 * 2. Read the authorization server's metadata (RFC 8414, with the OpenID Connect discovery fallback).
 * 3. Choose the client: one registered beforehand (`client`, for servers without dynamic registration),
 *    else the one this name already holds for that server, else a Client ID Metadata Document URL where
 *    the server advertises support (`clientMetadataUrl`), else a dynamic registration (RFC 7591) as a
 *    native application (SEP-837: `application_type: "native"`, a loopback redirect).
 * 4. Send the person to the authorization endpoint with PKCE S256, a random `state` and the `resource`
 *    (RFC 8707); a loopback listener on 127.0.0.1 receives the redirect and checks `state`.
 * 5. Exchange the code (PKCE verifier, `resource`, RFC 9207 `iss` check) and store the tokens sealed.
 *
 * The SDK's helpers do the protocol pieces (discovery, registration, PKCE, token requests); this file
 * decides the order, the loopback redirect, what is stored, and how failures read.
 */
import { randomBytes } from 'node:crypto';
import {
  computeScopeUnion,
  exchangeAuthorization,
  OAuthError,
  startAuthorization,
  type FetchLike,
  type OAuthClientInformationFull,
} from '@modelcontextprotocol/client';
import { LoginError } from './errors.js';
import { discover, messageOf, parseServerUrl, probe, resourceFor } from './discovery.js';
import {
  checkMetadataDocumentUrl,
  preRegistered,
  register,
  type AuthorizationMetadata,
  type PreRegisteredClient,
} from './client-registration.js';
import { fetchWithTimeout } from './bounded-fetch.js';
import { startRedirectListener } from './loopback.js';
import { storedTokens, type StoredCredential } from './credential.js';
import { CredentialStore } from './store.js';
import { checkCredentialName } from './credential-file.js';

export interface LoginOptions {
  /** The MCP server's URL. */
  url: string;
  /** The name to store the credential under (what `mcp.oauth(name)` names). */
  name: string;
  /** Scopes to ask for; by default the server's challenge or its advertised scopes. */
  scope?: string;
  /**
   * A client registered beforehand at the authorization server (for servers without dynamic registration).
   * Its secret, if any, is stored sealed with the credential and sent to the token endpoint only.
   */
  client?: PreRegisteredClient;
  /**
   * An https URL of this client's Client ID Metadata Document, used as the client_id when the authorization
   * server advertises `client_id_metadata_document_supported` (otherwise dynamic registration is used).
   */
  clientMetadataUrl?: string;
  /** Receives the URL the person must open (print it, open a browser). */
  onAuthorizationUrl: (url: string) => void | Promise<void>;
  /** How long to wait for the redirect; 5 minutes by default. */
  timeoutMs?: number;
  signal?: AbortSignal;
  store?: CredentialStore;
  fetch?: FetchLike;
  now?: () => number;
}

export type { PreRegisteredClient } from './client-registration.js';

/** Where the login's client came from. */
export type ClientSource = 'registered' | 'reused' | 'pre-registered' | 'metadata-document';

export interface LoginResult {
  name: string;
  serverUrl: string;
  resource: string;
  authorizationServer: string;
  scope?: string;
  /** When the access token expires (ms since the epoch), if the server said. */
  expiresAt?: number;
  /** True when a new client was registered dynamically, false otherwise (see `client`). */
  registeredClient: boolean;
  client: ClientSource;
}

export async function login(options: LoginOptions): Promise<LoginResult> {
  checkCredentialName(options.name);
  const serverUrl = parseServerUrl(options.url);
  const fetchFn = fetchWithTimeout(options.fetch);
  const store = options.store ?? new CredentialStore();
  const now = options.now ?? Date.now;

  const challenge = await probe(serverUrl, fetchFn);
  const info = await discover(serverUrl, challenge.resourceMetadataUrl, fetchFn);
  const resource = resourceFor(serverUrl, info.resourceMetadata);
  const previous = await store.get(options.name).catch(() => undefined);
  const scope = scopeToAsk(options.scope, challenge.scope, info.resourceMetadata?.scopes_supported, previous?.serverUrl === serverUrl.href ? previous : undefined);
  const metadata = info.authorizationServerMetadata;

  const listener = await startRedirectListener();
  try {
    const reusable = previous !== undefined && previous.authorizationServer.url === info.authorizationServerUrl ? previous.client : undefined;
    const { client, source } = await chooseClient(options, reusable, info.authorizationServerUrl, metadata, listener.redirectUri, scope, fetchFn);

    const state = randomBytes(32).toString('base64url');
    const { authorizationUrl, codeVerifier } = await startAuthorization(info.authorizationServerUrl, {
      metadata,
      clientInformation: client,
      redirectUrl: listener.redirectUri,
      scope,
      state,
      resource,
    }).catch((err: unknown) => {
      throw new LoginError('discovery', `the authorization server cannot run this login: ${messageOf(err)}`, { cause: err });
    });

    const waiting = listener.waitForCallback(state, { timeoutMs: options.timeoutMs, signal: options.signal });
    waiting.catch(() => undefined); // observed below; the URL callback may throw first
    await options.onAuthorizationUrl(authorizationUrl.href);
    const callback = await waiting;

    let tokens;
    try {
      tokens = await exchangeAuthorization(info.authorizationServerUrl, {
        metadata,
        clientInformation: client,
        authorizationCode: callback.code,
        iss: callback.iss,
        codeVerifier,
        redirectUri: listener.redirectUri,
        resource,
        fetchFn,
      });
    } catch (err) {
      const code = OAuthError.isInstance(err) ? ` (${err.code})` : '';
      throw new LoginError('token', `the authorization server would not exchange the authorization code for tokens${code}`);
    }

    const credential: StoredCredential = {
      version: 1,
      serverUrl: serverUrl.href,
      resource,
      authorizationServer: { url: info.authorizationServerUrl, metadata },
      client,
      ...(scope !== undefined ? { scope } : {}),
      tokens: storedTokens(tokens, now()),
    };
    await store.save(options.name, credential);
    return {
      name: options.name,
      serverUrl: serverUrl.href,
      resource,
      authorizationServer: info.authorizationServerUrl,
      ...(credential.tokens.scope !== undefined ? { scope: credential.tokens.scope } : scope !== undefined ? { scope } : {}),
      ...(credential.tokens.expiresAt !== undefined ? { expiresAt: credential.tokens.expiresAt } : {}),
      registeredClient: source === 'registered',
      client: source,
    };
  } finally {
    await listener.close();
  }
}

/**
 * The scopes to ask for. `--scope` on a credential that already exists for this server is a step-up (the answer
 * to a 403 insufficient_scope): it asks for the new scopes on top of those the credential had, so that the new
 * token does not lose what the old one could do.
 */
function scopeToAsk(
  asked: string | undefined,
  challenged: string | undefined,
  supported: string[] | undefined,
  previous: StoredCredential | undefined,
): string | undefined {
  if (asked !== undefined && previous !== undefined) return computeScopeUnion(previous.tokens.scope ?? previous.scope, asked);
  return asked ?? challenged ?? supported?.join(' ') ?? undefined;
}

/** Step 3: which client this login runs as (see the module comment for the order). */
async function chooseClient(
  options: LoginOptions,
  reusable: OAuthClientInformationFull | undefined,
  authorizationServerUrl: string,
  metadata: AuthorizationMetadata,
  redirectUri: string,
  scope: string | undefined,
  fetchFn: FetchLike,
): Promise<{ client: OAuthClientInformationFull; source: ClientSource }> {
  if (options.client !== undefined) return { client: preRegistered(options.client, redirectUri), source: 'pre-registered' };
  if (reusable !== undefined) return { client: reusable, source: 'reused' };
  if (options.clientMetadataUrl !== undefined && metadata?.client_id_metadata_document_supported === true) {
    return { client: { client_id: checkMetadataDocumentUrl(options.clientMetadataUrl), redirect_uris: [redirectUri] }, source: 'metadata-document' };
  }
  const registerByHand =
    'register subako there (redirect URI http://127.0.0.1/callback, any port) and pass --client-id (and --client-secret if it issued one)';
  // SEP-837: a CLI with a loopback redirect is a native application (RFC 8252).
  const client = await register(authorizationServerUrl, metadata, { applicationType: 'native', redirectUri, scope, registerByHand, fetchFn });
  return { client, source: 'registered' };
}

