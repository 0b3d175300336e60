/**
 * API keys: high-entropy secrets (`sk_…`), stored only as their sha-256, shown once when made.
 */
import { timingSafeEqual } from 'node:crypto';
import { hashSecret, newId, newSecret, nowIso } from './ids.js';
import type { ApiKeyRecord, Store } from './store.js';

export class ApiKeys {
  constructor(private readonly store: Store) {}

  /** Makes a key; the plain key is in the answer and nowhere else. */
  async create(name: string): Promise<{ record: ApiKeyRecord; key: string }> {
    const key = newSecret('sk');
    const record: ApiKeyRecord = { id: newId('key'), name, hash: hashSecret(key), prefix: key.slice(0, 7), createdAt: nowIso() };
    await this.store.addApiKey(record);
    return { record, key };
  }

  /** The key's record, or null. Lookup is by hash, so no comparison of secrets leaks timing. */
  async verify(key: string): Promise<ApiKeyRecord | null> {
    if (!/^sk_[A-Za-z0-9_-]{20,100}$/.test(key)) return null;
    const hash = hashSecret(key);
    const record = await this.store.findApiKeyByHash(hash);
    if (!record) return null;
    return timingSafeEqual(Buffer.from(record.hash), Buffer.from(hash)) ? record : null;
  }

  async any(): Promise<boolean> {
    return (await this.store.countApiKeys()) > 0;
  }
}
