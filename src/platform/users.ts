/**
 * End users: the people behind sessions, as the operator's application knows them. A user is an id the
 * application chooses (user-ids.ts), with optional fields to show; it owns vaults (vaults.ts `createVault`), and
 * sessions are opened for it (sessions.ts). What a user's session may use is vault-access.ts's rule.
 *
 * Deleting a user deletes its sessions and its vaults with their credentials, in one transaction under the user's
 * lock (so no session or vault is added for it meanwhile, on any replica), then ends those sessions as a session's
 * deletion does: caches told, calls stopped, volumes removed. Every other replica refuses them at once, since
 * their records are gone (a replica on a shared database keeps no session of its own).
 */
import { ValidationError } from '../errors.js';
import { ConflictError, NotFoundError } from './errors.js';
import { nowIso } from './ids.js';
import type { SessionService } from './sessions.js';
import type { Page, PageRequest, SessionRecord, UserRecord, UserStore, VaultRecord } from './store/index.js';
import { checkUserId } from './user-ids.js';

export interface UserInput {
  id: string;
  display_name?: string | null;
  email?: string | null;
}

/** A user's fields, replaced whole: a field left out (or null) is cleared. */
export type UserUpdate = Omit<UserInput, 'id'>;

const MAX_FIELD_CHARS = 256;

export class UserService {
  constructor(
    private readonly store: UserStore,
    private readonly sessions: Pick<SessionService, 'ended' | 'listForUser'>,
    /** Runs before a user's records go: its connections revoked at their authorization servers (connections.ts). */
    private readonly beforeDelete: (id: string) => Promise<void> = async () => undefined,
  ) {}

  async create(input: UserInput): Promise<UserRecord> {
    const id = checkUserId(input.id);
    const now = nowIso();
    const rec: UserRecord = { id, displayName: field(input.display_name, 'display_name'), email: field(input.email, 'email'), createdAt: now, updatedAt: now };
    await this.store.addUser(rec);
    return rec;
  }

  async get(id: string): Promise<UserRecord> {
    const user = await this.store.getUser(id);
    if (!user) throw new NotFoundError(`user ${id}`);
    return user;
  }

  /** The user, or null when there is none (no refusal: the door decides what an unknown user means). */
  find(id: string): Promise<UserRecord | null> {
    return this.store.getUser(checkUserId(id));
  }

  /** The user, created with no display fields when there is none (two replicas creating it at once agree on one). */
  async ensure(id: string): Promise<UserRecord> {
    const existing = await this.find(id);
    if (existing) return existing;
    try {
      return await this.create({ id });
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      return this.get(id); // expected: created meanwhile elsewhere
    }
  }

  list(page: PageRequest): Promise<Page<UserRecord>> {
    return this.store.listUsers(page);
  }

  async update(id: string, change: UserUpdate): Promise<UserRecord> {
    const user = await this.get(id);
    const next: UserRecord = { ...user, displayName: field(change.display_name, 'display_name'), email: field(change.email, 'email'), updatedAt: nowIso() };
    await this.store.updateUser(next);
    return next;
  }

  async vaults(id: string, page: PageRequest): Promise<Page<VaultRecord>> {
    await this.get(id);
    return this.store.listUserVaults(id, page);
  }

  async sessionsOf(id: string, page: PageRequest): Promise<Page<SessionRecord>> {
    await this.get(id);
    return this.sessions.listForUser(id, page);
  }

  /**
   * Deletes the user, its vaults (and their credentials) and its sessions, ending those on every replica; the tokens
   * of its connections are revoked at their authorization servers first, so no copy of them outlives the user.
   */
  async delete(id: string): Promise<void> {
    if (await this.store.getUser(id)) await this.beforeDelete(id);
    const removed = await this.store.deleteUser(id);
    if (!removed) throw new NotFoundError(`user ${id}`);
    await this.sessions.ended(removed.sessionIds);
  }
}

/** A display field: text of at most MAX_FIELD_CHARS characters without control characters, or null. */
function field(value: string | null | undefined, name: string): string | null {
  if (value === undefined || value === null) return null;
  const trimmed = value.trim();
  // eslint-disable-next-line no-control-regex
  if (trimmed.length > MAX_FIELD_CHARS || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw new ValidationError([{ code: 'user.field', message: `${name} must be at most ${MAX_FIELD_CHARS} characters without line breaks or control characters` }]);
  }
  return trimmed === '' ? null : trimmed;
}
