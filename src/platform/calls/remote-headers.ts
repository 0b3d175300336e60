/**
 * The headers a remote server's vault credential supplies (none without one): for its session's tools (`session`:
 * only from a vault that session may use, vault-access.ts) and for pinning them.
 */
import type { AgentRemoteServer, SessionRecord } from '../store/index.js';
import type { VaultService } from '../vaults.js';

export async function remoteServerHeaders(
  vaults: Pick<VaultService, 'credentialFor'>,
  server: AgentRemoteServer,
  session?: Pick<SessionRecord, 'userId'>,
): Promise<Record<string, string>> {
  if (!server.credential) return {};
  const credential = await vaults.credentialFor(server.credential.vault_id, server.credential.credential_id, server.url, session);
  if (!credential) throw new Error(`vault ${server.credential.vault_id} holds no credential for ${new URL(server.url).origin}`);
  return credential.headers;
}
