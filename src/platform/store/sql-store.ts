/**
 * The Store, once, over either database (sql-database.ts): SQLite embedded, PostgreSQL for replicas. It holds
 * the rules (what runs in one transaction, how versions are numbered, how pages and cursors go) and no SQL:
 * the statements are statements.ts's, written once for both, with the dialect's pieces where they differ.
 */
import { ConflictError } from '../errors.js';
import { CALL_SEARCH_FILTERS, callSearch, statementsFor, type PageStatements, type Statements } from './statements.js';
import { all, get, run, type Program, type SqlDatabase } from './sql-database.js';
import {
  INTERRUPTED_CRASH, agentVersionRefs, decodeCursor, encodeCursor, json, jsonOrNull, leaseLapse, listKey, pageFromRows, s, toAgent, toAgentVersion, toApiKey, toToolPin,
  toCall, toCallKey, toCredential, toHeldApproval, toIdempotency, toPackage, toSession, toSkill, toTask, toUser, toVault, versionRef, type Row,
} from './store-rows.js';
import { newId } from '../ids.js';
import { taskStatementsFor, type TaskStatements } from './task-statements.js';
import type { StoredTask, TaskChange, TaskRecord, TaskStatus } from './task-store.js';
import type {
  AgentCall, AgentRecord, AgentVersionRecord, ApiKeyRecord, ApprovalDecision, CallEndWrite, CallSlot, CallStats, CallStatsQuery, CallStatsRow, CallFilter, CallKeyRecord, CallOutcome, CallRecord, CredentialRecord,
  HeldApprovalRecord, IdempotencyRecord, NewPackage, NewSkill, PackageRecord, PackageVersionSummary, Page, PageRequest, SessionRecord, SkillRecord, Store,
  ToolPin, UserRecord, VaultRecord,
} from './store.js';

export class SqlStore<Db extends SqlDatabase = SqlDatabase> implements Store {
  protected readonly sql: Statements;
  private readonly taskSql: TaskStatements;

  constructor(protected readonly db: Db) {
    this.sql = statementsFor(db.dialect);
    this.taskSql = taskStatementsFor(db.dialect);
  }

  // ---- tasks (task-store.ts)
  async addTask(rec: TaskRecord): Promise<boolean> {
    return (await this.db.run(this.taskSql.insert, [rec.id, rec.sessionId, rec.tool, rec.status, rec.statusMessage, rec.createdAt, rec.updatedAt, rec.expiresAt,
      rec.ttlMs, rec.pollIntervalMs, rec.owner, rec.outcome, rec.pending, rec.upstream, rec.sessionId])) === 1;
  }
  getTask(sessionId: string, id: string): Promise<StoredTask | null> {
    return this.one(this.taskSql.byId, [id, sessionId], toTask);
  }
  async changeTask(id: string, change: TaskChange, from?: TaskStatus): Promise<boolean> {
    return (await this.db.run(this.taskSql.change, [change.status, change.statusMessage, change.outcome, change.pending, change.at, change.owner ?? null,
      id, from ?? null, from ?? null])) === 1;
  }
  async endedTasks(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    return (await this.db.all(this.taskSql.ended, [JSON.stringify(ids)])).map((row) => s(row.id));
  }
  pruneTasks(now: string): Promise<number> {
    return this.db.run(this.taskSql.prune, [now]);
  }
  async liveTasks(sessionId: string, now: string): Promise<number> {
    return Number((await this.db.get(this.taskSql.live, [sessionId, now]))?.n ?? 0);
  }

  async ping(): Promise<void> {
    await this.db.get(this.sql.ping);
  }

  // ---- api keys
  async addApiKey(rec: ApiKeyRecord): Promise<void> {
    await this.db.run(this.sql.apiKeys.insert, [rec.id, rec.name, rec.hash, rec.prefix, rec.scope, rec.createdAt, rec.lastUsedAt, rec.revokedAt]);
  }
  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    return this.one(this.sql.apiKeys.byHash, [hash], toApiKey);
  }
  async countApiKeys(): Promise<number> {
    return Number((await this.db.get(this.sql.apiKeys.count))?.n);
  }
  async getApiKey(id: string): Promise<ApiKeyRecord | null> {
    return this.one(this.sql.apiKeys.byId, [id], toApiKey);
  }
  async getApiKeys(ids: readonly string[]): Promise<ApiKeyRecord[]> {
    if (ids.length === 0) return [];
    return (await this.db.all(this.sql.apiKeys.byIds, [JSON.stringify(ids)])).map(toApiKey);
  }
  listApiKeys(page: PageRequest): Promise<Page<ApiKeyRecord>> {
    return this.page(this.sql.apiKeys.pages, [], page, toApiKey);
  }
  async touchApiKey(id: string, at: string): Promise<void> {
    await this.db.run(this.sql.apiKeys.touch, [at, id]);
  }
  revokeApiKey(id: string, at: string): Promise<boolean> {
    const { apiKeys } = this.sql;
    return this.db.transaction(function* () {
      const admins = yield* all(apiKeys.adminsInForce);
      const key = yield* get(apiKeys.standing, [id]);
      if (!key || key.revoked_at !== null) return true;
      if (key.scope === 'admin' && admins.length <= 1) return false;
      yield* run(apiKeys.revoke, [at, id]);
      return true;
    });
  }

  // ---- packages
  addPackage(rec: NewPackage): Promise<PackageRecord> {
    const { sql, db } = this;
    return db.transaction(function* () {
      const { version, seq } = yield* claimVersion(sql.packages, db.dialect.lockUntilCommit, 'package', rec.name, rec.version);
      yield* run(sql.packages.insert, [rec.name, version, seq, rec.description, rec.digest, json(rec.manifest), json(rec.tools), rec.createdAt,
        listKey(rec.name, seq, db.dialect.listKeySeparator)]);
      return { ...rec, version, seq };
    });
  }
  getPackage(name: string, version: string): Promise<PackageRecord | null> {
    return this.one(this.sql.packages.byVersion, [name, version], toPackage);
  }
  latestPackage(name: string): Promise<PackageRecord | null> {
    return this.one(this.sql.packages.latest, [name], toPackage);
  }
  listPackages(page: PageRequest): Promise<Page<PackageRecord>> {
    return this.page(this.sql.packages.pages, [], page, toPackage);
  }
  async packageVersions(name: string): Promise<PackageVersionSummary[]> {
    return (await this.db.all(this.sql.packages.summaries, [name])).map((row) => ({
      name: s(row.name), version: s(row.version), seq: Number(row.seq), description: s(row.description),
      digest: s(row.digest), createdAt: s(row.created_at),
    }));
  }
  async allPackages(): Promise<PackageRecord[]> {
    return (await this.db.all(this.sql.packages.all)).map(toPackage);
  }
  async deletePackage(name: string, version: string): Promise<void> {
    await this.db.run(this.sql.packages.delete, [name, version]);
  }
  async countPackagesWithDigest(digest: string): Promise<number> {
    return Number((await this.db.get(this.sql.packages.withDigest, [digest]))?.n);
  }

  // ---- skills
  addSkill(rec: NewSkill): Promise<SkillRecord> {
    const { sql, db } = this;
    return db.transaction(function* () {
      const { version, seq } = yield* claimVersion(sql.skills, db.dialect.lockUntilCommit, 'skill', rec.name, rec.version);
      yield* run(sql.skills.insert, [rec.name, version, seq, rec.description, rec.digest, rec.createdAt, listKey(rec.name, seq, db.dialect.listKeySeparator)]);
      return { ...rec, version, seq };
    });
  }
  getSkill(name: string, version: string): Promise<SkillRecord | null> {
    return this.one(this.sql.skills.byVersion, [name, version], toSkill);
  }
  latestSkill(name: string): Promise<SkillRecord | null> {
    return this.one(this.sql.skills.latest, [name], toSkill);
  }
  listSkills(page: PageRequest): Promise<Page<SkillRecord>> {
    return this.page(this.sql.skills.pages, [], page, toSkill);
  }
  async deleteSkill(name: string, version: string): Promise<void> {
    await this.db.run(this.sql.skills.delete, [name, version]);
  }

  // ---- agents
  async createAgent(rec: AgentRecord, first: AgentVersionRecord, pins: readonly ToolPin[] = []): Promise<void> {
    const { agents } = this.sql;
    await this.db.transaction(function* () {
      yield* run(agents.insert, [rec.id, rec.name, first.version, rec.createdAt, rec.updatedAt]);
      yield* insertAgentVersion(agents, first, pins);
    });
  }
  getAgent(id: string): Promise<AgentRecord | null> {
    return this.one(this.sql.agents.byId, [id], toAgent);
  }
  listAgents(page: PageRequest): Promise<Page<AgentRecord>> {
    return this.page(this.sql.agents.pages, [], page, toAgent);
  }
  async publishAgentVersion(rec: AgentVersionRecord, pins: readonly ToolPin[] = []): Promise<void> {
    const { agents } = this.sql;
    await this.db.transaction(function* () {
      const current = yield* get(agents.currentVersion, [rec.agentId]);
      if (!current) throw new ConflictError(`agent ${rec.agentId} no longer exists`);
      if (Number(current.current_version) + 1 !== rec.version) {
        throw new ConflictError(`agent ${rec.agentId} changed meanwhile (now at version ${String(current.current_version)}); retry`);
      }
      yield* insertAgentVersion(agents, rec, pins);
      yield* run(agents.publish, [rec.version, rec.spec.name, rec.createdAt, rec.agentId]);
    });
  }
  getAgentVersion(agentId: string, version: number): Promise<AgentVersionRecord | null> {
    return this.one(this.sql.agents.version, [agentId, version], toAgentVersion);
  }
  async getToolPins(agentId: string, version: number): Promise<ToolPin[]> {
    return (await this.db.all(this.sql.agents.pins, [agentId, version])).map(toToolPin);
  }
  async listAgentVersions(agentId: string, page: PageRequest): Promise<Page<AgentVersionRecord>> {
    const rows = await this.db.all(this.sql.agents.versionsAfter, [agentId, page.after ? Number(page.after) || 0 : 0, page.limit + 1]);
    return pageFromRows(rows, page, toAgentVersion, (row) => String(row.version));
  }
  agentVersionsUsingPackage(name: string, version: string): Promise<string[]> {
    return this.usersOf('package', versionRef(name, version));
  }
  agentVersionsUsingSkill(name: string, version: string): Promise<string[]> {
    return this.usersOf('skill', versionRef(name, version));
  }
  agentVersionsUsingVault(vaultId: string): Promise<string[]> {
    return this.usersOf('vault', vaultId);
  }
  private async usersOf(kind: string, ref: string): Promise<string[]> {
    return (await this.db.all(this.sql.agents.usersOf, [kind, ref])).map((r) => `${s(r.agent_id)}@${String(r.version)}`);
  }
  async deleteAgent(id: string): Promise<void> {
    const { agents } = this.sql;
    await this.db.transaction(function* () {
      for (const statement of [agents.deleteRefs, agents.deletePins, agents.deleteCalls, agents.deleteSessions, agents.deleteVersions, agents.delete]) {
        yield* run(statement, [id]);
      }
    });
  }

  // ---- vaults and credentials
  async addVault(rec: VaultRecord): Promise<void> {
    await this.db.run(this.sql.vaults.insert, [rec.id, rec.name, rec.userId, rec.createdAt]);
  }
  async getVaults(ids: readonly string[]): Promise<VaultRecord[]> {
    if (ids.length === 0) return [];
    return (await this.db.all(this.sql.vaults.byIds, [JSON.stringify(ids)])).map(toVault);
  }
  getVault(id: string): Promise<VaultRecord | null> {
    return this.one(this.sql.vaults.byId, [id], toVault);
  }
  listVaults(page: PageRequest): Promise<Page<VaultRecord>> {
    return this.page(this.sql.vaults.pages, [], page, toVault);
  }
  async deleteVault(id: string): Promise<void> {
    const { vaults } = this.sql;
    await this.db.transaction(function* () {
      yield* run(vaults.deleteCredentials, [id]);
      yield* run(vaults.delete, [id]);
    });
  }
  async addCredential(rec: CredentialRecord): Promise<void> {
    await this.db.run(this.sql.vaults.insertCredential, [rec.id, rec.vaultId, rec.target, rec.displayName, rec.scheme, rec.sealed, rec.expiresAt,
      rec.createdAt, rec.updatedAt]);
  }
  getCredential(vaultId: string, id: string): Promise<CredentialRecord | null> {
    return this.one(this.sql.vaults.credential, [vaultId, id], toCredential);
  }
  listCredentials(vaultId: string, page: PageRequest): Promise<Page<CredentialRecord>> {
    return this.page(this.sql.vaults.credentialPages, [vaultId], page, toCredential);
  }
  async allCredentials(vaultId: string): Promise<CredentialRecord[]> {
    return (await this.db.all(this.sql.vaults.credentials, [vaultId])).map(toCredential);
  }
  async updateCredential(rec: CredentialRecord): Promise<void> {
    await this.db.run(this.sql.vaults.updateCredential, [rec.target, rec.displayName, rec.scheme, rec.sealed, rec.expiresAt, rec.updatedAt,
      rec.vaultId, rec.id]);
  }
  async deleteCredential(vaultId: string, id: string): Promise<void> {
    await this.db.run(this.sql.vaults.deleteCredential, [vaultId, id]);
  }

  // ---- users: what is added for a user, and the user's deletion, take the user's lock (one at a time across replicas)
  async addUser(rec: UserRecord): Promise<void> {
    const { users } = this.sql;
    const added = await this.db.transaction(function* () {
      if (yield* get(users.byId, [rec.id])) return false;
      yield* run(users.insert, [rec.id, rec.displayName, rec.email, rec.createdAt, rec.updatedAt]);
      return true;
    }).catch(async (err: unknown) => {
      // Two creations at once on two replicas: the loser meets the primary key; the user is there either way.
      if (await this.getUser(rec.id)) return false;
      throw err;
    });
    if (!added) throw new ConflictError(`user ${rec.id} exists already; choose another id, or change its fields with PATCH /v1/users/{id}`, 'user_exists');
  }
  getUser(id: string): Promise<UserRecord | null> {
    return this.one(this.sql.users.byId, [id], toUser);
  }
  listUsers(page: PageRequest): Promise<Page<UserRecord>> {
    return this.page(this.sql.users.pages, [], page, toUser);
  }
  async updateUser(rec: UserRecord): Promise<void> {
    await this.db.run(this.sql.users.update, [rec.displayName, rec.email, rec.updatedAt, rec.id]);
  }
  deleteUser(id: string): Promise<{ sessionIds: string[] } | null> {
    const { users } = this.sql;
    const lock = this.db.dialect.lockUntilCommit;
    return this.db.transaction(function* () {
      if (lock !== null) yield* run(lock, [userLock(id)]);
      if (!(yield* get(users.byId, [id]))) return null;
      const sessionIds = (yield* all(users.sessionIds, [id])).map((r) => s(r.id));
      for (const statement of [users.deleteCalls, users.deleteSessions, users.deleteCredentials, users.deleteVaults, users.delete]) {
        yield* run(statement, [id]);
      }
      return { sessionIds };
    });
  }
  addUserVault(rec: VaultRecord): Promise<boolean> {
    const { users, vaults } = this.sql;
    return this.forLiveUser(rec.userId, users.byId, [vaults.insert, [rec.id, rec.name, rec.userId, rec.createdAt]]);
  }
  addUserSession(rec: SessionRecord): Promise<boolean> {
    const { users, sessions } = this.sql;
    return this.forLiveUser(rec.userId, users.byId, [sessions.insert, sessionRow(rec)]);
  }
  openUserAgentSession(rec: SessionRecord, now: string): Promise<{ session: SessionRecord; created: boolean } | null> {
    const { users, sessions, userAgentSessions } = this.sql;
    const userId = rec.userId;
    if (userId === null) throw new Error('a user\'s session names its user');
    const lock = this.db.dialect.lockUntilCommit;
    return this.db.transaction(function* () {
      if (lock !== null) yield* run(lock, [userLock(userId)]);
      if (!(yield* get(users.byId, [userId]))) return null;
      const live = yield* get(userAgentSessions.live, [userId, rec.agentId, now]);
      if (live) return { session: toSession(live), created: false };
      yield* run(sessions.insert, sessionRow(rec));
      yield* run(userAgentSessions.put, [userId, rec.agentId, rec.id]);
      return { session: rec, created: true };
    });
  }
  /** Runs one insert for a user, under the user's lock, only while the user exists: answers whether it ran. */
  private forLiveUser(userId: string | null, userById: string, [insert, params]: [string, unknown[]]): Promise<boolean> {
    if (userId === null) throw new Error('a user\'s vault or session names its user');
    const lock = this.db.dialect.lockUntilCommit;
    return this.db.transaction(function* () {
      if (lock !== null) yield* run(lock, [userLock(userId)]);
      if (!(yield* get(userById, [userId]))) return false;
      yield* run(insert, params);
      return true;
    });
  }
  listUserVaults(userId: string, page: PageRequest): Promise<Page<VaultRecord>> {
    return this.page(this.sql.users.vaultPages, [userId], page, toVault);
  }
  async userVaultIds(userId: string): Promise<string[]> {
    return (await this.db.all(this.sql.users.vaultIds, [userId])).map((r) => s(r.id));
  }
  listUserSessions(userId: string, page: PageRequest): Promise<Page<SessionRecord>> {
    return this.page(this.sql.users.sessionPages, [userId], page, toSession);
  }

  // ---- sessions
  async addSession(rec: SessionRecord): Promise<void> {
    await this.db.run(this.sql.sessions.insert, sessionRow(rec));
  }
  getSession(id: string): Promise<SessionRecord | null> {
    return this.one(this.sql.sessions.byId, [id], toSession);
  }
  findSessionByTokenHash(hash: string): Promise<SessionRecord | null> {
    return this.one(this.sql.sessions.byTokenHash, [hash], toSession);
  }
  listSessions(agentId: string, page: PageRequest): Promise<Page<SessionRecord>> {
    return this.page(this.sql.sessions.pages, [agentId], page, toSession);
  }
  async expiredSessions(now: string): Promise<SessionRecord[]> {
    return (await this.db.all(this.sql.sessions.expired, [now])).map(toSession);
  }
  async sessionsUsingVault(vaultId: string): Promise<string[]> {
    return (await this.db.all(this.sql.sessions.usingVault, [vaultId])).map((r) => s(r.id));
  }
  async deleteSession(id: string): Promise<void> {
    const { sessions } = this.sql;
    await this.db.transaction(function* () {
      yield* run(sessions.deleteCalls, [id]);
      yield* run(sessions.delete, [id]);
    });
  }

  // ---- calls: the call log writes on every call, through the database's `write` (batched on SQLite)
  async addCall(rec: CallRecord): Promise<void> {
    await this.db.write(this.sql.calls.insert, [rec.id, rec.sessionId, rec.via, rec.tool, json(rec.arguments), rec.outcome, jsonOrNull(rec.crash),
      json(rec.model), rec.stderrTail, json(rec.egress), rec.durationMs, rec.startedAt, jsonOrNull(rec.approval), rec.instanceId ?? null, rec.traceparent ?? null,
      rec.instanceId ?? null]);
  }
  async recordEndedCall(rec: CallRecord): Promise<CallEndWrite> {
    const inserted = await this.db.write(this.sql.calls.insertEnded, [rec.id, rec.sessionId, rec.via, rec.tool, json(rec.arguments), rec.outcome,
      jsonOrNull(rec.crash), json(rec.model), rec.stderrTail, json(rec.egress), rec.durationMs, rec.startedAt, jsonOrNull(rec.approval), rec.instanceId ?? null,
      rec.traceparent ?? null, rec.worker?.id ?? null, rec.worker?.host ?? null, rec.instanceId ?? null, rec.sessionId]);
    if (inserted === 1) return { status: 'written' };
    // Not inserted: a record of it exists (its end is written as any end is, fenced) or its session is gone (`gone`).
    return this.finishCall(rec);
  }
  async finishCall(rec: CallRecord): Promise<CallEndWrite> {
    const { calls } = this.sql;
    const end = [rec.outcome, jsonOrNull(rec.crash), json(rec.model), rec.stderrTail, json(rec.egress), rec.durationMs, jsonOrNull(rec.approval),
      rec.worker?.id ?? null, rec.worker?.host ?? null];
    // The way of nearly every call: one statement, batched with the others of its turn on SQLite.
    if (await this.db.write(calls.finish, [...end, rec.id]) === 1) return { status: 'written' };
    // The call is not running under the lease it began under: it is gone, or ended already, or its lease lapsed.
    return this.db.transaction(function* () {
      const row = yield* get(calls.endState, [rec.id]);
      if (!row) return { status: 'gone' } as CallEndWrite;
      // Only the end write gives a duration (a mark for a lapsed lease does not): this end landed before, its
      // answer lost (the outbox writes it again).
      if (row.duration_ms !== null) return { status: 'written' } as CallEndWrite;
      const markedAs = row.outcome === 'running' ? null : { outcome: s(row.outcome) as CallOutcome, crash: row.crash === null ? null : JSON.parse(s(row.crash)) };
      const leaseLapsed = leaseLapse(markedAs);
      yield* run(calls.finishLapsed, [...end, json(leaseLapsed), rec.id]);
      return { status: 'lease_lapsed', leaseLapsed } as CallEndWrite;
    });
  }
  getCall(sessionId: string, id: string): Promise<CallRecord | null> {
    return this.one(this.sql.calls.inSession, [sessionId, id], toCall);
  }
  listCalls(sessionId: string, page: PageRequest): Promise<Page<CallRecord>> {
    return this.page(this.sql.calls.pages, [sessionId], page, toCall);
  }
  async findCalls(filter: CallFilter, page: PageRequest): Promise<Page<AgentCall>> {
    const given = { ...filter, before: page.after };
    const filters = (Object.keys(CALL_SEARCH_FILTERS) as (keyof typeof CALL_SEARCH_FILTERS)[]).filter((f) => given[f] !== undefined);
    const rows = await this.db.all(callSearch(filters), [...filters.map((f) => given[f]), page.limit + 1]);
    return pageFromRows(rows, page, toAgentCall, (row) => s(row.id));
  }
  findCall(id: string): Promise<AgentCall | null> {
    return this.one(this.sql.calls.withAgent, [id], toAgentCall);
  }
  async callStats(query: CallStatsQuery): Promise<CallStats> {
    const { calls } = this.sql;
    // Counts come back as numbers (SQLite) or as text (PostgreSQL's bigint): read as numbers either way.
    const statsRow = (row: Row): CallStatsRow => ({
      key: s(row.k), calls: Number(row.calls), errors: Number(row.errors ?? 0),
      p50Ms: row.p50 === null || row.p50 === undefined ? null : Number(row.p50),
      p95Ms: row.p95 === null || row.p95 === undefined ? null : Number(row.p95),
    });
    const [buckets, byTool, byAgent] = await Promise.all([
      this.db.all(calls.statsBuckets, [query.bucketChars, query.since]),
      this.db.all(calls.statsByTool, [query.since]),
      this.db.all(calls.statsByAgent, [query.since]),
    ]);
    return {
      buckets: buckets.map((row) => ({ start: s(row.bucket), calls: Number(row.calls), errors: Number(row.errors ?? 0) })),
      byTool: byTool.map(statsRow),
      byAgent: byAgent.map(statsRow),
    };
  }

  // ---- instances, settings and exclusive work: one process on SQLite, several on PostgreSQL, the same rules
  async renewInstanceLease(instanceId: string, leaseMs: number): Promise<string> {
    return s((await this.db.get(this.sql.instances.renew, [instanceId, leaseMs, newId('epoch')]))?.epoch);
  }
  interruptOrphanedCalls(): Promise<number> {
    const { instances, callSlots } = this.sql;
    // One transaction: on PostgreSQL now() is then one instant for both statements.
    return this.db.transaction(function* () {
      const interrupted = yield* run(instances.interruptOrphans, [INTERRUPTED_CRASH]);
      yield* run(callSlots.dropLapsed);
      yield* run(instances.dropExpired);
      return interrupted;
    });
  }
  releaseInstance(instanceId: string): Promise<number> {
    const { instances } = this.sql;
    return this.db.transaction(function* () {
      const interrupted = yield* run(instances.interruptOf, [INTERRUPTED_CRASH, instanceId]);
      yield* run(instances.drop, [instanceId]);
      return interrupted;
    });
  }
  takeCallSlot(slot: CallSlot, limits: { agent: number; session: number }, holdMs: number): Promise<boolean> {
    const { callSlots } = this.sql;
    const lock = this.db.dialect.lockUntilCommit;
    return this.db.transaction(function* () {
      // The agent's lock: its sessions' slots are counted and taken by one process at a time.
      if (lock !== null) yield* run(lock, [`call-slots:${slot.agentId}`]);
      const taken = yield* run(callSlots.take, [
        slot.callId, slot.agentId, slot.sessionId, slot.instanceId, holdMs, slot.agentId, limits.agent, slot.sessionId, limits.session,
      ]);
      return taken === 1;
    });
  }
  async dropCallSlot(callId: string): Promise<void> {
    await this.db.run(this.sql.callSlots.drop, [callId]);
  }
  async claimSetting(name: string, value: string): Promise<string> {
    await this.db.run(this.sql.instances.claimSetting, [name, value]);
    return s((await this.db.get(this.sql.instances.setting, [name]))?.value);
  }
  exclusively<T>(name: string, work: () => Promise<T>): Promise<T> {
    return this.db.exclusively(name, work);
  }

  // ---- idempotency
  getIdempotent(scope: string): Promise<IdempotencyRecord | null> {
    return this.one(this.sql.idempotency.byScope, [scope], toIdempotency);
  }
  async putIdempotent(rec: IdempotencyRecord): Promise<void> {
    await this.db.run(this.sql.idempotency.put, [rec.scope, rec.requestHash, rec.status, json(rec.body ?? null), rec.createdAt]);
  }
  async pruneIdempotent(olderThan: string): Promise<void> {
    await this.db.run(this.sql.idempotency.prune, [olderThan]);
  }

  // ---- calls' idempotency keys
  async claimCallKey(rec: Omit<CallKeyRecord, 'result'>, now: string): Promise<boolean> {
    return (await this.db.run(this.sql.callKeys.claim, [rec.sessionId, rec.key, rec.requestHash, rec.callId, rec.createdAt, rec.expiresAt,
      rec.sessionId, now])) === 1;
  }
  getCallKey(sessionId: string, key: string): Promise<CallKeyRecord | null> {
    return this.one(this.sql.callKeys.byKey, [sessionId, key], toCallKey);
  }
  async takeOverCallKey(sessionId: string, key: string, fromCallId: string, to: Pick<CallKeyRecord, 'callId' | 'createdAt' | 'expiresAt'>): Promise<boolean> {
    return (await this.db.run(this.sql.callKeys.takeOver, [to.callId, to.createdAt, to.expiresAt, sessionId, key, fromCallId])) === 1;
  }
  async settleCallKey(sessionId: string, key: string, callId: string, result: string): Promise<void> {
    await this.db.run(this.sql.callKeys.settle, [result, sessionId, key, callId]);
  }
  async releaseCallKey(sessionId: string, key: string, callId: string): Promise<void> {
    await this.db.run(this.sql.callKeys.release, [sessionId, key, callId]);
  }
  async pruneCallKeys(now: string): Promise<void> {
    await this.db.run(this.sql.callKeys.prune, [now]);
  }

  // ---- approvals, shared by the replicas
  async holdApproval(rec: HeldApprovalRecord, maxPerSession: number, now: string): Promise<boolean> {
    return (await this.db.run(this.sql.approvals.hold, [rec.id, rec.sessionId, rec.callId, rec.tool, json(rec.arguments), json(rec.hiddenSecrets),
      rec.createdAt, rec.expiresAt, rec.holder, rec.decision, rec.decidedBy, rec.decidedAt, rec.reason,
      rec.sessionId, now, maxPerSession, rec.sessionId])) === 1;
  }
  getApproval(id: string): Promise<HeldApprovalRecord | null> {
    return this.one(this.sql.approvals.byId, [id], toHeldApproval);
  }
  async pendingApprovals(now: string, page: PageRequest, sessionId?: string): Promise<Page<HeldApprovalRecord>> {
    const rows = await this.db.all(this.sql.approvals.pending,
      [now, sessionId ?? null, sessionId ?? null, page.after ?? null, page.after ?? null, page.limit + 1]);
    return pageFromRows(rows, page, toHeldApproval, (row) => s(row.id));
  }
  async decideApproval(id: string, decision: ApprovalDecision, only: { sessionId?: string; openAt?: string } = {}): Promise<boolean> {
    return (await this.db.run(this.sql.approvals.decide, [decision.decision, decision.decidedBy, decision.decidedAt, decision.reason, id,
      only.sessionId ?? null, only.sessionId ?? null, only.openAt ?? null, only.openAt ?? null])) === 1;
  }
  async settledApprovals(ids: readonly string[]): Promise<{ id: string; record: HeldApprovalRecord | null }[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.all(this.sql.approvals.settled, [JSON.stringify(ids)]);
    return rows.map((row) => ({ id: s(row.held_id), record: row.id === null ? null : toHeldApproval(row) }));
  }
  async redeemApproval(id: string, expiresAt: string): Promise<boolean> {
    return (await this.db.run(this.sql.approvals.redeem, [id, expiresAt])) === 1;
  }
  async pruneApprovals(expiredBefore: string): Promise<void> {
    const { approvals } = this.sql;
    await this.db.transaction(function* () {
      yield* run(approvals.pruneHeld, [expiredBefore]);
      yield* run(approvals.pruneRedeemed, [expiredBefore]);
    });
  }

  close(): Promise<void> {
    return this.db.close();
  }

  private async one<T>(sql: string, params: readonly unknown[], map: (row: Row) => T): Promise<T | null> {
    const row = await this.db.get(sql, params);
    return row ? map(row) : null;
  }

  /** One page of a table (`params`: its filter's), fetching one extra row to know whether more follow. */
  private async page<T>(statements: PageStatements, params: readonly unknown[], page: PageRequest, map: (row: Row) => T): Promise<Page<T>> {
    const { key } = statements;
    const rows = page.after === undefined
      ? await this.db.all(statements.first, [...params, page.limit + 1])
      : await this.db.all(statements.after, [...params, decodeCursor(key, page.after), page.limit + 1]);
    return pageFromRows(rows, page, map, (row) => encodeCursor(key, s(row[key])));
  }
}

/** The name of a user's lock (store `deleteUser`, `addUserVault`, `addUserSession`). */
const userLock = (userId: string): string => `user:${userId}`;

const sessionRow = (rec: SessionRecord): unknown[] =>
  [rec.id, rec.agentId, rec.agentVersion, rec.tokenHash, json(rec.vaultIds), rec.userId, rec.createdAt, rec.expiresAt];

const toAgentCall = (row: Row): AgentCall => ({ call: toCall(row), agentId: s(row.agent_id) });

/**
 * Inside a transaction: takes the name's lock where the database needs one (two replicas uploading versions of
 * one name at once would otherwise read the same ordinals), refuses a version the name has, gives an
 * unversioned upload the next free number — counting up from the latest ordinal, skipping numbers a manifest
 * took — and picks the next ordinal.
 */
function* claimVersion(
  versions: Statements['packages' | 'skills'], lock: string | null, kind: 'package' | 'skill', name: string, version: string | null,
): Program<{ version: string; seq: number }> {
  if (lock !== null) yield* run(lock, [`${kind === 'package' ? 'packages' : 'skills'}:${name}`]);
  const seq = Number((yield* get(versions.lastSeq, [name]))?.m ?? 0) + 1;
  if (version !== null) {
    if (yield* get(versions.taken, [name, version])) throw new ConflictError(`${kind} ${name}@${version} already exists; versions are immutable`, 'version_exists');
    return { version, seq };
  }
  for (let n = seq; ; n += 1) {
    if (!(yield* get(versions.taken, [name, String(n)]))) return { version: String(n), seq };
  }
}

function* insertAgentVersion(agents: Statements['agents'], rec: AgentVersionRecord, pins: readonly ToolPin[]): Program<void> {
  yield* run(agents.insertVersion, [rec.agentId, rec.version, json(rec.spec), rec.createdAt]);
  for (const [kind, ref] of agentVersionRefs(rec.spec)) yield* run(agents.insertRef, [rec.agentId, rec.version, kind, ref]);
  for (const pin of pins) yield* run(agents.insertPin, [rec.agentId, rec.version, pin.server, pin.tool, pin.digest, json(pin.definition)]);
}
