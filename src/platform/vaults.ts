/**
 * Vaults and their credentials. A credential is keyed by its target (an origin, or an exact MCP server URL)
 * and holds either static headers, a bearer token, or OAuth tokens with refresh settings. The payload is
 * sealed (AES-256-GCM, bound to the credential's id) before it reaches the store and is never returned:
 * views show the target, the scheme and the expiry only. OAuth access tokens are refreshed shortly before
 * they expire, once per credential however many calls ask at the same time. A vault is the operator's or one end
 * user's; which vaults a session opens is vault-access.ts's rule.
 */
import { seal, unseal, silentLogger, systemClock, type Clock, type Logger } from '../common/index.js';
import { ValidationError } from '../errors.js';
import { InUseError, NotFoundError, VaultNotUsableError } from './errors.js';
import { mayUseVault, usableVaultIds, usesAllUserVaults } from './vault-access.js';
import { newId, nowIso } from './ids.js';
import { needsRefresh } from '../mcp/oauth/index.js';
import { isAcceptableTokenEndpoint, refreshAccessToken, type OAuthRefreshSettings } from './oauth-refresh.js';
import type { AgentStore, CredentialRecord, CredentialScheme, Page, PageRequest, SessionRecord, SessionStore, UserStore, VaultRecord, VaultStore } from './store/index.js';

export type CredentialPayload =
  | { auth_scheme: 'static_bearer'; token: string }
  | { auth_scheme: 'static_headers'; headers: Record<string, string> }
  | { auth_scheme: 'oauth'; access_token: string; expires_at?: string; refresh?: OAuthRefreshSettings; connection?: ConnectionFacts };

/**
 * What a user's connection (connections.ts) keeps beside its tokens: never secret, sealed with them all the same.
 * `kind: 'mcp'`: the token goes only to that remote MCP server, never to egress; `egress`: to the origin's requests.
 */
export interface ConnectionFacts {
  name: string;
  kind: 'mcp' | 'egress';
  resource: string;
  authorization_server: string;
  scopes: string[];
  client_id: string;
  revocation_endpoint?: string;
}

export interface CredentialInput {
  target: string;
  display_name?: string;
  payload: CredentialPayload;
}

/** What the API shows of a credential: never a secret. */
export interface CredentialView {
  id: string;
  vault_id: string;
  target: string;
  display_name: string;
  auth_scheme: CredentialScheme;
  expires_at: string | null;
  refreshable: boolean;
  created_at: string;
  updated_at: string;
}

/** A credential opened for use: the headers to send to its target. */
export interface OpenCredential {
  id: string;
  /** Set on a user's connection: its facts (kind, scopes), never its tokens. */
  connection?: ConnectionFacts;
  target: string;
  /** `https://host[:port]` of the target. */
  origin: string;
  headers: Record<string, string>;
}

export class VaultService {
  private readonly refreshing = new Map<string, Promise<OpenCredential>>();

  /** `clock` decides when an OAuth token is close enough to its expiry to refresh. */
  constructor(
    private readonly store: VaultStore & Pick<AgentStore, 'agentVersionsUsingVault'> & Pick<SessionStore, 'sessionsUsingVault'>
      & Pick<UserStore, 'addUserVault' | 'userVaultIds' | 'getVaults'>,
    private readonly key: Buffer,
    private readonly clock: Clock = systemClock,
    private readonly log: Logger = silentLogger,
    /**
     * Runs a refresh while no other process on the database refreshes the same credential (the store's
     * `exclusively`): a rotating refresh token is presented once, not by two replicas at the same moment.
     */
    private readonly exclusively: <T>(name: string, work: () => Promise<T>) => Promise<T> = (_name, work) => work(),
  ) {}

  /** A vault of the operator's, or, with `userId`, one that user owns (only the user's sessions use it). */
  async createVault(name: string, userId: string | null = null): Promise<VaultRecord> {
    const rec: VaultRecord = { id: newId('vlt'), name, userId, createdAt: nowIso() };
    if (userId === null) await this.store.addVault(rec);
    else if (!(await this.store.addUserVault(rec))) throw new NotFoundError(`user ${userId}`);
    return rec;
  }

  /** The vaults a session opens now (vault-access.ts): re-checked against their owners at every use. */
  async vaultIdsFor(session: Pick<SessionRecord, 'userId' | 'vaultIds'>): Promise<string[]> {
    if (usesAllUserVaults(session)) return this.store.userVaultIds(session.userId!);
    if (session.vaultIds.length === 0) return [];
    return usableVaultIds(session.vaultIds, await this.store.getVaults(session.vaultIds), session.userId);
  }

  /** Every usable credential of the vaults the session may use now (see `openAll`). */
  async openForSession(session: Pick<SessionRecord, 'userId' | 'vaultIds'>): Promise<OpenCredential[]> {
    return this.openAll(await this.vaultIdsFor(session));
  }

  async getVault(id: string): Promise<VaultRecord> {
    const vault = await this.store.getVault(id);
    if (!vault) throw new NotFoundError(`vault ${id}`);
    return vault;
  }

  listVaults(page: PageRequest): Promise<Page<VaultRecord>> {
    return this.store.listVaults(page);
  }

  async deleteVault(id: string): Promise<void> {
    await this.getVault(id);
    const agents = await this.store.agentVersionsUsingVault(id);
    const sessions = await this.store.sessionsUsingVault(id);
    if (agents.length > 0 || sessions.length > 0) {
      throw new InUseError(`vault ${id} is used by ${[...agents.map((a) => `agent ${a}`), ...sessions.map((s) => `session ${s}`)].slice(0, 5).join(', ')}; remove those first`);
    }
    await this.store.deleteVault(id);
  }

  async addCredential(vaultId: string, input: CredentialInput): Promise<CredentialView> {
    await this.getVault(vaultId);
    const target = checkTarget(input.target);
    checkPayload(input.payload);
    const id = newId('crd');
    const now = nowIso();
    const rec: CredentialRecord = {
      id, vaultId, target, displayName: input.display_name ?? target, scheme: input.payload.auth_scheme,
      sealed: seal(JSON.stringify(input.payload), { key: this.key, context: id }),
      expiresAt: input.payload.auth_scheme === 'oauth' ? input.payload.expires_at ?? null : null,
      createdAt: now, updatedAt: now,
    };
    await this.store.addCredential(rec);
    return credentialView(rec, input.payload);
  }

  async getCredential(vaultId: string, id: string): Promise<CredentialView> {
    const rec = await this.store.getCredential(vaultId, id);
    if (!rec) throw new NotFoundError(`credential ${id} in vault ${vaultId}`);
    return credentialView(rec, this.open(rec));
  }

  async listCredentials(vaultId: string, page: PageRequest): Promise<Page<CredentialView>> {
    await this.getVault(vaultId);
    const listed = await this.store.listCredentials(vaultId, page);
    return { items: listed.items.map((rec) => credentialView(rec, this.open(rec))), next_cursor: listed.next_cursor };
  }

  async deleteCredential(vaultId: string, id: string): Promise<void> {
    if (!(await this.store.getCredential(vaultId, id))) throw new NotFoundError(`credential ${id} in vault ${vaultId}`);
    await this.store.deleteCredential(vaultId, id);
  }

  /**
   * Every usable credential of these vaults, opened (refreshing OAuth tokens that are about to expire). One
   * whose refresh fails is left out: the function then meets `credential_unavailable` for its origin, which
   * says more than failing the whole call would.
   */
  async openAll(vaultIds: readonly string[]): Promise<OpenCredential[]> {
    const out: OpenCredential[] = [];
    for (const vaultId of vaultIds) {
      for (const rec of await this.store.allCredentials(vaultId)) {
        const opened = await this.openForUse(rec).catch((err: unknown) => {
          this.log.warn({ err, vault: vaultId, credential: rec.id }, 'a credential was left out of a session: it could not be opened or refreshed');
          return null;
        });
        // A connection to a remote MCP server is that server's alone: never attached to a package's egress.
        if (opened && opened.connection?.kind !== 'mcp') out.push(opened);
      }
    }
    return out;
  }

  /**
   * The credential an agent's remote server names: the one given, else the vault's best match for the URL. With
   * `session`, only from a vault that session may use (vault-access.ts): another user's vault is refused.
   */
  async credentialFor(vaultId: string, credentialId: string | undefined, url: string, session?: Pick<SessionRecord, 'userId'>): Promise<OpenCredential | null> {
    if (session) {
      const vault = await this.store.getVault(vaultId);
      if (vault && !mayUseVault(vault.userId, session.userId)) throw new VaultNotUsableError(vaultId);
    }
    if (credentialId) {
      const rec = await this.store.getCredential(vaultId, credentialId);
      return rec ? this.openForUse(rec) : null;
    }
    const all = await this.store.allCredentials(vaultId);
    const origin = new URL(url).origin;
    const exact = all.find((rec) => rec.target === url) ?? all.find((rec) => rec.target === origin);
    return exact ? this.openForUse(exact) : null;
  }

  /** A credential's payload, opened: for the platform's own holders (connections.ts), never for an answer. */
  openPayload(rec: CredentialRecord): CredentialPayload {
    return this.open(rec);
  }

  private open(rec: CredentialRecord): CredentialPayload {
    return JSON.parse(unseal(rec.sealed, { key: this.key, context: rec.id }).reveal()) as CredentialPayload;
  }

  /**
   * Opens a credential for a request, refreshing its OAuth token first when it is about to expire: once per
   * credential in this process however many ask, and once across the processes on the database (`exclusively`;
   * the record is read again inside, so a replica that waited uses the token the other one got).
   */
  async openForUse(rec: CredentialRecord): Promise<OpenCredential> {
    const payload = this.open(rec);
    const expiresAt = rec.expiresAt === null ? undefined : Date.parse(rec.expiresAt);
    if (payload.auth_scheme === 'oauth' && payload.refresh && needsRefresh(expiresAt, this.clock.now())) {
      const pending = this.refreshing.get(rec.id) ?? this.exclusively(`credential-refresh:${rec.id}`, () => this.refreshLatest(rec));
      this.refreshing.set(rec.id, pending);
      try {
        return await pending;
      } finally {
        this.refreshing.delete(rec.id);
      }
    }
    return openCredential(rec, payload);
  }

  /** Inside the refresh lock: the record as it is now, refreshed unless another process did so meanwhile. */
  private async refreshLatest(seen: CredentialRecord): Promise<OpenCredential> {
    const rec = await this.store.getCredential(seen.vaultId, seen.id);
    if (!rec) throw new NotFoundError(`credential ${seen.id} in vault ${seen.vaultId}`);
    const payload = this.open(rec);
    const expiresAt = rec.expiresAt === null ? undefined : Date.parse(rec.expiresAt);
    if (payload.auth_scheme !== 'oauth' || !payload.refresh || !needsRefresh(expiresAt, this.clock.now())) return openCredential(rec, payload);
    return this.refresh(rec, payload.refresh);
  }

  private async refresh(rec: CredentialRecord, settings: OAuthRefreshSettings): Promise<OpenCredential> {
    const before = this.open(rec);
    const connection = before.auth_scheme === 'oauth' ? before.connection : undefined;
    const fresh = await refreshAccessToken(settings, this.clock.now());
    const next: CredentialPayload = {
      auth_scheme: 'oauth',
      access_token: fresh.access_token,
      ...(fresh.expires_at ? { expires_at: fresh.expires_at } : {}),
      refresh: { ...settings, refresh_token: fresh.refresh_token },
      ...(connection ? { connection } : {}),
    };
    const updated: CredentialRecord = {
      ...rec,
      sealed: seal(JSON.stringify(next), { key: this.key, context: rec.id }),
      expiresAt: fresh.expires_at,
      updatedAt: nowIso(),
    };
    await this.store.updateCredential(updated);
    return openCredential(updated, next);
  }
}

function openCredential(rec: CredentialRecord, payload: CredentialPayload): OpenCredential {
  const headers: Record<string, string> =
    payload.auth_scheme === 'static_bearer' ? { authorization: `Bearer ${payload.token}` }
      : payload.auth_scheme === 'oauth' ? { authorization: `Bearer ${payload.access_token}` }
        : Object.fromEntries(Object.entries(payload.headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    id: rec.id, target: rec.target, origin: new URL(rec.target).origin, headers,
    ...(payload.auth_scheme === 'oauth' && payload.connection ? { connection: payload.connection } : {}),
  };
}

function credentialView(rec: CredentialRecord, payload: CredentialPayload): CredentialView {
  return {
    id: rec.id, vault_id: rec.vaultId, target: rec.target, display_name: rec.displayName, auth_scheme: rec.scheme,
    expires_at: rec.expiresAt, refreshable: payload.auth_scheme === 'oauth' && payload.refresh !== undefined,
    created_at: rec.createdAt, updated_at: rec.updatedAt,
  };
}

/** A target is an https origin or an https URL (a remote MCP server's exact endpoint); no userinfo, no fragment. */
function checkTarget(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new ValidationError([{ code: 'credential.target', message: `target ${JSON.stringify(text)} is not a URL` }]);
  }
  const local = url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if ((url.protocol !== 'https:' && !local) || url.username || url.password || url.hash) {
    throw new ValidationError([{
      code: 'credential.target',
      message: `target ${JSON.stringify(text)} must be an https origin or URL without credentials or fragment`,
    }]);
  }
  return url.pathname === '/' && url.search === '' ? url.origin : url.href;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FORBIDDEN_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'keep-alive', 'proxy-connection']);

function checkPayload(payload: CredentialPayload): void {
  const problem = (message: string): never => {
    throw new ValidationError([{ code: 'credential.payload', message }]);
  };
  const headerValueOk = (v: string): boolean => v.length > 0 && v.length <= 8192 && !/[\r\n\0]/.test(v);
  if (payload.auth_scheme === 'static_bearer') {
    if (!headerValueOk(payload.token)) problem('token must be a non-empty string without line breaks');
  } else if (payload.auth_scheme === 'static_headers') {
    const entries = Object.entries(payload.headers);
    if (entries.length === 0) problem('headers must name at least one header');
    for (const [name, value] of entries) {
      if (!HEADER_NAME.test(name) || FORBIDDEN_HEADERS.has(name.toLowerCase())) problem(`header ${JSON.stringify(name)} cannot be stored`);
      if (typeof value !== 'string' || !headerValueOk(value)) problem(`header ${JSON.stringify(name)} needs a non-empty value without line breaks`);
    }
  } else {
    if (!headerValueOk(payload.access_token)) problem('access_token must be a non-empty string without line breaks');
    if (payload.expires_at !== undefined && Number.isNaN(Date.parse(payload.expires_at))) problem('expires_at must be an ISO date-time');
    if (payload.refresh && !isAcceptableTokenEndpoint(payload.refresh.token_endpoint)) {
      problem('refresh.token_endpoint must be an https URL');
    }
    if (payload.refresh?.token_endpoint_auth === 'client_secret_basic' && !payload.refresh.client_secret) {
      problem('refresh.client_secret is needed with token_endpoint_auth client_secret_basic (or use none for a public client)');
    }
  }
}
