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
  checkResourceAllowed,
  discoverOAuthServerInfo,
  exchangeAuthorization,
  extractWWWAuthenticateParams,
  OAuthError,
  registerClient,
  resourceUrlFromServerUrl,
  startAuthorization,
  type FetchLike,
  type OAuthClientInformationFull,
  type OAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/client';
import { Secret } from '../../common/index.js';
import { SUBAKO_VERSION } from '../../version.js';
import { LoginError } from './errors.js';
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

export interface PreRegisteredClient {
  clientId: string;
  clientSecret?: string | Secret;
}

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

function parseServerUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    throw new LoginError('discovery', `"${url}" is not a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new LoginError('discovery', `an MCP server URL is http(s), not ${parsed.protocol}`);
  }
  return parsed;
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

/** Step 1: an unauthenticated request; a 401/403 challenge may name the resource metadata and scopes. */
async function probe(serverUrl: URL, fetchFn: FetchLike): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  let response: Response;
  try {
    response = await fetchFn(serverUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'server/discover',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'server/discover',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'subako', version: SUBAKO_VERSION },
          },
        },
      }),
    });
  } catch (err) {
    throw new LoginError('discovery', `could not reach the MCP server at ${serverUrl.href}: ${messageOf(err)}`, { cause: err });
  }
  await response.body?.cancel().catch(() => undefined); // a body we do not read: only the status and headers matter
  if (response.status !== 401 && response.status !== 403) return {};
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
}

/** Steps 1–2: protected resource metadata, then the authorization server's metadata. */
async function discover(serverUrl: URL, resourceMetadataUrl: URL | undefined, fetchFn: FetchLike) {
  let info;
  try {
    info = await discoverOAuthServerInfo(serverUrl, { resourceMetadataUrl, fetchFn });
  } catch (err) {
    throw new LoginError('discovery', `OAuth discovery for ${serverUrl.href} failed: ${messageOf(err)}`, { cause: err });
  }
  const metadata = info.authorizationServerMetadata;
  if (metadata === undefined) {
    throw new LoginError(
      'discovery',
      `no authorization server metadata was found for ${serverUrl.href} (tried ${info.authorizationServerUrl}); the server may not use OAuth`,
    );
  }
  return { ...info, authorizationServerMetadata: metadata };
}

/**
 * The RFC 8707 resource indicator: the metadata's `resource` when it covers the server URL (sent verbatim),
 * else the server URL itself without its fragment.
 */
function resourceFor(serverUrl: URL, metadata: OAuthProtectedResourceMetadata | undefined): string {
  if (metadata === undefined) return resourceUrlFromServerUrl(serverUrl).href;
  if (!checkResourceAllowed({ requestedResource: serverUrl, configuredResource: metadata.resource })) {
    throw new LoginError(
      'discovery',
      `the protected resource metadata is for ${metadata.resource}, which does not cover ${serverUrl.href}; refusing to use it`,
    );
  }
  return metadata.resource;
}

type AuthorizationMetadata = Parameters<typeof registerClient>[1]['metadata'];

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
  return { client: await register(authorizationServerUrl, metadata, redirectUri, scope, fetchFn), source: 'registered' };
}

function preRegistered(client: PreRegisteredClient, redirectUri: string): OAuthClientInformationFull {
  if (typeof client.clientId !== 'string' || client.clientId.trim() === '' || /[\r\n\0]/.test(client.clientId)) {
    throw new LoginError('registration', 'a pre-registered client needs its client id: the non-empty id the authorization server gave it');
  }
  const secret = client.clientSecret === undefined ? undefined : Secret.from(client.clientSecret).reveal();
  if (secret === '') throw new LoginError('registration', 'the client secret is empty: leave it out for a public client, or give the one the authorization server issued');
  return { client_id: client.clientId, ...(secret !== undefined ? { client_secret: secret } : {}), redirect_uris: [redirectUri] };
}

/** SEP-991: a Client ID Metadata Document is named by an https URL with a path. */
function checkMetadataDocumentUrl(text: string): string {
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

/** Dynamic client registration as a public native client (PKCE, no secret; SEP-837 `application_type`). */
async function register(
  authorizationServerUrl: string,
  metadata: AuthorizationMetadata,
  redirectUri: string,
  scope: string | undefined,
  fetchFn: FetchLike,
): Promise<OAuthClientInformationFull> {
  if (metadata?.registration_endpoint === undefined) {
    throw new LoginError(
      'registration',
      `the authorization server ${authorizationServerUrl} offers no dynamic client registration (RFC 7591): ` +
        'register subako there (redirect URI http://127.0.0.1/callback, any port) and pass --client-id (and --client-secret if it issued one)',
    );
  }
  try {
    return await registerClient(authorizationServerUrl, {
      metadata,
      clientMetadata: {
        client_name: 'subako',
        // SEP-837: a CLI with a loopback redirect is a native application (RFC 8252), so the server
        // applies native-app redirect rules instead of rejecting a loopback URI as a web client's.
        application_type: 'native',
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

function messageOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
