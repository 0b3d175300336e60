/**
 * Sessions: one conversation with an agent, bound to the agent version current when it was created, with
 * its own /volume/tmp. A session is opened by a token (shown once, stored as its sha-256) that works both in
 * a capability URL and as a bearer token. Deleting or expiring a session removes its tmp volume; the agent's
 * /volume/data stays. The record goes first (no new call can start), then the session's calls are stopped,
 * then the volume is moved out of every guest's reach and removed (volumes.ts).
 */
import { isoAt, systemClock, type Clock } from '../common/index.js';
import { ValidationError } from '../errors.js';
import { NotFoundError } from './errors.js';
import { hashSecret, newId, newSecret } from './ids.js';
import type { Page, PageRequest, SessionRecord, Store } from './store.js';
import type { Volumes } from './volumes.js';

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
}

export class SessionService {
  private readonly goneListeners: ((sessionId: string) => void)[] = [];

  constructor(
    private readonly store: Store,
    private readonly volumes: Volumes,
    private readonly stopCalls: StopCalls = stopNoCalls,
    /** Decides expiry: tests move it forward instead of sleeping out a TTL. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Called with a session's id when it is deleted or expires (caches drop what they hold for it). */
  onGone(listener: (sessionId: string) => void): void {
    this.goneListeners.push(listener);
  }

  notifyGone(sessionId: string): void {
    for (const listener of this.goneListeners) listener(sessionId);
  }

  async create(agentId: string, input: SessionInput): Promise<{ session: SessionRecord; token: string }> {
    const agent = await this.store.getAgent(agentId);
    if (!agent) throw new NotFoundError(`agent ${agentId}`);
    const vaultIds = [...new Set(input.vault_ids ?? [])];
    for (const vaultId of vaultIds) {
      if (!(await this.store.getVault(vaultId))) {
        throw new ValidationError([{ code: 'session.unknown_vault', message: `vault ${vaultId} does not exist` }]);
      }
    }
    const ttl = input.ttl_seconds ?? DEFAULT_SESSION_TTL_SECONDS;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_SESSION_TTL_SECONDS) {
      throw new ValidationError([{ code: 'session.ttl', message: `ttl_seconds must be a whole number from 1 to ${MAX_SESSION_TTL_SECONDS}` }]);
    }
    const token = newSecret('st');
    const now = this.clock.now();
    const session: SessionRecord = {
      id: newId('ses'), agentId, agentVersion: agent.currentVersion, tokenHash: hashSecret(token), vaultIds,
      createdAt: new Date(now).toISOString(), expiresAt: new Date(now + ttl * 1000).toISOString(),
    };
    await this.store.addSession(session);
    await this.volumes.sessionTmp(session.id);
    return { session, token };
  }

  /** A session that exists and has not expired. */
  async get(id: string): Promise<SessionRecord> {
    const session = await this.store.getSession(id);
    if (!session || isExpired(session, this.clock.now())) throw new NotFoundError(`session ${id}`);
    return session;
  }

  /** The live session a token opens, or null. */
  async byToken(token: string): Promise<SessionRecord | null> {
    const session = await this.store.findSessionByTokenHash(hashSecret(token));
    return session && !isExpired(session, this.clock.now()) ? session : null;
  }

  async list(agentId: string, page: PageRequest): Promise<Page<SessionRecord>> {
    if (!(await this.store.getAgent(agentId))) throw new NotFoundError(`agent ${agentId}`);
    return this.store.listSessions(agentId, page);
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
    this.notifyGone(session.id);
    await this.stopCalls([session.id]);
    // Whatever is left (a guest still refilling it) is out of every guest's path and swept at start-up.
    await this.volumes.remove([session.id]);
  }
}

export function isExpired(session: SessionRecord, now: number): boolean {
  return Date.parse(session.expiresAt) <= now;
}
