/**
 * What the API shows of each record: snake_case JSON, never a secret (API keys, session tokens and
 * credential payloads exist only as hashes or sealed text and are not in any view). Each view is typed by
 * its answer's schema (server/api/), so a record and the schema the OpenAPI document shows cannot drift apart.
 */
import type { AgentDrift, AgentRecord, AgentVersionRecord, ApiKeyRecord, CallApproval, CallRecord, CallStatsRow, CallStatsWindow, PackageRecord, PackageVersionSummary, Page, PageRequest, HeldApproval, PendingApproval, SessionRecord, SkillRecord, UserRecord, VaultRecord } from '../platform/index.js';
import type { Tool } from '../tool.js';
import { redactUrl } from '../common/index.js';
import type {
  AgentCallView, AgentDriftView, AgentVersionView, AgentView, ApprovalView, CallApprovalView, CallStatsRowView, CallStatsView, CallView, HeldApprovalView, KeyView, PackageSummaryView, PackageView,
  Page as PageView, SessionEndpoints, SessionTool, SessionView, SkillView, UserView, VaultView,
} from './api/index.js';

export const DEFAULT_PAGE_LIMIT = 50;

/**
 * A list page ends before its items pass this much JSON, whatever its `limit` (a page of 200 calls, each with
 * its 64 KiB previews of arguments and result, would otherwise be 25 MiB): next_cursor then goes on from there.
 */
export const PAGE_MAX_BYTES = 1024 * 1024;

export function pageRequest(query: Record<string, string>): PageRequest {
  return { limit: query.limit ? Number(query.limit) : DEFAULT_PAGE_LIMIT, ...(query.after ? { after: query.after } : {}), maxBytes: PAGE_MAX_BYTES };
}

export function mapPage<T, U>(page: Page<T>, map: (item: T) => U): PageView<U> {
  return { items: page.items.map(map), next_cursor: page.next_cursor };
}

export function packageView(rec: PackageRecord): PackageView {
  return {
    name: rec.name, version: rec.version, description: rec.description, digest: rec.digest, created_at: rec.createdAt,
    manifest: rec.manifest, tools: rec.tools,
  };
}

/** A package as a whole: its versions, oldest first, and the latest version with its tools. */
export function packageSummaryView(latest: PackageRecord, versions: readonly PackageVersionSummary[]): PackageSummaryView {
  return {
    name: latest.name, description: latest.description, latest_version: latest.version,
    versions: versions.map((v) => ({ version: v.version, description: v.description, digest: v.digest, created_at: v.createdAt })),
    tools: latest.tools,
  };
}

export function skillView(rec: SkillRecord): SkillView {
  return { name: rec.name, version: rec.version, description: rec.description, digest: rec.digest, created_at: rec.createdAt };
}

/**
 * An agent's spec as the API shows it: each remote server's URL as common/url-secrecy.ts shows a URL (a token in
 * its path, a key in its query, user-info: "[redacted]"). Sent back as shown, a URL keeps what it was (agents.ts).
 */
function shownSpec(spec: AgentVersionRecord['spec']): AgentVersionView['spec'] {
  return { ...spec, connections: spec.connections ?? [], mcp_servers: spec.mcp_servers.map((server) => ({ ...server, url: redactUrl(server.url) })) };
}

export function agentView(agent: AgentRecord, version?: AgentVersionRecord): AgentView {
  return {
    id: agent.id, name: agent.name, version: agent.currentVersion, created_at: agent.createdAt, updated_at: agent.updatedAt,
    ...(version ? { spec: shownSpec(version.spec) } : {}),
  };
}

export function driftView(drift: AgentDrift): AgentDriftView {
  return { agent_id: drift.agentId, version: drift.version, drifted: drift.drifted, digest: drift.digest, servers: drift.servers };
}

export function agentVersionView(rec: AgentVersionRecord): AgentVersionView {
  return { agent_id: rec.agentId, version: rec.version, spec: shownSpec(rec.spec), created_at: rec.createdAt };
}

export function vaultView(rec: VaultRecord): VaultView {
  return { id: rec.id, name: rec.name, user_id: rec.userId, created_at: rec.createdAt };
}

export function userView(rec: UserRecord): UserView {
  return { id: rec.id, display_name: rec.displayName, email: rec.email, created_at: rec.createdAt, updated_at: rec.updatedAt };
}

export function sessionView(rec: SessionRecord): SessionView {
  return {
    id: rec.id, agent_id: rec.agentId, agent_version: rec.agentVersion, vault_ids: rec.vaultIds, user_id: rec.userId,
    created_at: rec.createdAt, expires_at: rec.expiresAt,
  };
}

/** The two ways to reach a session's MCP endpoint, given its token (only known when it is created). */
export function sessionEndpoints(baseUrl: string, rec: SessionRecord, token: string): SessionEndpoints {
  return {
    capability_url: `${baseUrl}/mcp/${token}`,
    url: `${baseUrl}/v1/sessions/${rec.id}/mcp`,
    authorization: `Bearer ${token}`,
  };
}

/** `agentId`: the call's agent, where the answer spans sessions (the calls search and the live stream). */
const statsRowView = (row: CallStatsRow): CallStatsRowView =>
  ({ key: row.key, calls: row.calls, errors: row.errors, p50_ms: row.p50Ms, p95_ms: row.p95Ms });

export function callStatsView(stats: CallStatsWindow): CallStatsView {
  return {
    window: stats.window, since: stats.since, until: stats.until, bucket_seconds: stats.bucketMs / 1000, buckets: stats.buckets,
    by_tool: stats.byTool.map(statsRowView), by_agent: stats.byAgent.map(statsRowView),
  };
}

export function callView(rec: CallRecord): CallView;
export function callView(rec: CallRecord, agentId: string): AgentCallView;
export function callView(rec: CallRecord, agentId?: string): CallView {
  return {
    id: rec.id, session_id: rec.sessionId, ...(agentId !== undefined ? { agent_id: agentId } : {}), via: rec.via, tool: rec.tool, arguments: rec.arguments, outcome: rec.outcome,
    crash: rec.crash, model: rec.model, stderr_tail: rec.stderrTail, egress: rec.egress, duration_ms: rec.durationMs,
    started_at: rec.startedAt, worker: rec.worker ?? null, ...(rec.approval ? { approval: approvalDecisionView(rec.approval) } : {}),
    ...(rec.traceparent !== undefined ? { traceparent: rec.traceparent } : {}),
    ...(rec.leaseLapsed ? { lease_lapsed: { marked_as: rec.leaseLapsed.markedAs, note: rec.leaseLapsed.note } } : {}),
  };
}

export function approvalDecisionView(rec: CallApproval): CallApprovalView {
  return {
    id: rec.id, asked: rec.asked, decision: rec.decision, decided_by: rec.decidedBy, decided_at: rec.decidedAt,
    ...(rec.reason !== undefined ? { reason: rec.reason } : {}),
  };
}

/** A held call as its approver reads it: its arguments exactly (approval-view.ts), vault secrets hidden where it says. */
export function pendingApprovalView(rec: PendingApproval): ApprovalView {
  return {
    id: rec.id, session_id: rec.sessionId, call_id: rec.callId, tool: rec.tool, arguments: rec.arguments, hidden_secrets: rec.hiddenSecrets,
    created_at: rec.createdAt, expires_at: rec.expiresAt,
  };
}

export function heldApprovalView(rec: HeldApproval): HeldApprovalView {
  return { ...pendingApprovalView(rec), decision: rec.decision ?? 'pending', decided_by: rec.decidedBy, decided_at: rec.decidedAt, reason: rec.reason };
}

/**
 * A tool's source as a session may see it. A remote MCP server's URL can be a credential (a capability URL,
 * a token in the path or query), and this view answers the session's own token too: shown whole, it would
 * let a session reach the upstream directly, past the agent's per-tool policy. Only its origin is shown.
 */
function sourceView(source: NonNullable<Tool['source']>): NonNullable<SessionTool['source']> {
  if (source.kind !== 'mcp' || typeof source.url !== 'string') return source;
  let origin: string;
  try {
    origin = new URL(source.url).origin;
  } catch {
    origin = '(not a URL)';
  }
  return { ...source, url: origin };
}

export function toolView(name: string, tool: Tool): SessionTool {
  return {
    name, ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}), inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    ...(tool.icons !== undefined ? { icons: tool.icons.map((icon) => ({ ...icon })) } : {}),
    ...(tool.source ? { source: sourceView(tool.source) } : {}),
    ...((tool as { requiresApproval?: boolean }).requiresApproval ? { requires_approval: true } : {}),
  };
}

export function keyView(rec: ApiKeyRecord): KeyView {
  return {
    id: rec.id, name: rec.name, prefix: rec.prefix, scope: rec.scope, created_at: rec.createdAt,
    last_used_at: rec.lastUsedAt, revoked_at: rec.revokedAt,
  };
}
