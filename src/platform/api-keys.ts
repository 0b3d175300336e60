/**
 * API keys: high-entropy secrets (`sk_…`), stored only as their sha-256, shown once when made. Each key has
 * a scope: `admin` may do anything, `read` may only read (`scopePermits` is the one rule; the router applies
 * it to every request). Revoking a key keeps its record (so a data directory that had keys never counts as
 * fresh again), and the last admin key not revoked cannot be revoked: `subako admin-key` would be the only
 * way back in.
 */
import { timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { SubakoError } from '../errors.js';
import { ConflictError, NotFoundError } from './errors.js';
import { hashSecret, newId, newSecret, nowIso } from './ids.js';
import { SqliteStore } from './store/index.js';
import type { ApiKeyRecord, ApiKeyScope, ApiKeyStore, Page, PageRequest } from './store/index.js';

export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['admin', 'read'];

/** What a request does to the platform: reads it, or changes something (a tool call counts as a change). */
export type Access = 'read' | 'write';

/** The one rule of scopes: an admin key may do anything, a read key only read. */
export function scopePermits(scope: ApiKeyScope, access: Access): boolean {
  return scope === 'admin' || access === 'read';
}

/**
 * The one rule of a key being good: not revoked. (Keys have no expiry; a key that gains one is out of force
 * past it here, and so both for new requests and for the streams it holds open.)
 */
export function isInForce(record: ApiKeyRecord): boolean {
  return record.revokedAt === null;
}

/** How stale `lastUsedAt` may get before a request writes it again (a write per request would cost every request). */
const TOUCH_INTERVAL_MS = 60_000;

export class ApiKeys {
  private readonly revokedListeners = new Set<(id: string) => void>();

  constructor(private readonly store: ApiKeyStore) {}

  /** `scopePermits`, for server/, which is handed the platform and imports none of its code. */
  permits(record: ApiKeyRecord, access: Access): boolean {
    return scopePermits(record.scope, access);
  }

  /** Makes a key; the plain key is in the answer and nowhere else. */
  async create(name: string, scope: ApiKeyScope = 'admin'): Promise<{ record: ApiKeyRecord; key: string }> {
    const key = newSecret('sk');
    const record: ApiKeyRecord = {
      id: newId('key'), name, hash: hashSecret(key), prefix: key.slice(0, 7), scope, createdAt: nowIso(), lastUsedAt: null, revokedAt: null,
    };
    await this.store.addApiKey(record);
    return { record, key };
  }

  /** The key's record, or null (unknown or revoked). Lookup is by hash, so no comparison of secrets leaks timing. */
  async verify(key: string): Promise<ApiKeyRecord | null> {
    if (!/^sk_[A-Za-z0-9_-]{20,100}$/.test(key)) return null;
    const hash = hashSecret(key);
    const record = await this.store.findApiKeyByHash(hash);
    if (!record || !isInForce(record)) return null;
    if (!timingSafeEqual(Buffer.from(record.hash), Buffer.from(hash))) return null;
    const now = Date.now();
    if (record.lastUsedAt === null || now - Date.parse(record.lastUsedAt) >= TOUCH_INTERVAL_MS) {
      const at = new Date(now).toISOString();
      await this.store.touchApiKey(record.id, at);
      return { ...record, lastUsedAt: at };
    }
    return record;
  }

  /**
   * Of these key ids, those still in force, in one query (what holds a key's requests open — the live call
   * stream — asks this once a second for all the keys it holds). An id that names no key is not in force.
   */
  async inForce(ids: readonly string[]): Promise<Set<string>> {
    return new Set((await this.store.getApiKeys(ids)).filter(isInForce).map((record) => record.id));
  }

  /**
   * Hears each revocation made through this process, at once (other processes' are seen by asking `inForce`).
   * Returns its removal.
   */
  onRevoked(listener: (id: string) => void): () => void {
    this.revokedListeners.add(listener);
    return () => this.revokedListeners.delete(listener);
  }

  /** Whether any key was ever made (revoked ones count). */
  async any(): Promise<boolean> {
    return (await this.store.countApiKeys()) > 0;
  }

  list(page: PageRequest): Promise<Page<ApiKeyRecord>> {
    return this.store.listApiKeys(page);
  }

  async get(id: string): Promise<ApiKeyRecord> {
    const record = await this.store.getApiKey(id);
    if (!record) throw new NotFoundError(`API key ${id}`);
    return record;
  }

  /** Revokes the key (again: a no-op). Refuses the last admin key not revoked. */
  async revoke(id: string): Promise<ApiKeyRecord> {
    await this.get(id);
    if (!(await this.store.revokeApiKey(id, nowIso()))) {
      throw new ConflictError(
        `${id} is the last admin key; create another admin key first (subako keys create --scope admin), then revoke this one`,
        'last_admin_key',
      );
    }
    for (const listener of [...this.revokedListeners]) listener(id);
    return this.get(id);
  }
}

/**
 * Mints an admin key straight into a data directory's database, without a server (`subako admin-key`), for
 * an operator who lost theirs. SQLite's WAL lets this run beside a server on the same directory.
 */
export async function mintAdminKey(dataDir: string, name = 'admin (minted offline)'): Promise<{ record: ApiKeyRecord; key: string }> {
  const file = join(dataDir, 'subako.db');
  if (!existsSync(file)) {
    throw new SubakoError('no_data_dir', `${dataDir} holds no subako database (subako.db); pass the --data-dir the server runs with`);
  }
  const store = new SqliteStore(file);
  try {
    return await new ApiKeys(store).create(name, 'admin');
  } finally {
    await store.close();
  }
}
