/**
 * The Store on PostgreSQL, for several API replicas sharing one database. Same schema as SQLite (one migration
 * list, migrations.ts), same records, same pages and cursors, same conflicts.
 *
 * Why `pg` (node-postgres) and not `postgres` (porsager): it is the driver most deployments already run and
 * audit, its pool is explicit (a client per transaction, `BEGIN`/`COMMIT` on it, nothing implicit), and its
 * errors carry the SQLSTATE we map (unique violations to ConflictError, lost connections to a 503).
 *
 * JSON fields are stored as text, not jsonb: jsonb rewrites what it keeps (key order, duplicate keys, number
 * spelling), and a record must come back exactly as it went in, as on SQLite. The one query that looks inside
 * JSON (`sessionsUsingVault`) casts to jsonb as it reads.
 */
import pg from 'pg';
import type { Secret } from '../../common/index.js';
import { ValidationError } from '../../errors.js';
import { MIGRATIONS, migrationSql, type Migration } from './migrations.js';
import { ConflictError, StoreUnavailableError } from '../errors.js';
import {
  INTERRUPTED_CRASH, type Row, decodeCursor, encodeCursor, json, jsonOrNull, listKey, s, toAgent, toApiKey, toAgentVersion, toCall, toCredential,
  toIdempotency, toPackage, toSession, toSkill, toVault,
} from './store-rows.js';
import type {
  AgentCall, AgentRecord, AgentVersionRecord, ApiKeyRecord, CallFilter, CallRecord, CredentialRecord, IdempotencyRecord,
  PackageRecord, PackageVersionSummary, Page, PageRequest, SessionRecord, SkillRecord, Store, VaultRecord,
} from './store.js';
import type { ApprovalDecision, HeldApprovalRecord } from './store.js';
import { agentVersionRefs, pageFromRows, toHeldApproval, versionRef } from './store-rows.js';

/** PostgreSQL text cannot hold NUL (SQLite's separator); U+0001 sorts before every name character too. */
const LIST_KEY_SEPARATOR = '\u0001';

/**
 * One key for the advisory lock every replica takes to migrate: the first one in migrates, the others wait,
 * then find nothing left to run. (A 64-bit number; this one spells "subako" in ASCII.)
 */
const MIGRATION_LOCK = '126943810357103';

interface Queryable {
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
}

export interface PostgresStoreOptions {
  /** Connections the pool holds at most; 10 by default. */
  maxConnections?: number;
  /** How long to wait for a connection (a new one, or a free one of the pool); 5 s by default. */
  connectTimeoutMs?: number;
  /** The migrations to bring the database to; all of them by default (fewer: an older release, in tests). */
  migrations?: readonly Migration[];
}

export class PostgresStore implements Store {
  private constructor(private readonly pool: pg.Pool) {}

  /** Connects, migrates (once, under the advisory lock, whatever other replicas do meanwhile), and answers. */
  static async open(url: Secret, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    // Checked here so that no parser's error (which would quote the URL, password and all) is ever thrown.
    if (!URL.canParse(url.reveal())) {
      throw new ValidationError([{ code: 'config.database', message: 'the database URL does not parse; give it as postgres://user:password@host:port/database' }]);
    }
    const pool = new pg.Pool({
      connectionString: url.reveal(), max: options.maxConnections ?? 10,
      // A database host that drops packets (rather than refusing) must not hold a request forever: past this a
      // connection attempt, or the wait for a pooled one, fails as unavailable (503).
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      // TCP keep-alive, so a connection to a host that vanished is noticed and dropped from the pool.
      keepAlive: true,
    });
    // An idle client whose server went away emits here; without a listener that would end the process. The
    // next query fails on its own (as a StoreUnavailableError), which is where it is reported.
    pool.on('error', () => undefined);
    const store = new PostgresStore(pool);
    try {
      await store.migrate(options.migrations ?? MIGRATIONS);
    } catch (err) {
      await pool.end();
      throw unavailableOr(err);
    }
    return store;
  }

  /** The schema version the database is at (the highest migration run). */
  async schemaVersion(): Promise<number> {
    const { rows } = await this.q('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations');
    return Number(rows[0].v);
  }

  private async migrate(migrations: readonly Migration[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      // A session lock, held across the per-migration transactions and released below (or with the connection).
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
          version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)`);
        const { rows } = await client.query('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations');
        const current = Number(rows[0].v);
        for (const migration of migrations) {
          if (migration.version <= current) continue;
          await client.query('BEGIN');
          try {
            await client.query(migrationSql(migration, 'postgres'));
            await client.query('INSERT INTO schema_migrations (version, description, applied_at) VALUES ($1, $2, $3)',
              [migration.version, migration.description, new Date().toISOString()]);
            await client.query('COMMIT');
          } catch (err) {
            await client.query('ROLLBACK');
            throw err;
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
    } finally {
      client.release();
    }
  }

  /** One statement on any pooled connection; a lost database is a StoreUnavailableError. */
  private async q(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.pool.query(text, values);
    } catch (err) {
      throw unavailableOr(err);
    }
  }
  private async one(text: string, values?: unknown[]): Promise<Row | null> {
    const { rows } = await this.q(text, values);
    return (rows[0] as Row | undefined) ?? null;
  }
  private async all(text: string, values?: unknown[]): Promise<Row[]> {
    return (await this.q(text, values)).rows as Row[];
  }

  /**
   * Runs `work` on a connection of its own, checked out of the pool and given back after; a connection that
   * broke meanwhile (`markBroken`, or an 'error' it emitted) is dropped from the pool rather than handed out again.
   */
  private async withClient<T>(work: (client: pg.PoolClient, markBroken: (err: unknown) => void) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw unavailableOr(err);
    }
    let broken: Error | undefined;
    // A checked-out client whose connection drops emits 'error' besides failing its query; unheard, that
    // would end the process.
    const onLost = (err: Error): void => { broken = err; };
    client.on('error', onLost);
    try {
      return await work(client, (err) => { broken = err instanceof Error ? err : new Error(String(err)); });
    } finally {
      client.off('error', onLost);
      client.release(broken);
    }
  }

  /** Runs `work` in one transaction on one connection: committed when it returns, rolled back when it throws. */
  private tx<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    return this.withClient(async (client, markBroken) => {
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        // A connection that cannot even roll back is not handed out again.
        await client.query('ROLLBACK').catch(markBroken);
        throw unavailableOr(err);
      }
    });
  }

  // ---- api keys
  async addApiKey(rec: ApiKeyRecord): Promise<void> {
    await this.q('INSERT INTO api_keys (id, name, hash, prefix, scope, created_at, last_used_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [rec.id, rec.name, rec.hash, rec.prefix, rec.scope, rec.createdAt, rec.lastUsedAt, rec.revokedAt]);
  }
  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const row = await this.one('SELECT * FROM api_keys WHERE hash = $1', [hash]);
    return row ? toApiKey(row) : null;
  }
  async countApiKeys(): Promise<number> {
    return Number((await this.one('SELECT COUNT(*) AS n FROM api_keys'))?.n);
  }
  async getApiKey(id: string): Promise<ApiKeyRecord | null> {
    const row = await this.one('SELECT * FROM api_keys WHERE id = $1', [id]);
    return row ? toApiKey(row) : null;
  }
  async getApiKeys(ids: readonly string[]): Promise<ApiKeyRecord[]> {
    if (ids.length === 0) return [];
    return (await this.all('SELECT * FROM api_keys WHERE id = ANY($1::text[])', [ids])).map(toApiKey);
  }
  async listApiKeys(page: PageRequest): Promise<Page<ApiKeyRecord>> {
    return this.page('api_keys', 'id', '', [], page, toApiKey);
  }
  async touchApiKey(id: string, at: string): Promise<void> {
    await this.q('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id]);
  }
  async revokeApiKey(id: string, at: string): Promise<boolean> {
    return this.tx(async (db) => {
      // Locks the admin keys still in force: two replicas revoking the last two at once take turns, and the
      // second then counts one left and refuses, as SQLite's single writer would.
      const admins = await db.query("SELECT id FROM api_keys WHERE scope = 'admin' AND revoked_at IS NULL FOR UPDATE");
      const { rows } = await db.query('SELECT scope, revoked_at FROM api_keys WHERE id = $1', [id]);
      const row = rows[0] as Row | undefined;
      if (!row || row.revoked_at !== null) return true;
      if (row.scope === 'admin' && (admins.rowCount ?? 0) <= 1) return false;
      await db.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2', [at, id]);
      return true;
    });
  }

  // ---- packages and skills
  async addPackage(rec: Omit<PackageRecord, 'seq'>): Promise<PackageRecord> {
    return this.tx(async (db) => {
      const seq = await this.claimVersion(db, 'packages', 'package', rec.name, rec.version);
      await db.query(`INSERT INTO packages (name, version, seq, description, digest, manifest, tools, created_at, list_key)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [rec.name, rec.version, seq, rec.description, rec.digest,
        json(rec.manifest), json(rec.tools), rec.createdAt, listKey(rec.name, seq, LIST_KEY_SEPARATOR)]);
      return { ...rec, seq };
    });
  }
  async getPackage(name: string, version: string): Promise<PackageRecord | null> {
    const row = await this.one('SELECT * FROM packages WHERE name = $1 AND version = $2', [name, version]);
    return row ? toPackage(row) : null;
  }
  async latestPackage(name: string): Promise<PackageRecord | null> {
    const row = await this.one('SELECT * FROM packages WHERE name = $1 ORDER BY seq DESC LIMIT 1', [name]);
    return row ? toPackage(row) : null;
  }
  async listPackages(page: PageRequest): Promise<Page<PackageRecord>> {
    return this.page('packages', 'list_key', '', [], page, toPackage);
  }
  async packageVersions(name: string): Promise<PackageVersionSummary[]> {
    const rows = await this.all('SELECT name, version, seq, description, digest, created_at FROM packages WHERE name = $1 ORDER BY seq', [name]);
    return rows.map((row) => ({
      name: s(row.name), version: s(row.version), seq: Number(row.seq), description: s(row.description),
      digest: s(row.digest), createdAt: s(row.created_at),
    }));
  }
  async allPackages(): Promise<PackageRecord[]> {
    return (await this.all('SELECT * FROM packages ORDER BY list_key')).map(toPackage);
  }
  async deletePackage(name: string, version: string): Promise<void> {
    await this.q('DELETE FROM packages WHERE name = $1 AND version = $2', [name, version]);
  }
  async countPackagesWithDigest(digest: string): Promise<number> {
    return Number((await this.one('SELECT COUNT(*) AS n FROM packages WHERE digest = $1', [digest]))?.n);
  }

  async addSkill(rec: Omit<SkillRecord, 'seq'>): Promise<SkillRecord> {
    return this.tx(async (db) => {
      const seq = await this.claimVersion(db, 'skills', 'skill', rec.name, rec.version);
      await db.query(`INSERT INTO skills (name, version, seq, description, digest, created_at, list_key)
        VALUES ($1, $2, $3, $4, $5, $6, $7)`, [rec.name, rec.version, seq, rec.description, rec.digest, rec.createdAt,
        listKey(rec.name, seq, LIST_KEY_SEPARATOR)]);
      return { ...rec, seq };
    });
  }
  async getSkill(name: string, version: string): Promise<SkillRecord | null> {
    const row = await this.one('SELECT * FROM skills WHERE name = $1 AND version = $2', [name, version]);
    return row ? toSkill(row) : null;
  }
  async latestSkill(name: string): Promise<SkillRecord | null> {
    const row = await this.one('SELECT * FROM skills WHERE name = $1 ORDER BY seq DESC LIMIT 1', [name]);
    return row ? toSkill(row) : null;
  }
  async listSkills(page: PageRequest): Promise<Page<SkillRecord>> {
    return this.page('skills', 'list_key', '', [], page, toSkill);
  }
  async deleteSkill(name: string, version: string): Promise<void> {
    await this.q('DELETE FROM skills WHERE name = $1 AND version = $2', [name, version]);
  }

  /**
   * Inside a transaction: refuses a version that exists and picks the next ordinal of the name. Two replicas
   * uploading versions of one name at once would read the same MAX(seq); a transaction lock on the name
   * (released at commit) makes them take turns, as SQLite's single writer does.
   */
  private async claimVersion(db: Queryable, table: 'packages' | 'skills', kind: string, name: string, version: string): Promise<number> {
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${table}:${name}`]);
    const exists = await db.query(`SELECT 1 FROM ${table} WHERE name = $1 AND version = $2`, [name, version]);
    if (exists.rowCount) throw new ConflictError(`${kind} ${name}@${version} already exists; versions are immutable`, 'version_exists');
    const { rows } = await db.query(`SELECT MAX(seq) AS m FROM ${table} WHERE name = $1`, [name]);
    return Number(rows[0].m ?? 0) + 1;
  }

  // ---- agents
  async createAgent(rec: AgentRecord, first: AgentVersionRecord): Promise<void> {
    await this.tx(async (db) => {
      await db.query('INSERT INTO agents (id, name, current_version, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)',
        [rec.id, rec.name, first.version, rec.createdAt, rec.updatedAt]);
      await insertAgentVersion(db, first);
    });
  }
  async getAgent(id: string): Promise<AgentRecord | null> {
    const row = await this.one('SELECT * FROM agents WHERE id = $1', [id]);
    return row ? toAgent(row) : null;
  }
  async listAgents(page: PageRequest): Promise<Page<AgentRecord>> {
    return this.page('agents', 'id', '', [], page, toAgent);
  }
  async publishAgentVersion(rec: AgentVersionRecord): Promise<void> {
    await this.tx(async (db) => {
      // FOR UPDATE: a second publisher waits here and then sees the version the first one made current.
      const { rows } = await db.query('SELECT current_version FROM agents WHERE id = $1 FOR UPDATE', [rec.agentId]);
      const current = rows[0] as Row | undefined;
      if (!current) throw new ConflictError(`agent ${rec.agentId} no longer exists`);
      if (Number(current.current_version) + 1 !== rec.version) {
        throw new ConflictError(`agent ${rec.agentId} changed meanwhile (now at version ${String(current.current_version)}); retry`);
      }
      await insertAgentVersion(db, rec);
      await db.query('UPDATE agents SET current_version = $1, name = $2, updated_at = $3 WHERE id = $4',
        [rec.version, rec.spec.name, rec.createdAt, rec.agentId]);
    });
  }
  async getAgentVersion(agentId: string, version: number): Promise<AgentVersionRecord | null> {
    const row = await this.one('SELECT * FROM agent_versions WHERE agent_id = $1 AND version = $2', [agentId, version]);
    return row ? toAgentVersion(row) : null;
  }
  async listAgentVersions(agentId: string, page: PageRequest): Promise<Page<AgentVersionRecord>> {
    // Versions page by their number; the cursor is the number as text.
    const rows = await this.all('SELECT * FROM agent_versions WHERE agent_id = $1 AND version > $2 ORDER BY version LIMIT $3',
      [agentId, page.after ? Number(page.after) || 0 : 0, page.limit + 1]);
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
  private async refs(kind: string, ref: string): Promise<string[]> {
    return (await this.all('SELECT agent_id, version FROM agent_version_refs WHERE kind = $1 AND ref = $2 ORDER BY agent_id, version', [kind, ref]))
      .map((r) => `${s(r.agent_id)}@${String(r.version)}`);
  }
  async deleteAgent(id: string): Promise<void> {
    await this.tx(async (db) => {
      await db.query('DELETE FROM agent_version_refs WHERE agent_id = $1', [id]);
      await db.query('DELETE FROM calls WHERE session_id IN (SELECT id FROM sessions WHERE agent_id = $1)', [id]);
      await db.query('DELETE FROM sessions WHERE agent_id = $1', [id]);
      await db.query('DELETE FROM agent_versions WHERE agent_id = $1', [id]);
      await db.query('DELETE FROM agents WHERE id = $1', [id]);
    });
  }

  // ---- vaults and credentials
  async addVault(rec: VaultRecord): Promise<void> {
    await this.q('INSERT INTO vaults (id, name, created_at) VALUES ($1, $2, $3)', [rec.id, rec.name, rec.createdAt]);
  }
  async getVault(id: string): Promise<VaultRecord | null> {
    const row = await this.one('SELECT * FROM vaults WHERE id = $1', [id]);
    return row ? toVault(row) : null;
  }
  async listVaults(page: PageRequest): Promise<Page<VaultRecord>> {
    return this.page('vaults', 'id', '', [], page, toVault);
  }
  async deleteVault(id: string): Promise<void> {
    await this.tx(async (db) => {
      await db.query('DELETE FROM credentials WHERE vault_id = $1', [id]);
      await db.query('DELETE FROM vaults WHERE id = $1', [id]);
    });
  }
  async addCredential(rec: CredentialRecord): Promise<void> {
    await this.q(`INSERT INTO credentials (id, vault_id, target, display_name, scheme, sealed, expires_at, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [rec.id, rec.vaultId, rec.target, rec.displayName, rec.scheme, rec.sealed,
      rec.expiresAt, rec.createdAt, rec.updatedAt]);
  }
  async getCredential(vaultId: string, id: string): Promise<CredentialRecord | null> {
    const row = await this.one('SELECT * FROM credentials WHERE vault_id = $1 AND id = $2', [vaultId, id]);
    return row ? toCredential(row) : null;
  }
  async listCredentials(vaultId: string, page: PageRequest): Promise<Page<CredentialRecord>> {
    return this.page('credentials', 'id', 'vault_id = $1', [vaultId], page, toCredential);
  }
  async allCredentials(vaultId: string): Promise<CredentialRecord[]> {
    return (await this.all('SELECT * FROM credentials WHERE vault_id = $1 ORDER BY id', [vaultId])).map(toCredential);
  }
  async updateCredential(rec: CredentialRecord): Promise<void> {
    await this.q(`UPDATE credentials SET target = $1, display_name = $2, scheme = $3, sealed = $4, expires_at = $5, updated_at = $6
      WHERE vault_id = $7 AND id = $8`, [rec.target, rec.displayName, rec.scheme, rec.sealed, rec.expiresAt, rec.updatedAt,
      rec.vaultId, rec.id]);
  }
  async deleteCredential(vaultId: string, id: string): Promise<void> {
    await this.q('DELETE FROM credentials WHERE vault_id = $1 AND id = $2', [vaultId, id]);
  }

  // ---- sessions
  async addSession(rec: SessionRecord): Promise<void> {
    await this.q(`INSERT INTO sessions (id, agent_id, agent_version, token_hash, vault_ids, created_at, expires_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7)`, [rec.id, rec.agentId, rec.agentVersion, rec.tokenHash, json(rec.vaultIds),
      rec.createdAt, rec.expiresAt]);
  }
  async getSession(id: string): Promise<SessionRecord | null> {
    const row = await this.one('SELECT * FROM sessions WHERE id = $1', [id]);
    return row ? toSession(row) : null;
  }
  async findSessionByTokenHash(hash: string): Promise<SessionRecord | null> {
    const row = await this.one('SELECT * FROM sessions WHERE token_hash = $1', [hash]);
    return row ? toSession(row) : null;
  }
  async listSessions(agentId: string, page: PageRequest): Promise<Page<SessionRecord>> {
    return this.page('sessions', 'id', 'agent_id = $1', [agentId], page, toSession);
  }
  async expiredSessions(now: string): Promise<SessionRecord[]> {
    return (await this.all('SELECT * FROM sessions WHERE expires_at <= $1 ORDER BY id', [now])).map(toSession);
  }
  async sessionsUsingVault(vaultId: string): Promise<string[]> {
    return (await this.all('SELECT id FROM sessions WHERE vault_ids::jsonb @> jsonb_build_array($1::text) ORDER BY id', [vaultId]))
      .map((r) => s(r.id));
  }
  async deleteSession(id: string): Promise<void> {
    await this.tx(async (db) => {
      await db.query('DELETE FROM calls WHERE session_id = $1', [id]);
      await db.query('DELETE FROM sessions WHERE id = $1', [id]);
    });
  }

  // ---- calls
  async addCall(rec: CallRecord): Promise<void> {
    await this.q(`INSERT INTO calls (id, session_id, via, tool, arguments, outcome, crash, model, stderr_tail, egress, duration_ms, started_at, approval, instance_id)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`, [rec.id, rec.sessionId, rec.via, rec.tool, json(rec.arguments),
      rec.outcome, jsonOrNull(rec.crash), json(rec.model), rec.stderrTail, json(rec.egress), rec.durationMs, rec.startedAt,
      jsonOrNull(rec.approval), rec.instanceId ?? null]);
  }
  async finishCall(rec: CallRecord): Promise<void> {
    await this.q('UPDATE calls SET outcome = $1, crash = $2, model = $3, stderr_tail = $4, egress = $5, duration_ms = $6, approval = $7 WHERE id = $8',
      [rec.outcome, jsonOrNull(rec.crash), json(rec.model), rec.stderrTail, json(rec.egress), rec.durationMs, jsonOrNull(rec.approval), rec.id]);
  }
  async getCall(sessionId: string, id: string): Promise<CallRecord | null> {
    const row = await this.one('SELECT * FROM calls WHERE session_id = $1 AND id = $2', [sessionId, id]);
    return row ? toCall(row) : null;
  }
  async listCalls(sessionId: string, page: PageRequest): Promise<Page<CallRecord>> {
    return this.page('calls', 'id', 'session_id = $1', [sessionId], page, toCall);
  }
  async findCalls(filter: CallFilter, page: PageRequest): Promise<Page<AgentCall>> {
    const conditions: string[] = [];
    const args: unknown[] = [];
    const narrow = (column: string, op: string, value: string | undefined) => {
      if (value === undefined) return;
      args.push(value);
      conditions.push(`${column} ${op} $${args.length}`);
    };
    narrow('s.agent_id', '=', filter.agentId);
    narrow('c.session_id', '=', filter.sessionId);
    narrow('c.tool', '=', filter.tool);
    narrow('c.outcome', '=', filter.outcome);
    narrow('c.id', '<', page.after);
    args.push(page.limit + 1);
    const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
    const rows = await this.all(`SELECT c.*, s.agent_id AS agent_id FROM calls c JOIN sessions s ON s.id = c.session_id ${where}
      ORDER BY c.id DESC LIMIT $${args.length}`, args);
    return pageFromRows(rows, page, (row) => ({ call: toCall(row), agentId: s(row.agent_id) }), (row) => s(row.id));
  }
  async findCall(id: string): Promise<AgentCall | null> {
    const row = await this.one('SELECT c.*, s.agent_id AS agent_id FROM calls c JOIN sessions s ON s.id = c.session_id WHERE c.id = $1', [id]);
    return row ? { call: toCall(row), agentId: s(row.agent_id) } : null;
  }

  // ---- instances (several replicas on one database)
  async renewInstanceLease(instanceId: string, leaseMs: number): Promise<void> {
    await this.q(`INSERT INTO instance_leases (id, expires_at) VALUES ($1, now() + $2 * interval '1 millisecond')
      ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at`, [instanceId, leaseMs]);
  }
  async interruptOrphanedCalls(): Promise<number> {
    // One transaction, so now() is one instant for both statements: a lease is either live for both or expired for both.
    return this.tx(async (db) => {
      const { rowCount } = await db.query(`UPDATE calls SET outcome = 'crash', crash = $1 WHERE outcome = 'running' AND (instance_id IS NULL
        OR NOT EXISTS (SELECT 1 FROM instance_leases l WHERE l.id = calls.instance_id AND l.expires_at > now()))`, [INTERRUPTED_CRASH]);
      await db.query('DELETE FROM instance_leases WHERE expires_at <= now()');
      return rowCount ?? 0;
    });
  }
  async releaseInstance(instanceId: string): Promise<number> {
    return this.tx(async (db) => {
      const { rowCount } = await db.query(`UPDATE calls SET outcome = 'crash', crash = $1 WHERE outcome = 'running' AND instance_id = $2`,
        [INTERRUPTED_CRASH, instanceId]);
      await db.query('DELETE FROM instance_leases WHERE id = $1', [instanceId]);
      return rowCount ?? 0;
    });
  }

  // ---- settings and exclusive work
  async claimSetting(name: string, value: string): Promise<string> {
    await this.q('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, value]);
    return s((await this.one('SELECT value FROM settings WHERE name = $1', [name]))?.value);
  }
  exclusively<T>(name: string, work: () => Promise<T>): Promise<T> {
    // A session lock on a connection of its own, held while `work` runs on the pool's others. If that
    // connection drops, PostgreSQL releases the lock with it.
    return this.withClient(async (client, markBroken) => {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [`exclusive:${name}`]).catch((err: unknown) => { throw unavailableOr(err); });
      try {
        return await work();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`exclusive:${name}`]).catch(markBroken);
      }
    });
  }

  // ---- idempotency
  async getIdempotent(scope: string): Promise<IdempotencyRecord | null> {
    const row = await this.one('SELECT * FROM idempotency WHERE scope = $1', [scope]);
    return row ? toIdempotency(row) : null;
  }
  async putIdempotent(rec: IdempotencyRecord): Promise<void> {
    await this.q(`INSERT INTO idempotency (scope, request_hash, status, body, created_at) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (scope) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status, body = EXCLUDED.body,
      created_at = EXCLUDED.created_at`, [rec.scope, rec.requestHash, rec.status, json(rec.body ?? null), rec.createdAt]);
  }
  async pruneIdempotent(olderThan: string): Promise<void> {
    await this.q('DELETE FROM idempotency WHERE created_at < $1', [olderThan]);
  }

  private closed = false;
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /**
   * One page of a table ordered by `key`, optionally filtered (`where` numbers its parameters from $1);
   * fetches one extra row to know if more follow.
   */
  private async page<T>(table: string, key: string, where: string, params: unknown[], page: PageRequest, map: (row: Row) => T): Promise<Page<T>> {
    const args = [...params];
    const conditions = where ? [where] : [];
    if (page.after !== undefined) {
      args.push(decodeCursor(key, page.after));
      conditions.push(`${key} > $${args.length}`);
    }
    args.push(page.limit + 1);
    const rows = await this.all(`SELECT * FROM ${table} ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''}
      ORDER BY ${key} LIMIT $${args.length}`, args);
    return pageFromRows(rows, page, map, (row) => encodeCursor(key, s(row[key])));
  }

  // ---- approvals, shared by the replicas
  async holdApproval(rec: HeldApprovalRecord, maxPerSession: number, now: string): Promise<boolean> {
    // One statement; two replicas holding for one session at the very same moment may both count below the
    // bound (it guards against a flood, it is not a quota), but never a queue of them.
    const { rowCount } = await this.q(`INSERT INTO approvals (id, session_id, call_id, tool, arguments, hidden_secrets, created_at, expires_at, holder, decision, decided_by, decided_at, reason)
      SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13
      WHERE (SELECT COUNT(*) FROM approvals a JOIN calls c ON c.id = a.call_id
        WHERE a.session_id = $2 AND a.decision IS NULL AND a.expires_at > $14 AND c.outcome = 'running') < $15
        AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = $2)`,
    [rec.id, rec.sessionId, rec.callId, rec.tool, json(rec.arguments), json(rec.hiddenSecrets), rec.createdAt, rec.expiresAt, rec.holder,
      rec.decision, rec.decidedBy, rec.decidedAt, rec.reason, now, maxPerSession]);
    return rowCount === 1;
  }
  async getApproval(id: string): Promise<HeldApprovalRecord | null> {
    const row = await this.one('SELECT * FROM approvals WHERE id = $1', [id]);
    return row ? toHeldApproval(row) : null;
  }
  async pendingApprovals(now: string, page: PageRequest, sessionId?: string): Promise<Page<HeldApprovalRecord>> {
    const rows = await this.all(`SELECT a.* FROM approvals a JOIN calls c ON c.id = a.call_id
      WHERE a.decision IS NULL AND a.expires_at > $1 AND c.outcome = 'running' AND ($2::text IS NULL OR a.session_id = $2) AND ($3::text IS NULL OR a.id > $3)
      ORDER BY a.id LIMIT $4`, [now, sessionId ?? null, page.after ?? null, page.limit + 1]);
    return pageFromRows(rows, page, toHeldApproval, (row) => s(row.id));
  }
  async decideApproval(id: string, decision: ApprovalDecision, only: { sessionId?: string; openAt?: string } = {}): Promise<boolean> {
    // Under READ COMMITTED a second UPDATE of the row waits for the first to commit, then re-checks
    // `decision IS NULL` on the row as it now is: it changes nothing, and the second decider is told so.
    const { rowCount } = await this.q(`UPDATE approvals SET decision = $1, decided_by = $2, decided_at = $3, reason = $4
      WHERE id = $5 AND decision IS NULL AND ($6::text IS NULL OR session_id = $6)
        AND ($7::text IS NULL OR (expires_at > $7 AND EXISTS (SELECT 1 FROM calls c WHERE c.id = approvals.call_id AND c.outcome = 'running')))`,
    [decision.decision, decision.decidedBy, decision.decidedAt, decision.reason, id, only.sessionId ?? null, only.openAt ?? null]);
    return rowCount === 1;
  }
  async settledApprovals(ids: readonly string[]): Promise<{ id: string; record: HeldApprovalRecord | null }[]> {
    if (ids.length === 0) return [];
    const rows = await this.all(`SELECT held.id AS held_id, a.* FROM unnest($1::text[]) AS held(id) LEFT JOIN approvals a ON a.id = held.id
      WHERE a.id IS NULL OR a.decision IS NOT NULL`, [ids]);
    return rows.map((row) => ({ id: s(row.held_id), record: row.id === null ? null : toHeldApproval(row) }));
  }
  async redeemApproval(id: string, expiresAt: string): Promise<boolean> {
    const { rowCount } = await this.q('INSERT INTO redeemed_approvals (id, expires_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [id, expiresAt]);
    return rowCount === 1;
  }
  async pruneApprovals(expiredBefore: string): Promise<void> {
    await this.q('DELETE FROM approvals WHERE expires_at < $1', [expiredBefore]);
    await this.q('DELETE FROM redeemed_approvals WHERE expires_at < $1', [expiredBefore]);
  }
}

async function insertAgentVersion(db: Queryable, rec: AgentVersionRecord): Promise<void> {
  await db.query('INSERT INTO agent_versions (agent_id, version, spec, created_at) VALUES ($1, $2, $3, $4)',
    [rec.agentId, rec.version, json(rec.spec), rec.createdAt]);
  for (const [kind, ref] of agentVersionRefs(rec.spec)) {
    await db.query('INSERT INTO agent_version_refs (agent_id, version, kind, ref) VALUES ($1, $2, $3, $4)', [rec.agentId, rec.version, kind, ref]);
  }
}

/**
 * Errors that mean "the database is not there" (refused, reset, shut down, starting up, a connection lost
 * mid-way) become a StoreUnavailableError, which the API answers with 503; anything else passes unchanged.
 */
function unavailableOr(err: unknown): unknown {
  if (err instanceof ConflictError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : '';
  const lost = typeof code === 'string' && (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', '57P01', '57P02', '57P03'].includes(code) || code.startsWith('08'));
  if (lost || /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message)) {
    return new StoreUnavailableError({ cause: err });
  }
  return err;
}
