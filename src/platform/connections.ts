/**
 * Per-user connections: OAuth grants each end user makes themselves for what an agent declares (`connections` in
 * its spec: connection-spec.ts), held by subako and attached only to the upstream request — the remote MCP server
 * the connection is for, or the egress origin — never to a guest, a model or a client.
 *
 * The flow, with subako as a web client (mcp/oauth/web-authorization.ts):
 * 1. A call that needs the connection and finds none gives the person a consent link (`consentLink`): the user,
 *    the session, the agent version and the connection, sealed, with an expiry.
 * 2. `GET /v1/connect/{link}` (`startConsent`): the authorization server is found (RFC 9728/8414 for a remote MCP
 *    server; the issuer's RFC 8414 metadata for an egress origin), the client chosen (one registered beforehand,
 *    a Client ID Metadata Document where the server supports it and subako's public URL is https, else dynamic
 *    registration as a `web` application), and the person is redirected with PKCE S256, the `resource` (RFC 8707)
 *    and a sealed `state` that binds user, session and connection and carries the PKCE verifier.
 * 3. `GET /v1/connections/callback` (`finishConsent`): the state opened and spent once (the store's single-use
 *    redemption, so a replayed callback on any replica is refused), the RFC 9207 `iss` checked, the code exchanged,
 *    and the tokens stored sealed in the user's `connections` vault, one credential per connection.
 *
 * Tokens are refreshed by the vault (once per credential across replicas: the store's lock), listed without them
 * (`list`), and revoked at the authorization server (RFC 7009) when a connection is ended (`disconnect`).
 */
import { seal, unseal, silentLogger, systemClock, type Clock, type Logger } from '../common/index.js';
import {
  beginWebAuthorization, discover, finishWebAuthorization, issuerMetadata, parseServerUrl, preRegistered, probe, register, resourceFor, revokeTokens,
  LoginError, checkMetadataDocumentUrl, type AuthorizationServerMetadata, type OAuthClientInformationFull, type OAuthFetch as FetchLike,
} from '../mcp/oauth/index.js';
import { ConnectionConsentError, NotFoundError, UpstreamError } from './errors.js';
import { newId, nowIso } from './ids.js';
import type { VaultService, CredentialPayload, ConnectionFacts } from './vaults.js';
import type { AgentConnection, AgentSpec, CredentialRecord, Store } from './store/index.js';

/** The vault of a user's that holds their connections (made on the first one). */
export const CONNECTIONS_VAULT = 'connections';
/** A consent link is good this long: the person opens it from the client soon after the call asked. */
export const CONSENT_LINK_TTL_MS = 30 * 60_000;
/** The person has this long at the authorization server. */
export const AUTHORIZATION_TTL_MS = 10 * 60_000;
export const CALLBACK_PATH = '/v1/connections/callback';
export const CLIENT_METADATA_PATH = '/v1/connections/client-metadata.json';

/** What the API shows of a connection: never a token. */
export interface ConnectionView {
  id: string;
  name: string;
  kind: 'mcp' | 'egress';
  /** The remote MCP server's URL, or the egress origin. */
  target: string;
  authorization_server: string;
  /** `expired`: the access token ran out and there is no refresh token to get another (the user consents again). */
  status: 'connected' | 'expired';
  scopes: string[];
  expires_at: string | null;
  refreshable: boolean;
  created_at: string;
  updated_at: string;
}

/** Who and what a consent link is for. */
export interface ConsentSubject {
  userId: string;
  sessionId: string;
  agentId: string;
  agentVersion: number;
  connection: string;
}

interface SealedLink { u: string; s: string; a: string; v: number; c: string; exp: number }
interface SealedState extends SealedLink {
  /** The state's own id, spent once. */
  n: string;
  as: string;
  r: string;
  t: string;
  cid: string;
  cv: string;
  sc?: string;
  kind: 'mcp' | 'egress';
}

type ConnectionStore = Pick<Store, 'getSession' | 'getAgentVersion' | 'getUser' | 'userVaultIds' | 'getVaults' | 'allCredentials' | 'getCredential'
  | 'addCredential' | 'updateCredential' | 'deleteCredential' | 'redeemApproval' | 'exclusively'>;

export interface ConnectionServiceOptions {
  store: ConnectionStore;
  vaults: Pick<VaultService, 'createVault' | 'openForUse' | 'openPayload'>;
  key: Buffer;
  clock?: Clock;
  log?: Logger;
  fetch?: FetchLike;
}

export class ConnectionService {
  /** The server's public URL (the callback's base); the server sets it when it knows it. */
  private base: string | undefined;
  private readonly clock: Clock;
  private readonly log: Logger;
  /** Dynamic registrations made by this process, per authorization server and redirect URI. */
  private readonly registered = new Map<string, Promise<OAuthClientInformationFull>>();

  constructor(private readonly options: ConnectionServiceOptions) {
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? silentLogger;
  }

  /** The URL people reach this server at (SUBAKO_PUBLIC_URL, else where it listens): consent links and the callback hang from it. */
  useBaseUrl(url: string): void {
    this.base ??= url.replace(/\/+$/, '');
  }

  get baseUrl(): string {
    if (this.base === undefined) throw new Error('the server\'s public URL is not known yet (ConnectionService.useBaseUrl)');
    return this.base;
  }

  get callbackUrl(): string {
    return `${this.baseUrl}${CALLBACK_PATH}`;
  }

  /** The link a person opens to make `subject.connection` for `subject.userId`. */
  consentLink(subject: ConsentSubject): string {
    const link: SealedLink = {
      u: subject.userId, s: subject.sessionId, a: subject.agentId, v: subject.agentVersion, c: subject.connection,
      exp: this.clock.now() + CONSENT_LINK_TTL_MS,
    };
    return `${this.baseUrl}/v1/connect/${pack(seal(JSON.stringify(link), { key: this.options.key, context: LINK_CONTEXT }))}`;
  }

  /** Step 2: where to send the person who opened a consent link. */
  async startConsent(linkText: string): Promise<string> {
    const link = this.openSealed<SealedLink>(linkText, LINK_CONTEXT, 'the consent link');
    const { connection } = await this.subjectOf(link);
    const target = await this.authorizationTarget(link, connection);
    const client = await this.chooseClient(connection, target.authorizationServerUrl, target.metadata, target.scope);
    const begun = await beginWebAuthorization({
      authorizationServerUrl: target.authorizationServerUrl, metadata: target.metadata, client, redirectUri: this.callbackUrl,
      ...(target.scope ? { scope: target.scope } : {}), resource: target.resource,
      state: (codeVerifier) => {
        const state: SealedState = {
          ...link, n: newId('cst'), exp: this.clock.now() + AUTHORIZATION_TTL_MS, as: target.authorizationServerUrl, r: target.resource,
          t: target.target, cid: client.client_id, cv: codeVerifier, ...(target.scope ? { sc: target.scope } : {}), kind: target.kind,
        };
        return pack(seal(JSON.stringify(state), { key: this.options.key, context: STATE_CONTEXT }));
      },
    }).catch(rethrowLogin);
    return begun.url;
  }

  /** Step 3: the authorization server's redirect back; answers what was connected, for whom. */
  async finishConsent(query: Record<string, string | undefined>): Promise<{ userId: string; connection: string }> {
    if (query.state === undefined) throw new ConnectionConsentError('the callback carries no state: open the consent link again');
    const state = this.openSealed<SealedState>(query.state, STATE_CONTEXT, 'the authorization');
    // Single use, on whichever replica the person lands: a replayed callback (or a second tab) is refused.
    if (!(await this.options.store.redeemApproval(state.n, new Date(state.exp).toISOString()))) {
      throw new ConnectionConsentError('this authorization was finished already; open the consent link again to connect anew', 'connection.state_used');
    }
    if (query.error !== undefined) {
      const code = /^[A-Za-z0-9_.-]{1,64}$/.test(query.error) ? query.error : 'an error';
      throw new ConnectionConsentError(`the authorization server did not grant the connection (${code}); nothing was stored. Open the consent link again to retry`, 'connection.refused');
    }
    if (query.code === undefined || query.code === '') throw new ConnectionConsentError('the callback carries no authorization code; open the consent link again');
    const { connection } = await this.subjectOf(state);
    const metadata = await this.metadataOf(state.as);
    const client = connection.client_id !== null ? preRegistered({ clientId: connection.client_id }, this.callbackUrl) : { client_id: state.cid, redirect_uris: [this.callbackUrl] };
    const tokens = await finishWebAuthorization({
      authorizationServerUrl: state.as, metadata, client, redirectUri: this.callbackUrl, resource: state.r, code: query.code, iss: query.iss,
      codeVerifier: state.cv, ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
    }).catch(rethrowLogin);
    const expiresIn = typeof tokens.expires_in === 'number' && tokens.expires_in > 0 ? tokens.expires_in : null;
    const scopes = (tokens.scope ?? state.sc ?? '').split(' ').filter((s) => s !== '');
    const facts: ConnectionFacts = {
      name: connection.name, kind: state.kind, resource: state.r, authorization_server: state.as, scopes, client_id: client.client_id,
      ...(revocationEndpointOf(metadata) ? { revocation_endpoint: revocationEndpointOf(metadata)! } : {}),
    };
    const payload: CredentialPayload = {
      auth_scheme: 'oauth', access_token: tokens.access_token,
      ...(expiresIn !== null ? { expires_at: new Date(this.clock.now() + expiresIn * 1000).toISOString() } : {}),
      ...(tokens.refresh_token ? {
        refresh: {
          token_endpoint: metadata.token_endpoint, client_id: client.client_id, refresh_token: tokens.refresh_token, resource: state.r,
          ...(state.sc ? { scope: state.sc } : {}), token_endpoint_auth: 'none' as const,
        },
      } : {}),
      connection: facts,
    };
    await this.save(state.u, state.t, facts, payload);
    return { userId: state.u, connection: connection.name };
  }

  /**
   * The headers that carry `userId`'s token for a connection, refreshed when about to expire; null when the user has
   * not made it, or its token ran out and could not be refreshed (the same case for the caller: consent again).
   */
  async headersFor(userId: string, connection: string): Promise<Record<string, string> | null> {
    const rec = await this.find(userId, connection);
    if (rec === undefined) return null;
    const payload = this.options.vaults.openPayload(rec);
    // A token that ran out with nothing to refresh it is no connection: the person consents again.
    if (payload.auth_scheme === 'oauth' && !payload.refresh && rec.expiresAt !== null && Date.parse(rec.expiresAt) <= this.clock.now()) return null;
    try {
      return (await this.options.vaults.openForUse(rec)).headers;
    } catch (err) {
      this.log.warn({ err, user: userId, connection }, 'a connection\'s token could not be refreshed: the user is asked to connect again');
      return null;
    }
  }

  /** The user's connections, without a token. */
  async list(userId: string): Promise<ConnectionView[]> {
    await this.user(userId);
    const out: ConnectionView[] = [];
    for (const rec of await this.connectionRecords(userId)) {
      const payload = this.options.vaults.openPayload(rec);
      if (payload.auth_scheme !== 'oauth' || payload.connection === undefined) continue;
      out.push(viewOf(rec, payload, this.clock.now()));
    }
    return out.sort((x, y) => x.name.localeCompare(y.name));
  }

  /**
   * Ends a connection (by its id or its name): its tokens revoked at the authorization server where it offers
   * revocation (RFC 7009), then deleted. A revocation that fails is said in `revocation`; the tokens are deleted anyway.
   */
  async disconnect(userId: string, idOrName: string): Promise<{ revoked: boolean; revocation: string }> {
    await this.user(userId);
    const rec = (await this.connectionRecords(userId)).find((r) => r.id === idOrName || r.displayName === displayNameOf(idOrName));
    if (rec === undefined) throw new NotFoundError(`connection ${idOrName} of user ${userId}`);
    const payload = this.options.vaults.openPayload(rec);
    await this.options.store.deleteCredential(rec.vaultId, rec.id);
    if (payload.auth_scheme !== 'oauth' || payload.connection === undefined) return { revoked: false, revocation: 'not a connection' };
    const outcome = await this.revoke(payload);
    if (!outcome.advertised) return { revoked: false, revocation: 'the authorization server offers no revocation (RFC 7009); the tokens were deleted here' };
    if (outcome.failures.length > 0) {
      this.log.warn({ user: userId, connection: payload.connection.name, failures: outcome.failures }, 'a connection was deleted but not every token was revoked');
      return { revoked: false, revocation: outcome.failures.join('; ') };
    }
    return { revoked: true, revocation: 'revoked at the authorization server' };
  }

  /**
   * Revokes every connection of the user at its authorization server (the user is being deleted: its records go with
   * it). A revocation that fails is logged and does not stop the deletion.
   */
  async revokeAll(userId: string): Promise<void> {
    for (const rec of await this.connectionRecords(userId)) {
      const payload = this.options.vaults.openPayload(rec);
      if (payload.auth_scheme !== 'oauth' || payload.connection === undefined) continue;
      const outcome = await this.revoke(payload);
      if (outcome.failures.length > 0) this.log.warn({ user: userId, connection: payload.connection.name, failures: outcome.failures }, 'a deleted user\'s connection was not revoked everywhere');
    }
  }

  private revoke(payload: Extract<CredentialPayload, { auth_scheme: 'oauth' }>): ReturnType<typeof revokeTokens> {
    const facts = payload.connection!;
    return revokeTokens({
      metadata: { ...(facts.revocation_endpoint ? { revocation_endpoint: facts.revocation_endpoint } : {}) },
      client: { client_id: facts.client_id },
      tokens: [
        ...(payload.refresh ? [{ token: payload.refresh.refresh_token, hint: 'refresh_token' as const }] : []),
        { token: payload.access_token, hint: 'access_token' as const },
      ],
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
    });
  }

  /** A Client ID Metadata Document for subako as a web client (served at CLIENT_METADATA_PATH). */
  clientMetadataDocument(): Record<string, unknown> {
    return {
      client_id: `${this.baseUrl}${CLIENT_METADATA_PATH}`, client_name: 'subako', application_type: 'web', redirect_uris: [this.callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
    };
  }

  private async user(userId: string): Promise<void> {
    if (!(await this.options.store.getUser(userId))) throw new NotFoundError(`user ${userId}`);
  }

  /** The session, user and connection a link or state names, as they are now: each must still exist and fit. */
  private async subjectOf(link: SealedLink): Promise<{ connection: AgentConnection; spec: AgentSpec }> {
    const session = await this.options.store.getSession(link.s);
    if (!session || session.userId !== link.u) throw new ConnectionConsentError('the session this link was made for has ended; ask again from your app', 'connection.session_gone');
    const version = await this.options.store.getAgentVersion(link.a, link.v);
    const connection = version?.spec.connections?.find((c) => c.name === link.c);
    if (!version || !connection) throw new ConnectionConsentError(`the agent no longer declares the connection ${link.c}`, 'connection.unknown');
    return { connection, spec: version.spec };
  }

  private async authorizationTarget(link: SealedLink, connection: AgentConnection): Promise<{
    kind: 'mcp' | 'egress'; target: string; resource: string; authorizationServerUrl: string; metadata: AuthorizationServerMetadata; scope: string | undefined;
  }> {
    const fetchFn = this.options.fetch ?? fetch;
    const asked = connection.scopes.length > 0 ? connection.scopes.join(' ') : undefined;
    if (connection.mcp_server !== null) {
      const version = await this.options.store.getAgentVersion(link.a, link.v);
      const server = version!.spec.mcp_servers.find((s) => s.name === connection.mcp_server);
      if (!server) throw new ConnectionConsentError(`the agent no longer has the remote MCP server ${connection.mcp_server}`, 'connection.unknown');
      try {
        const serverUrl = parseServerUrl(server.url);
        const challenge = await probe(serverUrl, fetchFn);
        const info = await discover(serverUrl, challenge.resourceMetadataUrl, fetchFn);
        const scope = asked ?? challenge.scope ?? info.resourceMetadata?.scopes_supported?.join(' ');
        return {
          kind: 'mcp', target: server.url, resource: resourceFor(serverUrl, info.resourceMetadata), authorizationServerUrl: info.authorizationServerUrl,
          metadata: info.authorizationServerMetadata, scope: scope || undefined,
        };
      } catch (err) {
        return rethrowLogin(err);
      }
    }
    const metadata = await issuerMetadata(connection.issuer!, fetchFn).catch(rethrowLogin);
    // The resource as a URL writes it (`https://host/`): the token request sends it so, and the two must match.
    return { kind: 'egress', target: connection.origin!, resource: new URL(connection.origin!).href, authorizationServerUrl: connection.issuer!, metadata, scope: asked };
  }

  /** One registered beforehand; else a metadata document (the server supports them, our URL is https); else dynamic registration as a web application. */
  private async chooseClient(connection: AgentConnection, authorizationServerUrl: string, metadata: AuthorizationServerMetadata, scope: string | undefined): Promise<OAuthClientInformationFull> {
    const redirectUri = this.callbackUrl;
    if (connection.client_id !== null) return preRegistered({ clientId: connection.client_id }, redirectUri);
    if (metadata.client_id_metadata_document_supported === true && this.baseUrl.startsWith('https://')) {
      return { client_id: checkMetadataDocumentUrl(`${this.baseUrl}${CLIENT_METADATA_PATH}`), redirect_uris: [redirectUri] };
    }
    const key = `${authorizationServerUrl} ${redirectUri}`;
    let pending = this.registered.get(key);
    if (pending === undefined) {
      pending = register(authorizationServerUrl, metadata, {
        applicationType: 'web', redirectUri, scope, fetchFn: this.options.fetch ?? fetch,
        registerByHand: `register subako there as a web application with redirect URI ${redirectUri} and give its id as the connection's client_id`,
      });
      this.registered.set(key, pending);
      pending.catch(() => this.registered.delete(key));
    }
    return pending.catch(rethrowLogin);
  }

  private async metadataOf(authorizationServerUrl: string): Promise<AuthorizationServerMetadata> {
    try {
      return await issuerMetadata(authorizationServerUrl, this.options.fetch);
    } catch (err) {
      throw new UpstreamError(`the authorization server could not be read again to finish the connection: ${(err as Error).message.slice(0, 300)}`, 'connection.discovery');
    }
  }

  /** Stores a connection's tokens: replaced in place when the user had it, else a new credential in their connections vault. */
  private async save(userId: string, target: string, facts: ConnectionFacts, payload: CredentialPayload): Promise<void> {
    const { store } = this.options;
    await store.exclusively(`connections:${userId}`, async () => {
      const existing = await this.find(userId, facts.name);
      const now = nowIso();
      const expiresAt = payload.auth_scheme === 'oauth' ? payload.expires_at ?? null : null;
      if (existing !== undefined) {
        await store.updateCredential({ ...existing, target, sealed: seal(JSON.stringify(payload), { key: this.options.key, context: existing.id }), expiresAt, updatedAt: now });
        return;
      }
      const vaultId = await this.connectionsVault(userId);
      const id = newId('crd');
      const rec: CredentialRecord = {
        id, vaultId, target, displayName: displayNameOf(facts.name), scheme: 'oauth',
        sealed: seal(JSON.stringify(payload), { key: this.options.key, context: id }), expiresAt, createdAt: now, updatedAt: now,
      };
      await store.addCredential(rec);
    });
  }

  private async connectionsVault(userId: string): Promise<string> {
    const ids = await this.options.store.userVaultIds(userId);
    const vault = (await this.options.store.getVaults(ids)).find((v) => v.name === CONNECTIONS_VAULT && v.userId === userId);
    if (vault) return vault.id;
    return (await this.options.vaults.createVault(CONNECTIONS_VAULT, userId)).id;
  }

  private async connectionRecords(userId: string): Promise<CredentialRecord[]> {
    const ids = await this.options.store.userVaultIds(userId);
    const vaults = (await this.options.store.getVaults(ids)).filter((v) => v.name === CONNECTIONS_VAULT && v.userId === userId);
    const out: CredentialRecord[] = [];
    for (const vault of vaults) out.push(...(await this.options.store.allCredentials(vault.id)).filter((r) => r.displayName.startsWith(DISPLAY_PREFIX)));
    return out;
  }

  private async find(userId: string, name: string): Promise<CredentialRecord | undefined> {
    return (await this.connectionRecords(userId)).find((r) => r.displayName === displayNameOf(name));
  }

  private openSealed<T extends { exp: number }>(text: string, context: string, what: string): T {
    let value: T;
    try {
      value = JSON.parse(unseal(unpack(text), { key: this.options.key, context }).reveal()) as T;
    } catch {
      throw new ConnectionConsentError(`${what} is not one this server made (altered, cut short, or from another server); open the link your app gave again`, 'connection.link_invalid');
    }
    if (!(value.exp > this.clock.now())) throw new ConnectionConsentError(`${what} has expired; ask again from your app for a new link`, 'connection.link_expired');
    return value;
  }
}

const LINK_CONTEXT = 'subako-connection-link';
const STATE_CONTEXT = 'subako-connection-state';
const DISPLAY_PREFIX = 'connection:';
const displayNameOf = (name: string): string => `${DISPLAY_PREFIX}${name}`;

/** A sealed value as one URL-safe token (it holds `:` and `.`). */
function pack(sealed: string): string {
  return Buffer.from(sealed, 'utf8').toString('base64url');
}

function unpack(text: string): string {
  if (!/^[A-Za-z0-9_-]{1,8192}$/.test(text)) throw new Error('not a packed value');
  return Buffer.from(text, 'base64url').toString('utf8');
}

function viewOf(rec: CredentialRecord, payload: Extract<CredentialPayload, { auth_scheme: 'oauth' }>, now: number): ConnectionView {
  const facts = payload.connection!;
  const expired = payload.expires_at !== undefined && Date.parse(payload.expires_at) <= now && payload.refresh === undefined;
  return {
    id: rec.id, name: facts.name, kind: facts.kind, target: rec.target, authorization_server: facts.authorization_server,
    status: expired ? 'expired' : 'connected', scopes: facts.scopes, expires_at: rec.expiresAt, refreshable: payload.refresh !== undefined,
    created_at: rec.createdAt, updated_at: rec.updatedAt,
  };
}

/** A login step's failure as the person reads it (its message never holds a code or a token). */
function rethrowLogin(err: unknown): never {
  if (err instanceof LoginError) throw new ConnectionConsentError(err.message, `connection.${err.reason}`);
  throw err;
}

/** RFC 8414 §2's `revocation_endpoint`, when the metadata names a URL there. */
function revocationEndpointOf(metadata: AuthorizationServerMetadata): string | undefined {
  const value = (metadata as { revocation_endpoint?: unknown }).revocation_endpoint;
  return typeof value === 'string' && URL.canParse(value) ? value : undefined;
}
