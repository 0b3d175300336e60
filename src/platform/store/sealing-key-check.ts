/**
 * One sealing key for every process on a database. Vault credentials and approvals' request state are sealed
 * with SUBAKO_SECRET_KEY and kept in the shared database: a replica holding another key would fail to open
 * what the others sealed, and seal what they cannot open. So the first process to open a database stores a
 * check of its key (an HMAC of a fixed label under the key: it shows nothing of the key), and every later one
 * must give the same check or refuse to start.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SubakoError } from '../../errors.js';
import type { InstanceStore } from './store.js';

/** The settings row holding the check. */
export const SEALING_KEY_CHECK_SETTING = 'sealing_key_check';
const LABEL = 'subako sealing key check v1';

export class SealingKeyMismatchError extends SubakoError {
  constructor() {
    super('sealing_key_mismatch',
      'the sealing key differs from the one this database was set up with; give every replica the same SUBAKO_SECRET_KEY');
  }
}

/** The check of a key: HMAC-SHA256 of a fixed label under it, hex. Pure. */
export function sealingKeyCheck(key: Buffer): string {
  return createHmac('sha256', key).update(LABEL).digest('hex');
}

/** Stores this key's check when the database has none; throws SealingKeyMismatchError when it holds another's. */
export async function checkSealingKey(store: Pick<InstanceStore, 'claimSetting'>, key: Buffer): Promise<void> {
  const mine = sealingKeyCheck(key);
  const kept = await store.claimSetting(SEALING_KEY_CHECK_SETTING, mine);
  if (kept.length !== mine.length || !timingSafeEqual(Buffer.from(kept), Buffer.from(mine))) throw new SealingKeyMismatchError();
}
