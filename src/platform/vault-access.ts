/**
 * Which vaults a session may use: the one rule, pure, for every place a session's credentials are opened.
 *
 * A vault is the operator's (no user) or one user's. A user's vault is used only by that user's sessions, never
 * by another user's and never by a session of no user, whatever the agent names. So what a session can use is
 * the agent's grants (a package's `egress.grants` origins; a remote server's `credential` vault) intersected with
 * the vaults the session may use:
 *
 * - a session of no user: the operator's vaults named when it was opened (and a remote server's operator vault);
 * - a session of user U: U's vaults — those named when it was opened, or, when none was named, every vault U
 *   owns at the time of the call (so a vault U gains later counts at once, one deleted stops counting) — and the
 *   operator's vaults the operator named (in `vault_ids`, or as a remote server's credential).
 */
import type { SessionRecord, VaultRecord } from './store/index.js';

/** Whether a session of `sessionUser` (null: no user) may use a vault owned by `vaultOwner` (null: the operator's). */
export function mayUseVault(vaultOwner: string | null, sessionUser: string | null): boolean {
  return vaultOwner === null || vaultOwner === sessionUser;
}

/** Whether the session takes its vaults from its user's, as they are at each call (no vault was named). */
export function usesAllUserVaults(session: Pick<SessionRecord, 'userId' | 'vaultIds'>): boolean {
  return session.userId !== null && session.vaultIds.length === 0;
}

/** The vaults of `vaults` the session may use, in the order of `ids` (a vault that is gone is left out). */
export function usableVaultIds(ids: readonly string[], vaults: readonly Pick<VaultRecord, 'id' | 'userId'>[], sessionUser: string | null): string[] {
  const owner = new Map(vaults.map((v) => [v.id, v.userId]));
  return ids.filter((id) => owner.has(id) && mayUseVault(owner.get(id)!, sessionUser));
}
