/**
 * Rows to records, and list keys and cursors, for the SQL stores. Both back ends keep the same columns
 * (migrations.ts) with JSON as text, so one set of mappers reads either's rows.
 */
import { jsonBytes } from '../../common/index.js';
import { CrashReason } from '../../function/index.js';
import type {
  AgentRecord, ApiKeyRecord, AgentSpec, AgentVersionRecord, CallKeyRecord, CallRecord, CredentialRecord, IdempotencyRecord, LeaseLapse, PackageRecord,
  SessionRecord, SkillRecord, UserRecord, VaultRecord, Page, PageRequest, PinnedDefinition, ToolPin,
} from './store.js';
import type { HeldApprovalRecord } from './store.js';
import type { StoredTask, TaskStatus } from './task-store.js';

export type Row = Record<string, unknown>;

/**
 * Name then ordinal, in text order. The separator sorts before any name character (names are [a-z0-9_-]);
 * each database's is its dialect's (dialect.ts).
 */
export function listKey(name: string, seq: number, separator: string): string {
  return `${name}${separator}${String(seq).padStart(10, '0')}`;
}

// List keys hold a control character, so cursors of list_key tables travel base64url-encoded; id cursors travel as they are.
export function encodeCursor(key: string, value: string): string {
  return key === 'list_key' ? Buffer.from(value, 'utf8').toString('base64url') : value;
}
export function decodeCursor(key: string, cursor: string): string {
  return key === 'list_key' ? Buffer.from(cursor, 'base64url').toString('utf8') : cursor;
}

/**
 * One page from rows read with `limit + 1` (the extra row says whether more follow): the first `limit`, mapped,
 * and the cursor of the last one kept when more follow. With `maxBytes`, the page ends early before its items'
 * JSON would pass it (a record can be large: a call keeps up to 64 KiB each of arguments and result), keeping
 * at least one item so that every page moves on; the cursor is then the last item kept, so nothing is skipped
 * or repeated.
 */
export function pageFromRows<T>(rows: readonly Row[], page: PageRequest, map: (row: Row) => T, cursorOf: (row: Row) => string): Page<T> {
  const items: T[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, page.limit)) {
    const item = map(row);
    if (page.maxBytes !== undefined) {
      bytes += jsonBytes(item) + 1;
      if (items.length > 0 && bytes > page.maxBytes) return { items, next_cursor: cursorOf(rows[items.length - 1]!) };
    }
    items.push(item);
  }
  return { items, next_cursor: rows.length > page.limit && items.length > 0 ? cursorOf(rows[items.length - 1]!) : null };
}

/** How agent_version_refs names what an agent version refers to: packages and skills by `name@version`. */
export const versionRef = (name: string, version: string): string => `${name}@${version}`;

/** What an agent version refers to (so that what it uses cannot be deleted): its packages, skills and vaults. */
export function agentVersionRefs(spec: AgentSpec): ['package' | 'skill' | 'vault', string][] {
  return [
    ...spec.tools.map((tool): ['package', string] => ['package', versionRef(tool.package, tool.version)]),
    ...spec.skills.map((skill): ['skill', string] => ['skill', versionRef(skill.name, skill.version)]),
    ...spec.mcp_servers.flatMap((server): ['vault', string][] => (server.credential ? [['vault', server.credential.vault_id]] : [])),
  ];
}

export const s = (v: unknown): string => String(v);
const j = <T>(v: unknown): T => JSON.parse(String(v)) as T;
/** A JSON-valued field as stored: text, so a record comes back exactly as it went in. */
export const json = (v: unknown): string => JSON.stringify(v);
export const jsonOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

export function toApiKey(row: Row): ApiKeyRecord {
  return {
    id: s(row.id), name: s(row.name), hash: s(row.hash), prefix: s(row.prefix), scope: row.scope === 'read' ? 'read' : 'admin',
    createdAt: s(row.created_at), lastUsedAt: row.last_used_at === null ? null : s(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : s(row.revoked_at),
  };
}
export function toPackage(row: Row): PackageRecord {
  return {
    name: s(row.name), version: s(row.version), seq: Number(row.seq), description: s(row.description),
    digest: s(row.digest), manifest: j(row.manifest), tools: j(row.tools), createdAt: s(row.created_at),
  };
}
export function toSkill(row: Row): SkillRecord {
  return {
    name: s(row.name), version: s(row.version), seq: Number(row.seq), description: s(row.description),
    digest: s(row.digest), createdAt: s(row.created_at),
  };
}
export function toAgent(row: Row): AgentRecord {
  return { id: s(row.id), name: s(row.name), currentVersion: Number(row.current_version), createdAt: s(row.created_at), updatedAt: s(row.updated_at) };
}
export function toAgentVersion(row: Row): AgentVersionRecord {
  return { agentId: s(row.agent_id), version: Number(row.version), spec: specOf(j<AgentSpec>(row.spec)), createdAt: s(row.created_at) };
}

/**
 * A stored spec with what later versions of subako added, for versions published before: their remote servers'
 * definitions were never pinned (served as listed: `follow`), their tools all listed.
 */
function specOf(stored: AgentSpec): AgentSpec {
  return {
    ...stored,
    mcp_servers: stored.mcp_servers.map((server) => ({ ...server, definitions: server.definitions ?? 'follow' })),
    discovery: stored.discovery ?? { mode: 'all', entry: [] },
  };
}

export function toToolPin(row: Row): ToolPin {
  return { server: s(row.server), tool: s(row.tool), digest: s(row.digest), definition: j<PinnedDefinition>(row.definition) };
}
export function toVault(row: Row): VaultRecord {
  return { id: s(row.id), name: s(row.name), userId: row.user_id === null || row.user_id === undefined ? null : s(row.user_id), createdAt: s(row.created_at) };
}
export function toUser(row: Row): UserRecord {
  return {
    id: s(row.id), displayName: row.display_name === null ? null : s(row.display_name), email: row.email === null ? null : s(row.email),
    createdAt: s(row.created_at), updatedAt: s(row.updated_at),
  };
}
export function toCredential(row: Row): CredentialRecord {
  return {
    id: s(row.id), vaultId: s(row.vault_id), target: s(row.target), displayName: s(row.display_name),
    scheme: s(row.scheme) as CredentialRecord['scheme'], sealed: s(row.sealed),
    expiresAt: row.expires_at === null ? null : s(row.expires_at), createdAt: s(row.created_at), updatedAt: s(row.updated_at),
  };
}
export function toSession(row: Row): SessionRecord {
  return {
    id: s(row.id), agentId: s(row.agent_id), agentVersion: Number(row.agent_version), tokenHash: s(row.token_hash),
    vaultIds: j(row.vault_ids), userId: row.user_id === null || row.user_id === undefined ? null : s(row.user_id),
    createdAt: s(row.created_at), expiresAt: s(row.expires_at),
  };
}
export function toCall(row: Row): CallRecord {
  return {
    id: s(row.id), sessionId: s(row.session_id), via: s(row.via) as CallRecord['via'], tool: s(row.tool),
    arguments: j(row.arguments), outcome: s(row.outcome) as CallRecord['outcome'],
    crash: row.crash === null ? null : j(row.crash), model: j(row.model), stderrTail: s(row.stderr_tail),
    egress: j(row.egress), durationMs: row.duration_ms === null ? null : Number(row.duration_ms), startedAt: s(row.started_at),
    ...(row.approval === null || row.approval === undefined ? {} : { approval: j(row.approval) }),
    ...(row.instance_id === null || row.instance_id === undefined ? {} : { instanceId: s(row.instance_id) }),
    ...(row.lease_lapsed === null || row.lease_lapsed === undefined ? {} : { leaseLapsed: j<LeaseLapse>(row.lease_lapsed) }),
    ...(row.worker_id === null || row.worker_id === undefined ? {} : { worker: { id: s(row.worker_id), host: s(row.worker_host ?? '') } }),
    ...(row.traceparent === null || row.traceparent === undefined ? {} : { traceparent: s(row.traceparent) }),
  };
}
export function toCallKey(row: Row): CallKeyRecord {
  return {
    sessionId: s(row.session_id), key: s(row.idempotency_key), requestHash: s(row.request_hash), callId: s(row.call_id),
    result: row.result === null ? null : s(row.result), createdAt: s(row.created_at), expiresAt: s(row.expires_at),
  };
}

/**
 * The crash a call left `running` by a process that is gone (or lost its lease) is marked `unknown` with
 * (function/crash.ts's reason), saying what to do.
 */
export const INTERRUPTED_CRASH = json({
  reason: CrashReason.interrupted,
  message: 'the server running the call stopped (or lost its lease on the database) before the call\'s end was recorded: whether the tool ran to its ' +
    'end is unknown. Check what it would have changed before calling it again; a retry with the same idempotency key answers this same outcome',
});

/** What a call's record says of a lease that lapsed while it ran: `markedAs`, what another process marked it meanwhile. */
export function leaseLapse(markedAs: LeaseLapse['markedAs']): LeaseLapse {
  const lapsed = 'the lease of the server running this call lapsed while it ran (the database was out of its reach for longer than the lease)';
  return {
    markedAs,
    note: markedAs === null
      ? `${lapsed}; no other server marked the call meanwhile. This record holds the outcome the call really had`
      : `${lapsed}, and another server marked the call ${markedAs.outcome} meanwhile. This record holds the outcome the call really had; markedAs is that mark`,
  };
}
export function toIdempotency(row: Row): IdempotencyRecord {
  return { scope: s(row.scope), requestHash: s(row.request_hash), status: Number(row.status), body: j(row.body), createdAt: s(row.created_at) };
}
export function toHeldApproval(row: Row): HeldApprovalRecord {
  const orNull = (v: unknown): string | null => (v === null || v === undefined ? null : s(v));
  return {
    id: s(row.id), sessionId: s(row.session_id), callId: s(row.call_id), tool: s(row.tool), arguments: j(row.arguments),
    hiddenSecrets: j(row.hidden_secrets) as string[],
    createdAt: s(row.created_at), expiresAt: s(row.expires_at), holder: s(row.holder),
    decision: orNull(row.decision) as HeldApprovalRecord['decision'], decidedBy: orNull(row.decided_by), decidedAt: orNull(row.decided_at),
    reason: orNull(row.reason),
  };
}

export function toTask(row: Row): StoredTask {
  const orNull = (v: unknown): string | null => (v === null || v === undefined ? null : s(v));
  return {
    id: s(row.id), sessionId: s(row.session_id), tool: s(row.tool), status: s(row.status) as TaskStatus, statusMessage: orNull(row.status_message),
    createdAt: s(row.created_at), updatedAt: s(row.updated_at), expiresAt: s(row.expires_at), ttlMs: Number(row.ttl_ms), pollIntervalMs: Number(row.poll_interval_ms),
    owner: s(row.owner), outcome: orNull(row.outcome), pending: orNull(row.pending), upstream: orNull(row.upstream), ownerLive: Number(row.owner_live) === 1,
  };
}
