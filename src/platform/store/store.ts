/**
 * The Store: everything the platform remembers, one narrow interface per aggregate (below). One implementation
 * (sql-store.ts) over two databases: SQLite embedded (sqlite-store.ts), PostgreSQL for several replicas
 * (postgres-store.ts); hence every method returns a promise even though SQLite answers synchronously.
 *
 * Records are plain data. JSON-valued fields are typed here and (de)serialized by the implementation.
 * Lists page by id: ids sort by creation time (see ids.ts), `after` is the last id of the previous page.
 */
import type { TaskStore } from './task-store.js';
import type { ToolInfo } from '../../function/index.js';
import type { CallWorker, EgressRecord } from '../../tool.js';

export interface PageRequest {
  limit: number;
  after?: string;
  /**
   * A page also ends before its items would pass this many bytes of JSON (as records); it keeps at least one
   * item, and its cursor is then the last one kept, so the next page goes on from there.
   */
  maxBytes?: number;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** sha-256 of the key, hex. The key itself is never stored. */
  hash: string;
  /** The first characters of the key, to tell keys apart in a list. */
  prefix: string;
  /** `admin` may do anything; `read` may only read (api-keys.ts holds the rule). */
  scope: ApiKeyScope;
  createdAt: string;
  /** When the key last authenticated a request (updated at most once a minute), or null. */
  lastUsedAt: string | null;
  /** When the key was revoked, or null. A revoked key authenticates nothing; its record stays. */
  revokedAt: string | null;
}

export type ApiKeyScope = 'admin' | 'read';

export interface PackageRecord {
  name: string;
  version: string;
  /** Ordinal within the name, 1-based: "latest" is the highest. */
  seq: number;
  description: string;
  digest: string;
  manifest: Record<string, unknown>;
  tools: ToolInfo[];
  createdAt: string;
}

/** One version of a package as a list shows it: without its manifest and tools. */
export type PackageVersionSummary = Omit<PackageRecord, 'manifest' | 'tools'>;

export interface SkillRecord {
  name: string;
  version: string;
  seq: number;
  description: string;
  digest: string;
  createdAt: string;
}

/** One package an agent grants, as published (the version resolved, never "latest"). */
export interface AgentToolGrant {
  package: string;
  /** What the author asked for ("latest" or a version). */
  requested: string;
  version: string;
  egress: { allow: string[]; grants: string[] };
  data: boolean;
}

/**
 * What an agent lets a session do with a remote tool: call it; call it once an operator approved that call
 * (`require_approval`), or once the end user did through the client's elicitation (`require_user_approval`; an
 * operator when the call is held: approvals.ts); or not see it at all.
 */
export const TOOL_POLICIES = ['allow', 'require_approval', 'require_user_approval', 'deny'] as const;
export type ToolPolicy = (typeof TOOL_POLICIES)[number];

/**
 * What a session serves of a remote server's tool definitions: `pin`, those pinned when the agent version was
 * published (a changed or added definition is withheld until an operator accepts it into a new version); `follow`,
 * whatever the server lists now.
 */
export const DEFINITION_POLICIES = ['pin', 'follow'] as const;
export type DefinitionPolicy = (typeof DEFINITION_POLICIES)[number];

export interface AgentRemoteServer {
  name: string;
  url: string;
  /** Which credential authenticates to the server: a vault and, optionally, one credential in it. */
  credential: { vault_id: string; credential_id?: string } | null;
  default_policy: ToolPolicy;
  tools: { name: string; policy: ToolPolicy }[];
  /** Versions published before pinning existed have none: they are read as `follow`, as they were served. */
  definitions: DefinitionPolicy;
}

/**
 * A connection the agent needs its end users to make themselves (connections.ts): an OAuth grant of the user's
 * own account, held by subako in the user's vault and attached only to the upstream request — for one of the
 * agent's remote MCP servers (`mcp_server`: its authorization server discovered per RFC 9728/8414), or for an
 * egress origin whose OAuth provider is named by its issuer (`origin` and `issuer`).
 */
export interface AgentConnection {
  name: string;
  mcp_server: string | null;
  origin: string | null;
  issuer: string | null;
  scopes: string[];
  /** A client registered beforehand at the authorization server; null: a metadata document or dynamic registration. */
  client_id: string | null;
}

/**
 * How a session offers its tools: `all` lists every tool; `search` lists the `entry` tools (published names) and
 * a `search_tools` tool that finds the others by text, each still callable by name.
 */
export interface AgentDiscovery {
  mode: 'all' | 'search';
  entry: string[];
}

/** A remote tool's definition as pinned: what a client is shown of it, and so what must not change unseen. */
export interface PinnedDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  icons?: Record<string, unknown>[];
}

/** One remote tool's definition pinned with an agent version, by the sha-256 of its canonical JSON. */
export interface ToolPin {
  /** The agent's name of the remote server. */
  server: string;
  /** The tool's name at the server. */
  tool: string;
  digest: string;
  definition: PinnedDefinition;
}

export interface AgentSpec {
  name: string;
  description: string;
  tools: AgentToolGrant[];
  skills: { name: string; requested: string; version: string }[];
  mcp_servers: AgentRemoteServer[];
  /** The connections its end users make (versions published before connections existed have none). */
  connections?: AgentConnection[];
  /** Versions published before discovery existed have none: read as `{ mode: 'all', entry: [] }`. */
  discovery: AgentDiscovery;
}

export interface AgentRecord {
  id: string;
  name: string;
  currentVersion: number;
  createdAt: string;
  updatedAt: string;
}

export interface AgentVersionRecord {
  agentId: string;
  version: number;
  spec: AgentSpec;
  createdAt: string;
}

export interface VaultRecord {
  id: string;
  name: string;
  /** The user who owns the vault (only that user's sessions use it), or null: the operator's. */
  userId: string | null;
  createdAt: string;
}

/**
 * An end user: an id the operator's application chooses (user-ids.ts holds its form), with optional fields to
 * show. A user owns vaults, and sessions are opened for a user (users.ts).
 */
export interface UserRecord {
  id: string;
  displayName: string | null;
  email: string | null;
  createdAt: string;
  updatedAt: string;
}

export type CredentialScheme = 'static_headers' | 'static_bearer' | 'oauth';

export interface CredentialRecord {
  id: string;
  vaultId: string;
  /** An origin (`https://api.example.com`) or an exact server URL. */
  target: string;
  displayName: string;
  scheme: CredentialScheme;
  /** The payload, sealed (never the plain secret). */
  sealed: string;
  /** OAuth access-token expiry, ISO time, when known. */
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface SessionRecord {
  id: string;
  agentId: string;
  agentVersion: number;
  /** sha-256 of the session token that opens its MCP endpoint. */
  tokenHash: string;
  /** The vaults named when the session was opened (for a user's session with none: all of the user's, vault-access.ts). */
  vaultIds: string[];
  /** The user the session acts for, or null (the operator's session). */
  userId: string | null;
  createdAt: string;
  expiresAt: string;
}

/**
 * `cancelled`: the caller went away and the call was stopped. `invalid_arguments`: a checked source (a remote
 * MCP tool, a TypeScript tool) refused the arguments before any I/O; nothing ran. `denied`: the tool needs a
 * person's approval and the call did not get it (refused, nobody decided by the deadline, or the approval it
 * carried was replayed, altered or forged); nothing ran. `input_required`: the tool's remote server asked the
 * client for input (MCP 2026-07-28) and the client was passed the question; the call goes on in its retry, a call of
 * its own. `unknown`: the call was cut off mid-way and whether
 * the tool ran to its end is not known — the process running it stopped (or lost its lease) before its end was
 * recorded, or its worker stopped answering mid-call; `crash.reason` is `interrupted` and its message says what
 * to do (check the tool's effects before calling it again).
 */
export type CallOutcome = 'running' | 'ok' | 'tool_error' | 'crash' | 'cancelled' | 'invalid_arguments' | 'denied' | 'input_required' | 'unknown';

/**
 * A call's end written after the lease of the process running it had lapsed (lease fencing: sql-store.ts
 * `finishCall`): the record keeps the outcome the call really had, and this says what happened meanwhile.
 */
export interface LeaseLapse {
  /** What another process marked the call as while the lease was lapsed (`unknown`), or null when none had. */
  markedAs: { outcome: CallOutcome; crash: { reason: string; message: string } | null } | null;
  /** The same, in a sentence for people. */
  note: string;
}

/**
 * How a call's end was written: `written` as it came; `lease_lapsed` written with the lapse noted (the record
 * has `leaseLapsed`); `gone` not written, the call's record no longer exists (its session was deleted).
 */
export type CallEndWrite = { status: 'written' } | { status: 'gone' } | { status: 'lease_lapsed'; leaseLapsed: LeaseLapse };

/**
 * How a call of a `require_approval` tool was decided, kept with its record for audit. `asked`: through the
 * MCP client's elicitation, or held while someone decides through the API. `decision`: `pending` while held;
 * `approved`; `denied` (a person said no); `expired` (nobody decided by the deadline); `invalid` (the approval
 * the call carried was replayed, altered, forged or for another call); `stopped` (its session went away).
 */
export interface CallApproval {
  id: string;
  asked: 'elicitation' | 'api';
  decision: 'pending' | 'approved' | 'denied' | 'expired' | 'invalid' | 'stopped';
  /** Who decided through the API: the API key's id; null otherwise (a client's person has no identity here). */
  decidedBy: string | null;
  decidedAt: string | null;
  /** Why, in a line, when it was not approved. */
  reason?: string;
}

/** Which entry point made a call: REST, the session's MCP endpoint, or in-process code (the library). */
export type CallVia = 'api' | 'mcp' | 'library';

export interface CallRecord {
  id: string;
  sessionId: string;
  /** Where the call came from: the REST API or the session's MCP endpoint. */
  via: CallVia;
  tool: string;
  arguments: unknown;
  outcome: CallOutcome;
  crash: { reason: string; message: string } | null;
  /** The content blocks the model saw. */
  model: unknown[];
  stderrTail: string;
  egress: EgressRecord[];
  durationMs: number | null;
  startedAt: string;
  /** Present for calls of a `require_approval` tool. */
  approval?: CallApproval;
  /**
   * The platform process that runs the call (platform.ts): while its lease holds, the call is left to it; once
   * the lease runs out, any process marks the call interrupted. Absent on calls recorded before instances were.
   */
  instanceId?: string;
  /** Present when the call's end was written after its process's lease had lapsed (see LeaseLapse). */
  leaseLapsed?: LeaseLapse;
  /**
   * The worker of the fleet that took the call (scale-out), once it ended: its id and host as the worker said
   * when it accepted the call. Absent for calls that ran in the replica's own sandbox, remote MCP and TypeScript
   * tools, and calls no worker took.
   */
  worker?: CallWorker;
  /** The W3C trace context of the request that made the call (`_meta.traceparent`), when it carried a valid one. */
  traceparent?: string;
}

/**
 * An idempotency key of a session's calls: a retried call with the same key (same tool, same arguments) is
 * answered the first call's outcome instead of running again (calls/call-keys.ts).
 */
export interface CallKeyRecord {
  sessionId: string;
  /** The client's key, as it sent it. */
  key: string;
  /** A keyed hash of the first call's tool and arguments: a retry must ask the same. */
  requestHash: string;
  /** The call the key is bound to. */
  callId: string;
  /** That call's result, sealed, once it ended having run; null while it runs. */
  result: string | null;
  createdAt: string;
  /** Past it the key is free again (and pruned). */
  expiresAt: string;
}

/** Which calls a search across sessions keeps; each field given narrows it. */
export interface CallFilter {
  agentId?: string;
  sessionId?: string;
  tool?: string;
  outcome?: CallOutcome;
}

/**
 * How a window of the call log went, counted by the database: calls and errors per time bucket (only buckets
 * with calls), and per tool and per agent their calls, errors and latency percentiles (nearest rank over the
 * calls that ended; null when none has).
 */
export interface CallStats {
  buckets: { start: string; calls: number; errors: number }[];
  byTool: CallStatsRow[];
  byAgent: CallStatsRow[];
}

export interface CallStatsRow {
  key: string;
  calls: number;
  errors: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

/**
 * Which calls a stats query counts: those started at or after `since` (ISO text), bucketed by the first
 * `bucketChars` characters of their start (16: the minute, 13: the hour).
 */
export interface CallStatsQuery {
  since: string;
  bucketChars: 13 | 16;
}

/** A call with the agent of its session (the record itself names only the session). */
export interface AgentCall {
  call: CallRecord;
  agentId: string;
}

export interface IdempotencyRecord {
  /** The key as scoped by the server (caller + method + path + client key). */
  scope: string;
  requestHash: string;
  status: number;
  body: unknown;
  createdAt: string;
}

/**
 * The store, one narrow interface per aggregate: a service takes the ones it uses (a `Pick` of another's where
 * it only asks whether something is in use), and the platform assembles them all as `Store`.
 */
export interface ApiKeyStore {
  addApiKey(rec: ApiKeyRecord): Promise<void>;
  findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  /** Every key ever made, revoked ones included (a data directory with any is not fresh). */
  countApiKeys(): Promise<number>;
  getApiKey(id: string): Promise<ApiKeyRecord | null>;
  /** The records of these keys, in no order; an id that names no key is left out. */
  getApiKeys(ids: readonly string[]): Promise<ApiKeyRecord[]>;
  listApiKeys(page: PageRequest): Promise<Page<ApiKeyRecord>>;
  touchApiKey(id: string, at: string): Promise<void>;
  /** Marks the key revoked, unless it is the last admin key not revoked (then answers false, changing nothing). */
  revokeApiKey(id: string, at: string): Promise<boolean>;
}

/**
 * A version to add: `version: null` asks the store for the next free number, decided inside the transaction
 * that adds it, so two unversioned uploads at once never get the same one.
 */
export type NewPackage = Omit<PackageRecord, 'seq' | 'version'> & { version: string | null };
export type NewSkill = Omit<SkillRecord, 'seq' | 'version'> & { version: string | null };

export interface PackageStore {
  /**
   * Adds a version and gives it the next ordinal; refuses (ConflictError `version_exists`) a version the name
   * has. Unversioned (`version: null`), it is numbered from the latest ordinal up, skipping numbers a manifest took.
   */
  addPackage(rec: NewPackage): Promise<PackageRecord>;
  getPackage(name: string, version: string): Promise<PackageRecord | null>;
  latestPackage(name: string): Promise<PackageRecord | null>;
  listPackages(page: PageRequest): Promise<Page<PackageRecord>>;
  /** Every version of one package, oldest first (empty when there is no such package). */
  packageVersions(name: string): Promise<PackageVersionSummary[]>;
  allPackages(): Promise<PackageRecord[]>;
  deletePackage(name: string, version: string): Promise<void>;
  /** How many package versions hold this digest (the blob is removed when none does). */
  countPackagesWithDigest(digest: string): Promise<number>;
}

export interface SkillStore {
  /** As `addPackage`: immutable versions, unversioned ones numbered inside the transaction. */
  addSkill(rec: NewSkill): Promise<SkillRecord>;
  getSkill(name: string, version: string): Promise<SkillRecord | null>;
  latestSkill(name: string): Promise<SkillRecord | null>;
  listSkills(page: PageRequest): Promise<Page<SkillRecord>>;
  deleteSkill(name: string, version: string): Promise<void>;
}

export interface AgentStore {
  /** Creates the agent and its version 1, with its tool pins, in one transaction. */
  createAgent(rec: AgentRecord, first: AgentVersionRecord, pins?: readonly ToolPin[]): Promise<void>;
  getAgent(id: string): Promise<AgentRecord | null>;
  listAgents(page: PageRequest): Promise<Page<AgentRecord>>;
  /** Appends a version and makes it current, in one transaction. Refuses when `version` is not next. */
  publishAgentVersion(rec: AgentVersionRecord, pins?: readonly ToolPin[]): Promise<void>;
  getAgentVersion(agentId: string, version: number): Promise<AgentVersionRecord | null>;
  /** The remote tool definitions pinned with an agent version, by server then tool (none for an unknown version). */
  getToolPins(agentId: string, version: number): Promise<ToolPin[]>;
  listAgentVersions(agentId: string, page: PageRequest): Promise<Page<AgentVersionRecord>>;
  /** Agent versions whose tools name this package version: `agentId@version` strings. */
  agentVersionsUsingPackage(name: string, version: string): Promise<string[]>;
  agentVersionsUsingSkill(name: string, version: string): Promise<string[]>;
  agentVersionsUsingVault(vaultId: string): Promise<string[]>;
  /** Removes the agent, its versions, its sessions and their calls. */
  deleteAgent(id: string): Promise<void>;
}

export interface VaultStore {
  addVault(rec: VaultRecord): Promise<void>;
  getVault(id: string): Promise<VaultRecord | null>;
  listVaults(page: PageRequest): Promise<Page<VaultRecord>>;
  deleteVault(id: string): Promise<void>;
  addCredential(rec: CredentialRecord): Promise<void>;
  getCredential(vaultId: string, id: string): Promise<CredentialRecord | null>;
  listCredentials(vaultId: string, page: PageRequest): Promise<Page<CredentialRecord>>;
  allCredentials(vaultId: string): Promise<CredentialRecord[]>;
  updateCredential(rec: CredentialRecord): Promise<void>;
  deleteCredential(vaultId: string, id: string): Promise<void>;
}

/** End users, their vaults and their sessions (users.ts). */
export interface UserStore {
  /** Adds a user; refuses (ConflictError `user_exists`) an id taken. */
  addUser(rec: UserRecord): Promise<void>;
  getUser(id: string): Promise<UserRecord | null>;
  listUsers(page: PageRequest): Promise<Page<UserRecord>>;
  updateUser(rec: UserRecord): Promise<void>;
  /**
   * Removes the user, its sessions (and their calls) and its vaults (and their credentials) in one transaction,
   * under the user's lock (as `addUserSession` and `addUserVault` take it), so nothing is added for a user being
   * deleted; answers the ids of the sessions removed, or null when there is no such user.
   */
  deleteUser(id: string): Promise<{ sessionIds: string[] } | null>;
  /** Adds a vault owned by `rec.userId` unless that user no longer exists: answers whether it did. */
  addUserVault(rec: VaultRecord): Promise<boolean>;
  /** Adds a session for `rec.userId` unless that user no longer exists: answers whether it did. */
  addUserSession(rec: SessionRecord): Promise<boolean>;
  /**
   * The live session `rec.userId` has with `rec.agentId` (expiring after `now`), or else `rec` added as that session:
   * in one transaction under the user's lock, so two replicas opening at once for one user and agent agree on one
   * session. Null when the user no longer exists.
   */
  openUserAgentSession(rec: SessionRecord, now: string): Promise<{ session: SessionRecord; created: boolean } | null>;
  listUserVaults(userId: string, page: PageRequest): Promise<Page<VaultRecord>>;
  /** The ids of every vault the user owns, oldest first. */
  userVaultIds(userId: string): Promise<string[]>;
  listUserSessions(userId: string, page: PageRequest): Promise<Page<SessionRecord>>;
  /** The records of these vaults, in no order; an id that names no vault is left out. */
  getVaults(ids: readonly string[]): Promise<VaultRecord[]>;
}

export interface SessionStore {
  addSession(rec: SessionRecord): Promise<void>;
  getSession(id: string): Promise<SessionRecord | null>;
  findSessionByTokenHash(hash: string): Promise<SessionRecord | null>;
  listSessions(agentId: string, page: PageRequest): Promise<Page<SessionRecord>>;
  expiredSessions(now: string): Promise<SessionRecord[]>;
  sessionsUsingVault(vaultId: string): Promise<string[]>;
  /** Removes the session and its call records. */
  deleteSession(id: string): Promise<void>;
}

export interface CallStore {
  /** Records a call as it starts, with the epoch of its process's lease (`instanceId`) as the database has it now. */
  addCall(rec: CallRecord): Promise<void>;
  /**
   * Writes a call's end, fenced by the lease it began under: when that lease lapsed since (another process may
   * have marked the call `unknown`), the end is still written — it is what really happened — with the lapse
   * noted (`lease_lapsed`). Writing the same end again (a retry of a write whose answer was lost) changes nothing.
   */
  finishCall(rec: CallRecord): Promise<CallEndWrite>;
  /**
   * Records a call that was never recorded as running, whole, as it ended: one write. `gone` when its session no
   * longer exists. When a record of it does exist (a `running` record whose write's answer was lost, or this same
   * write again), its end is written as `finishCall` writes it.
   */
  recordEndedCall(rec: CallRecord): Promise<CallEndWrite>;
  getCall(sessionId: string, id: string): Promise<CallRecord | null>;
  listCalls(sessionId: string, page: PageRequest): Promise<Page<CallRecord>>;
  /** Calls of every session, newest first: `page.after` continues from a previous page's cursor. */
  findCalls(filter: CallFilter, page: PageRequest): Promise<Page<AgentCall>>;
  findCall(id: string): Promise<AgentCall | null>;
  /** Counts and latency percentiles of the calls started in a window (CallStats). */
  callStats(query: CallStatsQuery): Promise<CallStats>;
}

/** A call's place in its agent's and session's fleet-wide concurrency (store `takeCallSlot`). */
export interface CallSlot {
  callId: string;
  agentId: string;
  sessionId: string;
  instanceId: string;
}

/** What the processes sharing one database agree on: whose calls still run, settings claimed once, turns. */
export interface InstanceStore {
  /**
   * Starts or renews a platform process's lease: it holds for `leaseMs` from now, "now" being the database's
   * clock, so replicas whose own clocks disagree still agree on whose lease has run out. Answers the lease's
   * epoch: the same while it is renewed in time, a new one when it is taken afresh after it lapsed.
   */
  renewInstanceLease(instanceId: string, leaseMs: number): Promise<string>;
  /**
   * Marks as `unknown` (crash reason `interrupted`) the calls left `running` by processes whose lease has run out
   * (or that name none, from before leases), and drops the leases that ran out; returns how many calls.
   */
  interruptOrphanedCalls(): Promise<number>;
  /** A clean close: the process's calls still `running` are marked `unknown` and its lease is dropped; returns how many calls. */
  releaseInstance(instanceId: string): Promise<number>;
  /**
   * Takes a slot for a call of `agentId`'s session `sessionId`, run by process `instanceId`, when fewer than
   * `agentLimit` slots of the agent and fewer than `sessionLimit` of the session count now (across every
   * process on the database); answers whether it took one. Decided under the agent's lock, so two replicas
   * racing for the agent's last slot take turns. The slot lapses after `holdMs`, or as soon as the process's
   * lease does (a replica that died).
   */
  takeCallSlot(slot: CallSlot, limits: { agent: number; session: number }, holdMs: number): Promise<boolean>;
  /** Gives a call's slot back (nothing when it has none). */
  dropCallSlot(callId: string): Promise<void>;
  /** A setting's value, written first when the database has none: the first writer's value is the one kept and answered. */
  claimSetting(name: string, value: string): Promise<string>;
  /**
   * Runs `work` while no other process on this database runs work under the same `name` (PostgreSQL: an
   * advisory lock; SQLite has one process, so it takes turns within it).
   */
  exclusively<T>(name: string, work: () => Promise<T>): Promise<T>;
}

export interface IdempotencyStore {
  getIdempotent(scope: string): Promise<IdempotencyRecord | null>;
  putIdempotent(rec: IdempotencyRecord): Promise<void>;
  pruneIdempotent(olderThan: string): Promise<void>;
}

/** Calls' idempotency keys, shared by the replicas (calls/call-keys.ts). */
export interface CallKeyStore {
  /**
   * Binds a key to a call about to start, unless the key is bound already and not expired at `now` (an expired
   * one is taken over) or the session no longer exists: answers whether it was bound. Of two claims at once,
   * on any replicas, exactly one wins.
   */
  claimCallKey(rec: Omit<CallKeyRecord, 'result'>, now: string): Promise<boolean>;
  getCallKey(sessionId: string, key: string): Promise<CallKeyRecord | null>;
  /**
   * Rebinds a key from a call that was never recorded (its claim outlived it: the call was refused and the
   * claim could not be given back) to a new one; answers whether it did. A call with a record keeps its key.
   */
  takeOverCallKey(sessionId: string, key: string, fromCallId: string, to: Pick<CallKeyRecord, 'callId' | 'createdAt' | 'expiresAt'>): Promise<boolean>;
  /** Keeps the bound call's result (sealed): retries are answered it from now on. */
  settleCallKey(sessionId: string, key: string, callId: string, result: string): Promise<void>;
  /** Frees the key of a call that ended without its tool running, so that a retry runs. */
  releaseCallKey(sessionId: string, key: string, callId: string): Promise<void>;
  /** Forgets keys that expired by `now`. */
  pruneCallKeys(now: string): Promise<void>;
}

/** Approvals, shared by the replicas (approvals.ts). */
export interface ApprovalStore {
  /**
   * An approval is *open* while it is undecided, not past its expiry, and its call is still `running`: a call
   * whose holder died is marked interrupted (interruptOrphanedCalls), and its approval is then no longer open,
   * whoever's process it was.
   *
   * Records a call held for a decision, unless its session already has `maxPerSession` open or no longer
   * exists (deleted at that moment): answers whether it was recorded. (Its call's record follows it; it counts, and is listed, from then on.)
   */
  holdApproval(rec: HeldApprovalRecord, maxPerSession: number, now: string): Promise<boolean>;
  getApproval(id: string): Promise<HeldApprovalRecord | null>;
  /** The approvals open at `now`, of one session or of all, oldest first, a page at a time. */
  pendingApprovals(now: string, page: PageRequest, sessionId?: string): Promise<Page<HeldApprovalRecord>>;
  /**
   * Decides an undecided approval in one conditional write, so that of two deciders (on two replicas) exactly
   * one wins: answers whether this decision is the one. `only.sessionId`: it must belong to that session;
   * `only.openAt`: it must be open at that time (a person's decision; its holder's own endings need not).
   */
  decideApproval(id: string, decision: ApprovalDecision, only?: { sessionId?: string; openAt?: string }): Promise<boolean>;
  /** Of these approvals, those decided (with their record) or gone (null: their session was deleted). */
  settledApprovals(ids: readonly string[]): Promise<{ id: string; record: HeldApprovalRecord | null }[]>;
  /**
   * Spends an elicited approval's id: answers true the first time, on whichever replica, and false ever after
   * (until it is pruned, which is after it expired). `expiresAt`: when the approval stops being good anyway.
   */
  redeemApproval(id: string, expiresAt: string): Promise<boolean>;
  /** Forgets approvals and spent approval ids whose expiry is before `expiredBefore`. */
  pruneApprovals(expiredBefore: string): Promise<void>;
}

/** Everything the platform remembers: every aggregate's store, on one database. */
export interface Store
  extends ApiKeyStore, PackageStore, SkillStore, AgentStore, VaultStore, UserStore, SessionStore, CallStore, CallKeyStore, InstanceStore, IdempotencyStore, ApprovalStore, TaskStore {
  /** Resolves once the database answered a trivial query (the health check's). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** How a held approval ended, as the replicas share it. */
export interface ApprovalDecision {
  decision: 'approved' | 'denied' | 'expired' | 'stopped';
  decidedBy: string | null;
  decidedAt: string;
  reason: string | null;
}

/**
 * A call held for a person's decision through the API, in the store so that every replica lists it and any can
 * decide it; the replica whose caller waits (`holder`) runs it once approved.
 */
export interface HeldApprovalRecord {
  id: string;
  sessionId: string;
  /** The call record that waits for it. */
  callId: string;
  tool: string;
  /**
   * As an approver is shown them (approval-view.ts): exactly the call's arguments, but for the session's vault
   * secrets, hidden by value at the places `hiddenSecrets` lists (JSON Pointers).
   */
  arguments: unknown;
  hiddenSecrets: string[];
  createdAt: string;
  expiresAt: string;
  /** The process holding the call (a replica's instance id): where its caller waits. */
  holder: string;
  /** Null while pending. */
  decision: ApprovalDecision['decision'] | null;
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
}
