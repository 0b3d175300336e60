/**
 * The embedded Store: one SQLite file in WAL mode (readers never wait for the writer; a crash loses at most
 * the transaction in flight). Every write that must stay consistent with another runs in one transaction.
 */
import Database from 'better-sqlite3';
import { MIGRATIONS, migrationSql } from './migrations.js';
import { ConflictError } from '../errors.js';
import type {
  AgentCall, AgentRecord, AgentVersionRecord, ApiKeyRecord, CallFilter, CallRecord, CredentialRecord, IdempotencyRecord,
  PackageRecord, PackageVersionSummary, Page, PageRequest, SessionRecord, SkillRecord, Store, VaultRecord,
} from './store.js';
import type { ApprovalDecision, HeldApprovalRecord } from './store.js';
import { agentVersionRefs, pageFromRows, toHeldApproval, versionRef } from './store-rows.js';

import {
  INTERRUPTED_CRASH, decodeCursor, encodeCursor, listKey as listKeyWith, s, toAgent, toAgentVersion, toApiKey, toCall, toCredential, toIdempotency,
  toPackage, toSession, toSkill, toVault, type Row,
} from './store-rows.js';

/** Name then ordinal, in text order: SQLite text holds the NUL separator, which sorts before any name character. */
const listKey = (name: string, seq: number): string => listKeyWith(name, seq, '\u0000');

/** The end of each queue of `exclusively` work, by file and name. */
const exclusiveTails = new Map<string, Promise<void>>();

export class SqliteStore implements Store {
  private readonly db: Database.Database;
  /**
   * Statements by their SQL text, each prepared once: preparing costs more than running the small statements
   * of a call (a session lookup, the call log's insert and update), and a call runs several. The texts are
   * the literals below and the few shapes `page` and `findCalls` build, so the map stays small.
   */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    migrate(this.db);
    // A data directory's file is one process's at a time: whoever held a lease in it before this open has
    // stopped, so its calls left running are marked at once rather than a lease's length later.
    this.db.prepare('DELETE FROM instance_leases').run();
  }

  /**
   * The call log's two writes per call (`addCall`, `finishCall`), held until the end of this turn of the
   * event loop and committed together in one transaction: a commit costs several times the statement, and
   * with calls in flight several land in each turn. Nothing can see them out of order: every other statement
   * (`sql` outside a transaction) and every transaction (`tx`) commits what is held first, and a write's
   * promise resolves only once it is committed (the call log awaits its `running` record before the tool runs).
   */
  private held: { write: () => void; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private flushQueued = false;

  private hold(write: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.held.push({ write, resolve, reject });
      if (!this.flushQueued) {
        this.flushQueued = true;
        setImmediate(() => this.commitHeld());
      }
    });
  }

  private commitHeld(): void {
    this.flushQueued = false;
    if (this.held.length === 0) return;
    const batch = this.held;
    this.held = [];
    try {
      this.db.transaction(() => { for (const held of batch) held.write(); })();
    } catch {
      // One write failed (its session was deleted meanwhile) and the batch rolled back: each alone, so that
      // each caller gets its own answer.
      for (const held of batch) {
        try {
          held.write();
          held.resolve();
        } catch (err) {
          held.reject(err);
        }
      }
      return;
    }
    for (const held of batch) held.resolve();
  }

  /** One transaction, after what the call log holds is committed (so it cannot be rolled back with it). */
  private tx<T>(work: () => T): T {
    this.commitHeld();
    return this.db.transaction(work)();
  }

  private sql(text: string): Database.Statement {
    if (this.held.length > 0 && !this.db.inTransaction) this.commitHeld();
    let statement = this.statements.get(text);
    if (statement === undefined) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  private nextSeq(table: 'packages' | 'skills', name: string): number {
    const row = this.sql(`SELECT MAX(seq) AS m FROM ${table} WHERE name = ?`).get(name) as { m: number | null };
    return (row.m ?? 0) + 1;
  }

  /** The schema version the database is at (the number of migrations run). */
  schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  // ---- api keys
  async addApiKey(rec: ApiKeyRecord): Promise<void> {
    this.sql('INSERT INTO api_keys (id, name, hash, prefix, scope, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(rec.id, rec.name, rec.hash, rec.prefix, rec.scope, rec.createdAt, rec.lastUsedAt, rec.revokedAt);
  }
  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const row = this.sql('SELECT * FROM api_keys WHERE hash = ?').get(hash) as Row | undefined;
    return row ? toApiKey(row) : null;
  }
  async countApiKeys(): Promise<number> {
    return (this.sql('SELECT COUNT(*) AS n FROM api_keys').get() as { n: number }).n;
  }
  async getApiKey(id: string): Promise<ApiKeyRecord | null> {
    const row = this.sql('SELECT * FROM api_keys WHERE id = ?').get(id) as Row | undefined;
    return row ? toApiKey(row) : null;
  }
  async getApiKeys(ids: readonly string[]): Promise<ApiKeyRecord[]> {
    if (ids.length === 0) return [];
    // One statement for any number of ids (the cache keeps statements by text).
    return (this.sql('SELECT * FROM api_keys WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as Row[]).map(toApiKey);
  }
  async listApiKeys(page: PageRequest): Promise<Page<ApiKeyRecord>> {
    return this.page('api_keys', 'id', '', [], page, toApiKey);
  }
  async touchApiKey(id: string, at: string): Promise<void> {
    this.sql('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(at, id);
  }
  async revokeApiKey(id: string, at: string): Promise<boolean> {
    return this.tx(() => {
      const row = this.sql('SELECT scope, revoked_at FROM api_keys WHERE id = ?').get(id) as Row | undefined;
      if (!row || row.revoked_at !== null) return true;
      if (row.scope === 'admin') {
        const admins = (this.sql("SELECT COUNT(*) AS n FROM api_keys WHERE scope = 'admin' AND revoked_at IS NULL").get() as { n: number }).n;
        if (admins <= 1) return false;
      }
      this.sql('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(at, id);
      return true;
    });
  }

  // ---- packages
  async addPackage(rec: Omit<PackageRecord, 'seq'>): Promise<PackageRecord> {
    return this.tx(() => {
      if (this.sql('SELECT 1 FROM packages WHERE name = ? AND version = ?').get(rec.name, rec.version)) {
        throw new ConflictError(`package ${rec.name}@${rec.version} already exists; versions are immutable`, 'version_exists');
      }
      const seq = this.nextSeq('packages', rec.name);
      this.sql(`INSERT INTO packages (name, version, seq, description, digest, manifest, tools, created_at, list_key)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(rec.name, rec.version, seq, rec.description, rec.digest,
        JSON.stringify(rec.manifest), JSON.stringify(rec.tools), rec.createdAt, listKey(rec.name, seq));
      return { ...rec, seq };
    });
  }
  async getPackage(name: string, version: string): Promise<PackageRecord | null> {
    const row = this.sql('SELECT * FROM packages WHERE name = ? AND version = ?').get(name, version) as Row | undefined;
    return row ? toPackage(row) : null;
  }
  async latestPackage(name: string): Promise<PackageRecord | null> {
    const row = this.sql('SELECT * FROM packages WHERE name = ? ORDER BY seq DESC LIMIT 1').get(name) as Row | undefined;
    return row ? toPackage(row) : null;
  }
  async listPackages(page: PageRequest): Promise<Page<PackageRecord>> {
    return this.page('packages', 'list_key', '', [], page, toPackage);
  }
  async packageVersions(name: string): Promise<PackageVersionSummary[]> {
    const rows = this.sql('SELECT name, version, seq, description, digest, created_at FROM packages WHERE name = ? ORDER BY seq')
      .all(name) as Row[];
    return rows.map((row) => ({
      name: s(row.name), version: s(row.version), seq: Number(row.seq), description: s(row.description),
      digest: s(row.digest), createdAt: s(row.created_at),
    }));
  }
  async allPackages(): Promise<PackageRecord[]> {
    return (this.sql('SELECT * FROM packages ORDER BY list_key').all() as Row[]).map(toPackage);
  }
  async deletePackage(name: string, version: string): Promise<void> {
    this.sql('DELETE FROM packages WHERE name = ? AND version = ?').run(name, version);
  }
  async countPackagesWithDigest(digest: string): Promise<number> {
    return (this.sql('SELECT COUNT(*) AS n FROM packages WHERE digest = ?').get(digest) as { n: number }).n;
  }

  // ---- skills
  async addSkill(rec: Omit<SkillRecord, 'seq'>): Promise<SkillRecord> {
    return this.tx(() => {
      if (this.sql('SELECT 1 FROM skills WHERE name = ? AND version = ?').get(rec.name, rec.version)) {
        throw new ConflictError(`skill ${rec.name}@${rec.version} already exists; versions are immutable`, 'version_exists');
      }
      const seq = this.nextSeq('skills', rec.name);
      this.sql(`INSERT INTO skills (name, version, seq, description, digest, created_at, list_key)
        VALUES (?, ?, ?, ?, ?, ?, ?)`).run(rec.name, rec.version, seq, rec.description, rec.digest, rec.createdAt,
        listKey(rec.name, seq));
      return { ...rec, seq };
    });
  }
  async getSkill(name: string, version: string): Promise<SkillRecord | null> {
    const row = this.sql('SELECT * FROM skills WHERE name = ? AND version = ?').get(name, version) as Row | undefined;
    return row ? toSkill(row) : null;
  }
  async latestSkill(name: string): Promise<SkillRecord | null> {
    const row = this.sql('SELECT * FROM skills WHERE name = ? ORDER BY seq DESC LIMIT 1').get(name) as Row | undefined;
    return row ? toSkill(row) : null;
  }
  async listSkills(page: PageRequest): Promise<Page<SkillRecord>> {
    return this.page('skills', 'list_key', '', [], page, toSkill);
  }
  async deleteSkill(name: string, version: string): Promise<void> {
    this.sql('DELETE FROM skills WHERE name = ? AND version = ?').run(name, version);
  }

  // ---- agents
  async createAgent(rec: AgentRecord, first: AgentVersionRecord): Promise<void> {
    this.tx(() => {
      this.sql('INSERT INTO agents (id, name, current_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
        .run(rec.id, rec.name, first.version, rec.createdAt, rec.updatedAt);
      this.insertAgentVersion(first);
    });
  }
  async getAgent(id: string): Promise<AgentRecord | null> {
    const row = this.sql('SELECT * FROM agents WHERE id = ?').get(id) as Row | undefined;
    return row ? toAgent(row) : null;
  }
  async listAgents(page: PageRequest): Promise<Page<AgentRecord>> {
    return this.page('agents', 'id', '', [], page, toAgent);
  }
  async publishAgentVersion(rec: AgentVersionRecord): Promise<void> {
    this.tx(() => {
      const current = this.sql('SELECT current_version FROM agents WHERE id = ?').get(rec.agentId) as Row | undefined;
      if (!current) throw new ConflictError(`agent ${rec.agentId} no longer exists`);
      if (Number(current.current_version) + 1 !== rec.version) {
        throw new ConflictError(`agent ${rec.agentId} changed meanwhile (now at version ${String(current.current_version)}); retry`);
      }
      this.insertAgentVersion(rec);
      this.sql('UPDATE agents SET current_version = ?, name = ?, updated_at = ? WHERE id = ?')
        .run(rec.version, rec.spec.name, rec.createdAt, rec.agentId);
    });
  }
  private insertAgentVersion(rec: AgentVersionRecord): void {
    this.sql('INSERT INTO agent_versions (agent_id, version, spec, created_at) VALUES (?, ?, ?, ?)')
      .run(rec.agentId, rec.version, JSON.stringify(rec.spec), rec.createdAt);
    const ref = this.sql('INSERT INTO agent_version_refs (agent_id, version, kind, ref) VALUES (?, ?, ?, ?)');
    for (const [kind, target] of agentVersionRefs(rec.spec)) ref.run(rec.agentId, rec.version, kind, target);
  }
  async getAgentVersion(agentId: string, version: number): Promise<AgentVersionRecord | null> {
    const row = this.sql('SELECT * FROM agent_versions WHERE agent_id = ? AND version = ?').get(agentId, version) as Row | undefined;
    return row ? toAgentVersion(row) : null;
  }
  async listAgentVersions(agentId: string, page: PageRequest): Promise<Page<AgentVersionRecord>> {
    // Versions page by their number; the cursor is the number as text, padded so text order is number order.
    const rows = this.sql(`SELECT * FROM agent_versions WHERE agent_id = ? AND version > ? ORDER BY version LIMIT ?`)
      .all(agentId, page.after ? Number(page.after) || 0 : 0, page.limit + 1) as Row[];
    return pageFromRows(rows, page, toAgentVersion, (row) => String(row.version));
  }
  async agentVersionsUsingPackage(name: string, version: string): Promise<string[]> {
    return this.refs('package', versionRef(name, version));
  }
  async agentVersionsUsingSkill(name: string, version: string): Promise<string[]> {
    return this.refs('skill', versionRef(name, version));
  }
  async agentVersionsUsingVault(vaultId: string): Promise<string[]> {
    return this.refs('vault', vaultId);
  }
  private refs(kind: string, ref: string): string[] {
    return (this.sql('SELECT agent_id, version FROM agent_version_refs WHERE kind = ? AND ref = ? ORDER BY agent_id, version')
      .all(kind, ref) as Row[]).map((r) => `${s(r.agent_id)}@${String(r.version)}`);
  }
  async deleteAgent(id: string): Promise<void> {
    this.tx(() => {
      this.sql('DELETE FROM agent_version_refs WHERE agent_id = ?').run(id);
      this.sql('DELETE FROM calls WHERE session_id IN (SELECT id FROM sessions WHERE agent_id = ?)').run(id);
      this.sql('DELETE FROM sessions WHERE agent_id = ?').run(id);
      this.sql('DELETE FROM agent_versions WHERE agent_id = ?').run(id);
      this.sql('DELETE FROM agents WHERE id = ?').run(id);
    });
  }

  // ---- vaults and credentials
  async addVault(rec: VaultRecord): Promise<void> {
    this.sql('INSERT INTO vaults (id, name, created_at) VALUES (?, ?, ?)').run(rec.id, rec.name, rec.createdAt);
  }
  async getVault(id: string): Promise<VaultRecord | null> {
    const row = this.sql('SELECT * FROM vaults WHERE id = ?').get(id) as Row | undefined;
    return row ? toVault(row) : null;
  }
  async listVaults(page: PageRequest): Promise<Page<VaultRecord>> {
    return this.page('vaults', 'id', '', [], page, toVault);
  }
  async deleteVault(id: string): Promise<void> {
    this.tx(() => {
      this.sql('DELETE FROM credentials WHERE vault_id = ?').run(id);
      this.sql('DELETE FROM vaults WHERE id = ?').run(id);
    });
  }
  async addCredential(rec: CredentialRecord): Promise<void> {
    this.sql(`INSERT INTO credentials (id, vault_id, target, display_name, scheme, sealed, expires_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(rec.id, rec.vaultId, rec.target, rec.displayName, rec.scheme, rec.sealed,
      rec.expiresAt, rec.createdAt, rec.updatedAt);
  }
  async getCredential(vaultId: string, id: string): Promise<CredentialRecord | null> {
    const row = this.sql('SELECT * FROM credentials WHERE vault_id = ? AND id = ?').get(vaultId, id) as Row | undefined;
    return row ? toCredential(row) : null;
  }
  async listCredentials(vaultId: string, page: PageRequest): Promise<Page<CredentialRecord>> {
    return this.page('credentials', 'id', 'vault_id = ?', [vaultId], page, toCredential);
  }
  async allCredentials(vaultId: string): Promise<CredentialRecord[]> {
    return (this.sql('SELECT * FROM credentials WHERE vault_id = ? ORDER BY id').all(vaultId) as Row[]).map(toCredential);
  }
  async updateCredential(rec: CredentialRecord): Promise<void> {
    this.sql(`UPDATE credentials SET target = ?, display_name = ?, scheme = ?, sealed = ?, expires_at = ?, updated_at = ?
      WHERE vault_id = ? AND id = ?`).run(rec.target, rec.displayName, rec.scheme, rec.sealed, rec.expiresAt, rec.updatedAt,
      rec.vaultId, rec.id);
  }
  async deleteCredential(vaultId: string, id: string): Promise<void> {
    this.sql('DELETE FROM credentials WHERE vault_id = ? AND id = ?').run(vaultId, id);
  }

  // ---- sessions
  async addSession(rec: SessionRecord): Promise<void> {
    this.sql(`INSERT INTO sessions (id, agent_id, agent_version, token_hash, vault_ids, created_at, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`).run(rec.id, rec.agentId, rec.agentVersion, rec.tokenHash, JSON.stringify(rec.vaultIds),
      rec.createdAt, rec.expiresAt);
  }
  async getSession(id: string): Promise<SessionRecord | null> {
    const row = this.sql('SELECT * FROM sessions WHERE id = ?').get(id) as Row | undefined;
    return row ? toSession(row) : null;
  }
  async findSessionByTokenHash(hash: string): Promise<SessionRecord | null> {
    const row = this.sql('SELECT * FROM sessions WHERE token_hash = ?').get(hash) as Row | undefined;
    return row ? toSession(row) : null;
  }
  async listSessions(agentId: string, page: PageRequest): Promise<Page<SessionRecord>> {
    return this.page('sessions', 'id', 'agent_id = ?', [agentId], page, toSession);
  }
  async expiredSessions(now: string): Promise<SessionRecord[]> {
    return (this.sql('SELECT * FROM sessions WHERE expires_at <= ? ORDER BY id').all(now) as Row[]).map(toSession);
  }
  async sessionsUsingVault(vaultId: string): Promise<string[]> {
    return (this.sql('SELECT sessions.id AS id FROM sessions, json_each(sessions.vault_ids) WHERE json_each.value = ?')
      .all(vaultId) as Row[]).map((r) => s(r.id));
  }
  async deleteSession(id: string): Promise<void> {
    this.tx(() => {
      this.sql('DELETE FROM calls WHERE session_id = ?').run(id);
      this.sql('DELETE FROM sessions WHERE id = ?').run(id);
    });
  }

  // ---- calls
  async addCall(rec: CallRecord): Promise<void> {
    const values = [rec.id, rec.sessionId, rec.via, rec.tool, JSON.stringify(rec.arguments),
      rec.outcome, rec.crash ? JSON.stringify(rec.crash) : null, JSON.stringify(rec.model), rec.stderrTail,
      JSON.stringify(rec.egress), rec.durationMs, rec.startedAt, rec.approval ? JSON.stringify(rec.approval) : null, rec.instanceId ?? null];
    return this.hold(() => this.sql(`INSERT INTO calls (id, session_id, via, tool, arguments, outcome, crash, model, stderr_tail, egress, duration_ms, started_at, approval, instance_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(...values));
  }
  async finishCall(rec: CallRecord): Promise<void> {
    const values = [rec.outcome, rec.crash ? JSON.stringify(rec.crash) : null, JSON.stringify(rec.model), rec.stderrTail,
      JSON.stringify(rec.egress), rec.durationMs, rec.approval ? JSON.stringify(rec.approval) : null, rec.id];
    return this.hold(() => this.sql(`UPDATE calls SET outcome = ?, crash = ?, model = ?, stderr_tail = ?, egress = ?, duration_ms = ?, approval = ? WHERE id = ?`)
      .run(...values));
  }
  async getCall(sessionId: string, id: string): Promise<CallRecord | null> {
    const row = this.sql('SELECT * FROM calls WHERE session_id = ? AND id = ?').get(sessionId, id) as Row | undefined;
    return row ? toCall(row) : null;
  }
  async listCalls(sessionId: string, page: PageRequest): Promise<Page<CallRecord>> {
    return this.page('calls', 'id', 'session_id = ?', [sessionId], page, toCall);
  }
  async findCalls(filter: CallFilter, page: PageRequest): Promise<Page<AgentCall>> {
    const conditions: string[] = [];
    const args: unknown[] = [];
    const narrow = (sql: string, value: string | undefined) => {
      if (value === undefined) return;
      conditions.push(sql);
      args.push(value);
    };
    narrow('s.agent_id = ?', filter.agentId);
    narrow('c.session_id = ?', filter.sessionId);
    narrow('c.tool = ?', filter.tool);
    narrow('c.outcome = ?', filter.outcome);
    narrow('c.id < ?', page.after);
    const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
    const rows = this.sql(`SELECT c.*, s.agent_id AS agent_id FROM calls c JOIN sessions s ON s.id = c.session_id ${where} ORDER BY c.id DESC LIMIT ?`)
      .all(...args, page.limit + 1) as Row[];
    return pageFromRows(rows, page, (row) => ({ call: toCall(row), agentId: s(row.agent_id) }), (row) => s(row.id));
  }
  async findCall(id: string): Promise<AgentCall | null> {
    const row = this.sql('SELECT c.*, s.agent_id AS agent_id FROM calls c JOIN sessions s ON s.id = c.session_id WHERE c.id = ?').get(id) as Row | undefined;
    return row ? { call: toCall(row), agentId: s(row.agent_id) } : null;
  }

  // ---- instances: one process at a time here, but the same rules as on PostgreSQL (one code path)
  async renewInstanceLease(instanceId: string, leaseMs: number): Promise<void> {
    this.sql('INSERT INTO instance_leases (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at')
      .run(instanceId, new Date(Date.now() + leaseMs).toISOString());
  }
  async interruptOrphanedCalls(): Promise<number> {
    const now = new Date().toISOString();
    return this.tx(() => {
      const { changes } = this.sql(`UPDATE calls SET outcome = 'crash', crash = ? WHERE outcome = 'running' AND (instance_id IS NULL
        OR NOT EXISTS (SELECT 1 FROM instance_leases l WHERE l.id = calls.instance_id AND l.expires_at > ?))`).run(INTERRUPTED_CRASH, now);
      this.sql('DELETE FROM instance_leases WHERE expires_at <= ?').run(now);
      return changes;
    });
  }
  async releaseInstance(instanceId: string): Promise<number> {
    return this.tx(() => {
      const { changes } = this.sql(`UPDATE calls SET outcome = 'crash', crash = ? WHERE outcome = 'running' AND instance_id = ?`)
        .run(INTERRUPTED_CRASH, instanceId);
      this.sql('DELETE FROM instance_leases WHERE id = ?').run(instanceId);
      return changes;
    });
  }

  // ---- settings and exclusive work
  async claimSetting(name: string, value: string): Promise<string> {
    this.sql('INSERT OR IGNORE INTO settings (name, value) VALUES (?, ?)').run(name, value);
    return s((this.sql('SELECT value FROM settings WHERE name = ?').get(name) as Row).value);
  }
  /**
   * One process uses a data directory's file, so taking turns within this process is enough: stores opened on
   * the same file here (a test's "second process") queue behind each other.
   */
  async exclusively<T>(name: string, work: () => Promise<T>): Promise<T> {
    const key = `${this.file}\u0000${name}`;
    const before = exclusiveTails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => { done = resolve; });
    const tail = before.then(() => mine);
    exclusiveTails.set(key, tail);
    await before;
    try {
      return await work();
    } finally {
      done();
      if (exclusiveTails.get(key) === tail) exclusiveTails.delete(key);
    }
  }

  // ---- idempotency
  async getIdempotent(scope: string): Promise<IdempotencyRecord | null> {
    const row = this.sql('SELECT * FROM idempotency WHERE scope = ?').get(scope) as Row | undefined;
    return row ? toIdempotency(row) : null;
  }
  async putIdempotent(rec: IdempotencyRecord): Promise<void> {
    this.sql('INSERT OR REPLACE INTO idempotency (scope, request_hash, status, body, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(rec.scope, rec.requestHash, rec.status, JSON.stringify(rec.body ?? null), rec.createdAt);
  }
  async pruneIdempotent(olderThan: string): Promise<void> {
    this.sql('DELETE FROM idempotency WHERE created_at < ?').run(olderThan);
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    this.commitHeld();
    this.db.close();
  }

  /** One page of a table ordered by `key`, optionally filtered; fetches one extra row to know if more follow. */
  private page<T>(table: string, key: string, where: string, params: unknown[], page: PageRequest, map: (row: Row) => T): Page<T> {
    const conditions = [where, page.after !== undefined ? `${key} > ?` : ''].filter(Boolean);
    const args = [...params, ...(page.after !== undefined ? [decodeCursor(key, page.after)] : []), page.limit + 1];
    const sql = `SELECT * FROM ${table} ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY ${key} LIMIT ?`;
    const rows = this.sql(sql).all(...args) as Row[];
    return pageFromRows(rows, page, map, (row) => encodeCursor(key, s(row[key])));
  }

  // ---- approvals, shared by the replicas (here there is one; the same contract all the same)
  async holdApproval(rec: HeldApprovalRecord, maxPerSession: number, now: string): Promise<boolean> {
    // One statement: the count and the insert cannot be split by another writer.
    return this.sql(`INSERT INTO approvals (id, session_id, call_id, tool, arguments, hidden_secrets, created_at, expires_at, holder, decision, decided_by, decided_at, reason)
      SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
      WHERE (SELECT COUNT(*) FROM approvals a JOIN calls c ON c.id = a.call_id
        WHERE a.session_id = ? AND a.decision IS NULL AND a.expires_at > ? AND c.outcome = 'running') < ?
        AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = ?)`)
      .run(rec.id, rec.sessionId, rec.callId, rec.tool, JSON.stringify(rec.arguments), JSON.stringify(rec.hiddenSecrets), rec.createdAt, rec.expiresAt,
        rec.holder, rec.decision, rec.decidedBy, rec.decidedAt, rec.reason, rec.sessionId, now, maxPerSession, rec.sessionId).changes === 1;
  }
  async getApproval(id: string): Promise<HeldApprovalRecord | null> {
    const row = this.sql('SELECT * FROM approvals WHERE id = ?').get(id) as Row | undefined;
    return row ? toHeldApproval(row) : null;
  }
  async pendingApprovals(now: string, page: PageRequest, sessionId?: string): Promise<Page<HeldApprovalRecord>> {
    const rows = this.sql(`SELECT a.* FROM approvals a JOIN calls c ON c.id = a.call_id
      WHERE a.decision IS NULL AND a.expires_at > ? AND c.outcome = 'running' AND (? IS NULL OR a.session_id = ?) AND (? IS NULL OR a.id > ?)
      ORDER BY a.id LIMIT ?`).all(now, sessionId ?? null, sessionId ?? null, page.after ?? null, page.after ?? null, page.limit + 1) as Row[];
    return pageFromRows(rows, page, toHeldApproval, (row) => s(row.id));
  }
  async decideApproval(id: string, decision: ApprovalDecision, only: { sessionId?: string; openAt?: string } = {}): Promise<boolean> {
    return this.sql(`UPDATE approvals SET decision = ?, decided_by = ?, decided_at = ?, reason = ?
      WHERE id = ? AND decision IS NULL AND (? IS NULL OR session_id = ?)
        AND (? IS NULL OR (expires_at > ? AND EXISTS (SELECT 1 FROM calls c WHERE c.id = approvals.call_id AND c.outcome = 'running')))`)
      .run(decision.decision, decision.decidedBy, decision.decidedAt, decision.reason, id,
        only.sessionId ?? null, only.sessionId ?? null, only.openAt ?? null, only.openAt ?? null).changes === 1;
  }
  async settledApprovals(ids: readonly string[]): Promise<{ id: string; record: HeldApprovalRecord | null }[]> {
    if (ids.length === 0) return [];
    const rows = this.sql(`SELECT held.value AS held_id, a.* FROM json_each(?) AS held LEFT JOIN approvals a ON a.id = held.value
      WHERE a.id IS NULL OR a.decision IS NOT NULL`).all(JSON.stringify(ids)) as Row[];
    return rows.map((row) => ({ id: s(row.held_id), record: row.id === null ? null : toHeldApproval(row) }));
  }
  async redeemApproval(id: string, expiresAt: string): Promise<boolean> {
    return this.sql('INSERT INTO redeemed_approvals (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING').run(id, expiresAt).changes === 1;
  }
  async pruneApprovals(expiredBefore: string): Promise<void> {
    this.tx(() => {
      this.sql('DELETE FROM approvals WHERE expires_at < ?').run(expiredBefore);
      this.sql('DELETE FROM redeemed_approvals WHERE expires_at < ?').run(expiredBefore);
    });
  }
}

function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migrationSql(migration, 'sqlite'));
      db.pragma(`user_version = ${migration.version}`);
    })();
  }
}

