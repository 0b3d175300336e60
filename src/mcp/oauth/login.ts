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
 * A machine logs in with `clientCredentials` instead (client-credentials.ts): steps 1–2, then the
 * client-credentials grant in place of 3–5. A server without any metadata that still asks for a token is a
 * 2025-03-26 one: its origin's default endpoints stand in for step 2 (legacy-endpoints.ts). When the server now
 * names another authorization server than the stored credential's, the login runs against the new one with a
 * client of its own (a client is only ever used at the server that issued it, SEP-2352) and says `movedFrom`.
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
import { checkClientCredentials, credentialByClientCredentials, type ClientCredentialsOptions } from './client-credentials.js';

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
  /**
   * Log in as a machine with the client-credentials grant (extension `io.modelcontextprotocol/oauth-client-credentials`):
   * no person, no browser. The secret or private key is stored sealed, and the grant runs again when the token expires.
   */
  clientCredentials?: ClientCredentialsOptions;
  /** Receives the URL the person must open (print it, open a browser); needed unless `clientCredentials` is given. */
  onAuthorizationUrl?: (url: string) => void | Promise<void>;
  /** How long to wait for the redirect; 5 minutes by default. */
  timeoutMs?: number;
  signal?: AbortSignal;
  store?: CredentialStore;
  fetch?: FetchLike;
  now?: () => number;
}

export type { PreRegisteredClient } from './client-registration.js';

/** Where the login's client came from. */
export type ClientSource = 'registered' | 'reused' | 'pre-registered' | 'metadata-document' | 'client-credentials';

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
  /** The authorization server the name's previous credential was from, when the server now names another one. */
  movedFrom?: string;
}

export async function login(options: LoginOptions): Promise<LoginResult> {
  checkCredentialName(options.name);
  const serverUrl = parseServerUrl(options.url);
  const fetchFn = fetchWithTimeout(options.fetch);
  const store = options.store ?? new CredentialStore();
  const now = options.now ?? Date.now;

  // Checked before anything is sent: a bad key or an empty secret should not cost a round trip.
  const machine = options.clientCredentials === undefined ? undefined : checkClientCredentials(options.clientCredentials);
  if (machine === undefined && options.onAuthorizationUrl === undefined) {
    throw new TypeError('login needs onAuthorizationUrl (where to send the person) unless it runs the client-credentials grant');
  }

  const challenge = await probe(serverUrl, fetchFn);
  const info = await discover(serverUrl, challenge.resourceMetadataUrl, fetchFn, { legacyFallback: challenge.challenged === true });
  const resource = resourceFor(serverUrl, info.resourceMetadata);
  const stored = await store.get(options.name).catch(() => undefined);
  const previous = stored?.serverUrl === serverUrl.href ? stored : undefined;
  const movedFrom = previous !== undefined && previous.authorizationServer.url !== info.authorizationServerUrl ? previous.authorizationServer.url : undefined;
  const scope = scopeToAsk(options.scope, challenge.scope, info.resourceMetadata?.scopes_supported, previous);
  const metadata = info.authorizationServerMetadata;

  if (machine !== undefined) {
    const credential = await credentialByClientCredentials({
      serverUrl,
      resource,
      authorizationServerUrl: info.authorizationServerUrl,
      metadata,
      scope,
      client: machine,
      fetchFn,
      now: now(),
    });
    await store.save(options.name, credential);
    return resultOf(options.name, credential, 'client-credentials', movedFrom);
  }

  const listener = await startRedirectListener();
  try {
    // Never a client of another authorization server (SEP-2352), nor a machine's client for a person's sign-in.
    const reusable =
      stored !== undefined && stored.authorizationServer.url === info.authorizationServerUrl && stored.clientCredentials === undefined ? stored.client : undefined;
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
    await options.onAuthorizationUrl!(authorizationUrl.href);
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
    return resultOf(options.name, credential, source, movedFrom);
  } finally {
    await listener.close();
  }
}

function resultOf(name: string, credential: StoredCredential, source: ClientSource, movedFrom: string | undefined): LoginResult {
  const scope = credential.tokens.scope ?? credential.scope;
  return {
    name,
    serverUrl: credential.serverUrl,
    resource: credential.resource,
    authorizationServer: credential.authorizationServer.url,
    ...(scope !== undefined ? { scope } : {}),
    ...(credential.tokens.expiresAt !== undefined ? { expiresAt: credential.tokens.expiresAt } : {}),
    registeredClient: source === 'registered',
    client: source,
    ...(movedFrom !== undefined ? { movedFrom } : {}),
  };
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

