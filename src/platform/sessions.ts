/**
 * Sessions: one conversation with an agent, bound to the agent version current when it was created, with
 * its own /volume/tmp. A session is opened by a token (shown once, stored as its sha-256) that works both in
 * a capability URL and as a bearer token. Deleting or expiring a session removes its tmp volume; the agent's
 * /volume/data stays. The record goes first (no new call can start), then the session's calls are stopped,
 * then the volume is moved out of every guest's reach and removed (volumes.ts). A session may be opened for an end
 * user (users.ts): it then uses that user's vaults and the operator's it names, never another user's (vault-access.ts).
 */
import { isoAt, systemClock, type Clock } from '../common/index.js';
import { ValidationError } from '../errors.js';
import { NotFoundError } from './errors.js';
import { hashSecret, newId, newSecret } from './ids.js';
import type { AgentStore, Page, PageRequest, SessionRecord, SessionStore, UserStore, VaultStore } from './store/index.js';
import { checkUserId } from './user-ids.js';
import { mayUseVault } from './vault-access.js';
import type { Volumes } from './volumes/index.js';

/**
 * Stops the calls in flight of these sessions (and, when given, every call of the agent) and resolves once
 * none runs any more: deleting a volume under a running guest would let it fight the removal.
 */
export type StopCalls = (sessionIds: readonly string[], agentId?: string) => Promise<void>;

/** Until the platform wires its registry of calls in flight, there is nothing to stop. */
export const stopNoCalls: StopCalls = async () => {};

export const DEFAULT_SESSION_TTL_SECONDS = 24 * 60 * 60;
export const MAX_SESSION_TTL_SECONDS = 30 * 24 * 60 * 60;

export interface SessionInput {
  vault_ids?: string[];
  ttl_seconds?: number;
  /** The end user the session acts for. */
  user_id?: string;
}

/** How many live sessions `byToken` keeps in memory; past it the oldest looked up is forgotten first. */
export const SESSION_TOKEN_CACHE_SIZE = 10_000;

export class SessionService {
  private readonly goneListeners: ((sessionId: string) => void)[] = [];
  /**
   * Live sessions by token hash, so that a call through a session URL needs no store round trip to find its
   * session. A record never changes once written (its expiry included), so what is kept stays true until the
   * session goes: expiry is checked against the clock on every hit, and a deletion or expiry (every path
   * ends in `notifyGone`) drops the entry before anything else is told. Only for a store no other process
   * writes (the embedded one): a replica beside us could delete a session without telling this cache.
   */
  private readonly tokenCache: Map<string, SessionRecord> | null;
  /** The token hash of each cached session, to drop it by id. */
  private readonly cachedHashById = new Map<string, string>();
  /** Bumped by every `notifyGone`: a lookup that raced with one does not cache what it read. */
  private goneEpoch = 0;

  constructor(
    private readonly store: SessionStore & Pick<AgentStore, 'getAgent'> & Pick<VaultStore, 'getVault'> & Pick<UserStore, 'getUser' | 'addUserSession' | 'listUserSessions' | 'openUserAgentSession'>,
    private readonly volumes: Volumes,
    private readonly stopCalls: StopCalls = stopNoCalls,
    /** Decides expiry: tests move it forward instead of sleeping out a TTL. */
    private readonly clock: Clock = systemClock,
    /** `cacheByToken`: keep live sessions in memory (only when no other process writes the store). */
    options: { cacheByToken?: boolean } = {},
  ) {
    this.tokenCache = options.cacheByToken ? new Map() : null;
  }

  /** Called with a session's id when it is deleted or expires (caches drop what they hold for it). */
  onGone(listener: (sessionId: string) => void): void {
    this.goneListeners.push(listener);
  }

  notifyGone(sessionId: string): void {
    this.goneEpoch += 1;
    this.forgetToken(sessionId);
    for (const listener of this.goneListeners) listener(sessionId);
  }

  private forgetToken(sessionId: string): void {
    const hash = this.cachedHashById.get(sessionId);
    if (hash === undefined) return;
    this.cachedHashById.delete(sessionId);
    this.tokenCache?.delete(hash);
  }

  async create(agentId: string, input: SessionInput): Promise<{ session: SessionRecord; token: string }> {
    const agent = await this.store.getAgent(agentId);
    if (!agent) throw new NotFoundError(`agent ${agentId}`);
    const userId = input.user_id === undefined ? null : checkUserId(input.user_id, 'user_id');
    if (userId !== null && !(await this.store.getUser(userId))) {
      throw new ValidationError([{ code: 'session.unknown_user', message: `user ${userId} does not exist; create it first (POST /v1/users)` }]);
    }
    const vaultIds = [...new Set(input.vault_ids ?? [])];
    for (const vaultId of vaultIds) {
      const vault = await this.store.getVault(vaultId);
      if (!vault) throw new ValidationError([{ code: 'session.unknown_vault', message: `vault ${vaultId} does not exist` }]);
      if (!mayUseVault(vault.userId, userId)) {
        throw new ValidationError([{
          code: 'session.foreign_vault',
          message: `vault ${vaultId} belongs to ${userId === null ? 'a user' : 'another user'}: a session uses only its own user's vaults and the operator's` +
            `${userId === null ? ' (open the session for that user with user_id)' : ''}`,
        }]);
      }
    }
    const ttl = input.ttl_seconds ?? DEFAULT_SESSION_TTL_SECONDS;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_SESSION_TTL_SECONDS) {
      throw new ValidationError([{ code: 'session.ttl', message: `ttl_seconds must be a whole number from 1 to ${MAX_SESSION_TTL_SECONDS}` }]);
    }
    const token = newSecret('st');
    const now = this.clock.now();
    const session: SessionRecord = {
      id: newId('ses'), agentId, agentVersion: agent.currentVersion, tokenHash: hashSecret(token), vaultIds, userId,
      createdAt: new Date(now).toISOString(), expiresAt: new Date(now + ttl * 1000).toISOString(),
    };
    if (userId === null) await this.store.addSession(session);
    // Refused when the user was deleted meanwhile (on any replica): a user's deletion ends every session of it.
    else if (!(await this.store.addUserSession(session))) throw new ValidationError([{ code: 'session.unknown_user', message: `user ${userId} does not exist` }]);
    await this.volumes.sessionTmp(session.id);
    return { session, token };
  }

  /**
   * The session a user reaching an agent's endpoint at the door (server/oauth-door.ts) works in: the live one this
   * user has with this agent, or a new one, opened for the user with the default TTL and no vaults named (so all of
   * the user's, vault-access.ts). One per user and agent on every replica (the store decides). Its token is never
   * shown: such a session is reached only with the user's access tokens.
   */
  async openAtDoor(agentId: string, userId: string): Promise<SessionRecord> {
    const agent = await this.store.getAgent(agentId);
    if (!agent) throw new NotFoundError(`agent ${agentId}`);
    const now = this.clock.now();
    const candidate: SessionRecord = {
      id: newId('ses'), agentId, agentVersion: agent.currentVersion, tokenHash: hashSecret(newSecret('st')), vaultIds: [], userId: checkUserId(userId, 'user'),
      createdAt: new Date(now).toISOString(), expiresAt: new Date(now + DEFAULT_SESSION_TTL_SECONDS * 1000).toISOString(),
    };
    const opened = await this.store.openUserAgentSession(candidate, new Date(now).toISOString());
    if (!opened) throw new ValidationError([{ code: 'session.unknown_user', message: `user ${userId} does not exist` }]);
    if (opened.created) await this.volumes.sessionTmp(opened.session.id);
    return opened.session;
  }

  /** A session that exists and has not expired. */
  async get(id: string): Promise<SessionRecord> {
    const session = await this.store.getSession(id);
    if (!session || isExpired(session, this.clock.now())) throw new NotFoundError(`session ${id}`);
    return session;
  }

  /** The session with this id when it is live and the user's (the door's check of a session endpoint), or null. */
  async liveOfUser(id: string, userId: string): Promise<SessionRecord | null> {
    const session = await this.store.getSession(id);
    return session && session.userId === userId && !isExpired(session, this.clock.now()) ? session : null;
  }

  /** The live session a token opens, or null. */
  async byToken(token: string): Promise<SessionRecord | null> {
    const hash = hashSecret(token);
    const cached = this.tokenCache?.get(hash);
    if (cached !== undefined) {
      if (!isExpired(cached, this.clock.now())) return cached;
      // Expired: refused now, whether or not the sweeper has removed it yet.
      this.forgetToken(cached.id);
      return null;
    }
    const epoch = this.goneEpoch;
    const session = await this.store.findSessionByTokenHash(hash);
    if (!session || isExpired(session, this.clock.now())) return null;
    if (this.tokenCache && epoch === this.goneEpoch) this.remember(hash, session);
    return session;
  }

  private remember(hash: string, session: SessionRecord): void {
    const cache = this.tokenCache!;
    if (cache.size >= SESSION_TOKEN_CACHE_SIZE) {
      const oldest = cache.values().next().value as SessionRecord;
      this.forgetToken(oldest.id);
    }
    cache.set(hash, session);
    this.cachedHashById.set(session.id, hash);
  }

  async list(agentId: string, page: PageRequest): Promise<Page<SessionRecord>> {
    if (!(await this.store.getAgent(agentId))) throw new NotFoundError(`agent ${agentId}`);
    return this.store.listSessions(agentId, page);
  }

  /** The sessions of one end user (whose existence the caller checked). */
  listForUser(userId: string, page: PageRequest): Promise<Page<SessionRecord>> {
    return this.store.listUserSessions(userId, page);
  }

  async delete(id: string): Promise<void> {
    const session = await this.store.getSession(id);
    if (!session) throw new NotFoundError(`session ${id}`);
    await this.remove(session);
  }

  /** Removes every expired session; returns how many. */
  async sweepExpired(): Promise<number> {
    const expired = await this.store.expiredSessions(isoAt(this.clock));
    for (const session of expired) await this.remove(session);
    return expired.length;
  }

  private async remove(session: SessionRecord): Promise<void> {
    await this.store.deleteSession(session.id);
    await this.ended([session.id]);
  }

  /**
   * What follows sessions' records leaving the store (a deletion, an expiry, their user's deletion): every cache is
   * told, their calls are stopped, their volumes removed. Other replicas find the records gone on their next lookup.
   */
  async ended(sessionIds: readonly string[]): Promise<void> {
    for (const id of sessionIds) this.notifyGone(id);
    await this.stopCalls(sessionIds);
    // Whatever is left (a guest still refilling it) is out of every guest's path and swept at start-up.
    await this.volumes.remove(sessionIds);
  }
}

export function isExpired(session: SessionRecord, now: number): boolean {
  return Date.parse(session.expiresAt) <= now;
}
