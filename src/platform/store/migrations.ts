/**
 * The schema as one ordered list of migrations, for both back ends. SQLite keeps how many have run in its
 * `user_version`; PostgreSQL in a `schema_migrations` table, migrating under an advisory lock so replicas
 * starting at once migrate once (postgres-store.ts). Opening a database runs the rest, each in its own
 * transaction. Never edit a migration that has shipped: append a new one.
 *
 * Each migration is one portable text (types both understand: TEXT, INTEGER; no AUTOINCREMENT, no
 * SQLite-only functions), turned into a dialect's text by `migrationSql`. Where a change cannot be said
 * portably, a migration carries its PostgreSQL text beside it (`postgres`).
 */
export interface Migration {
  version: number;
  description: string;
  /** The portable text; SQLite runs it as it is. */
  sql: string;
  /** PostgreSQL's own text, when the portable one does not do there. */
  postgres?: string;
}

export type SqlDialect = 'sqlite' | 'postgres';

/**
 * A migration's text for one dialect. PostgreSQL compares text by the database's collation (often
 * case-insensitive, punctuation-blind), SQLite by bytes; pages and cursors rely on byte order, so every TEXT
 * column is declared `COLLATE "C"` there, indexes included.
 */
export function migrationSql(migration: Migration, dialect: SqlDialect): string {
  if (dialect === 'sqlite') return migration.sql;
  return migration.postgres ?? migration.sql.replace(/\bTEXT\b/g, 'TEXT COLLATE "C"');
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'api keys, packages, skills, agents, vaults, sessions, calls, idempotency',
    sql: `
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE packages (
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        seq INTEGER NOT NULL,
        description TEXT NOT NULL,
        digest TEXT NOT NULL,
        manifest TEXT NOT NULL,
        tools TEXT NOT NULL,
        created_at TEXT NOT NULL,
        list_key TEXT NOT NULL UNIQUE,
        PRIMARY KEY (name, version),
        UNIQUE (name, seq)
      );
      CREATE TABLE skills (
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        seq INTEGER NOT NULL,
        description TEXT NOT NULL,
        digest TEXT NOT NULL,
        created_at TEXT NOT NULL,
        list_key TEXT NOT NULL UNIQUE,
        PRIMARY KEY (name, version),
        UNIQUE (name, seq)
      );
      CREATE TABLE agents (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        current_version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE agent_versions (
        agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        spec TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (agent_id, version)
      );
      -- What each agent version depends on, so deletes can be refused without scanning specs.
      CREATE TABLE agent_version_refs (
        agent_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        kind TEXT NOT NULL,
        ref TEXT NOT NULL,
        FOREIGN KEY (agent_id, version) REFERENCES agent_versions(agent_id, version) ON DELETE CASCADE
      );
      CREATE INDEX agent_version_refs_ref ON agent_version_refs(kind, ref);
      CREATE TABLE vaults (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE credentials (
        id TEXT PRIMARY KEY,
        vault_id TEXT NOT NULL REFERENCES vaults(id) ON DELETE CASCADE,
        target TEXT NOT NULL,
        display_name TEXT NOT NULL,
        scheme TEXT NOT NULL,
        sealed TEXT NOT NULL,
        expires_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX credentials_vault ON credentials(vault_id, id);
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        agent_version INTEGER NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        vault_ids TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX sessions_agent ON sessions(agent_id, id);
      CREATE INDEX sessions_expiry ON sessions(expires_at);
      CREATE TABLE calls (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        via TEXT NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        outcome TEXT NOT NULL,
        crash TEXT,
        model TEXT NOT NULL,
        stderr_tail TEXT NOT NULL,
        egress TEXT NOT NULL,
        duration_ms INTEGER,
        started_at TEXT NOT NULL
      );
      CREATE INDEX calls_session ON calls(session_id, id);
      CREATE INDEX calls_outcome ON calls(outcome);
      CREATE TABLE idempotency (
        scope TEXT PRIMARY KEY,
        request_hash TEXT NOT NULL,
        status INTEGER NOT NULL,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: 'calls: how a call of a require_approval tool was decided',
    sql: `
      ALTER TABLE calls ADD COLUMN approval TEXT;
      `,
  },
  {
    version: 3,
    description: 'api key scopes, last use and revocation',
    sql: `
      ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin';
      ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
      ALTER TABLE api_keys ADD COLUMN revoked_at TEXT;
    `,
  },
  {
    version: 4,
    description: 'several processes on one database: which instance runs each call, instance leases, settings',
    // A lease's expiry is a time of the database's own clock on PostgreSQL (timestamptz, compared with now()),
    // so replicas whose clocks disagree still agree on whose lease ran out; SQLite has one process and its clock.
    sql: `
      ALTER TABLE calls ADD COLUMN instance_id TEXT;
      CREATE INDEX calls_instance ON calls(instance_id);
      CREATE TABLE instance_leases (
        id TEXT PRIMARY KEY,
        expires_at TEXT NOT NULL
      );
      CREATE TABLE settings (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
    postgres: `
      ALTER TABLE calls ADD COLUMN instance_id TEXT COLLATE "C";
      CREATE INDEX calls_instance ON calls(instance_id);
      CREATE TABLE instance_leases (
        id TEXT COLLATE "C" PRIMARY KEY,
        expires_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE settings (
        name TEXT COLLATE "C" PRIMARY KEY,
        value TEXT COLLATE "C" NOT NULL
      );
    `,
  },
  {
    version: 5,
    description: 'approvals: calls held for a decision and spent approval ids, shared by replicas',
    sql: `
      CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        holder TEXT NOT NULL,
        decision TEXT,
        decided_by TEXT,
        decided_at TEXT,
        reason TEXT
      );
      CREATE INDEX approvals_session ON approvals(session_id, id);
      CREATE INDEX approvals_expiry ON approvals(expires_at);
      -- Elicited approvals are sealed into the request state, not stored; what is stored is that one was used.
      CREATE TABLE redeemed_approvals (
        id TEXT PRIMARY KEY,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX redeemed_approvals_expiry ON redeemed_approvals(expires_at);
    `,
  },
  {
    version: 6,
    description: 'approvals: held arguments kept exactly as an approver is shown them, and where a vault secret was hidden in them',
    sql: `
      ALTER TABLE approvals ADD COLUMN hidden_secrets TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 7,
    description: 'calls: the worker of the fleet that ran each call (its id and host)',
    sql: `
      ALTER TABLE calls ADD COLUMN worker_id TEXT;
      ALTER TABLE calls ADD COLUMN worker_host TEXT;
    `,
  },
  {
    version: 8,
    description: 'one outcome per call: lease epochs, the epoch a call began under, a lapsed lease noted on a call, calls\' idempotency keys',
    // A lease's epoch is new each time a lease is taken afresh (first, or after it lapsed): a call's end is written
    // against the epoch it began under (sql-store.ts finishCall). A key binds a session's retried call to its first
    // call; its result is kept sealed.
    sql: `
      ALTER TABLE instance_leases ADD COLUMN epoch TEXT NOT NULL DEFAULT '';
      ALTER TABLE calls ADD COLUMN lease_epoch TEXT;
      ALTER TABLE calls ADD COLUMN lease_lapsed TEXT;
      CREATE TABLE call_keys (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idempotency_key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        call_id TEXT NOT NULL,
        result TEXT,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (session_id, idempotency_key)
      );
      CREATE INDEX call_keys_expiry ON call_keys(expires_at);
    `,
  },
  {
    version: 9,
    description: 'calls: the W3C trace context of the request that made each call',
    sql: `
      ALTER TABLE calls ADD COLUMN traceparent TEXT;
    `,
  },
  {
    version: 10,
    description: 'agent versions: the remote tool definitions pinned with each, by digest',
    sql: `
      CREATE TABLE agent_tool_pins (
        agent_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        digest TEXT NOT NULL,
        definition TEXT NOT NULL,
        PRIMARY KEY (agent_id, version, server, tool),
        FOREIGN KEY (agent_id, version) REFERENCES agent_versions(agent_id, version) ON DELETE CASCADE
      );
    `,
  },
  {
    version: 11,
    description: 'calls: an index by start, for the stats of the last hour and day (GET /v1/calls/stats)',
    sql: `
      CREATE INDEX calls_started ON calls(started_at);
    `,
  },
  {
    version: 12,
    description: 'call slots: the calls each agent and session runs at once across replicas (fleet-wide admission)',
    // A slot counts while it has not expired (the call's deadline plus a grace) and the lease of the process that
    // took it holds: a replica that dies stops counting once its lease lapses, however long its calls' deadlines.
    sql: `
      CREATE TABLE call_slots (
        call_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        instance_id TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX call_slots_agent ON call_slots(agent_id);
      CREATE INDEX call_slots_session ON call_slots(session_id);
    `,
    postgres: `
      CREATE TABLE call_slots (
        call_id TEXT COLLATE "C" PRIMARY KEY,
        agent_id TEXT COLLATE "C" NOT NULL,
        session_id TEXT COLLATE "C" NOT NULL,
        instance_id TEXT COLLATE "C" NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX call_slots_agent ON call_slots(agent_id);
      CREATE INDEX call_slots_session ON call_slots(session_id);
    `,
  },
  {
    version: 13,
    description: 'tasks: the durable handles of calls that became tasks (the io.modelcontextprotocol/tasks extension), bound to their session',
    // `outcome` (the result or the JSON-RPC error), `pending` (the input requests of an `input_required` task and
    // what continues it) and `upstream` (a remote server's own task this one stands for) are sealed, bound to the
    // session and the task; `owner` is the process running the call, whose lapsed lease fails the task. Gone with
    // their session; pruned past `expires_at`.
    sql: `
      CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        tool TEXT NOT NULL,
        status TEXT NOT NULL,
        status_message TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        ttl_ms INTEGER NOT NULL,
        poll_interval_ms INTEGER NOT NULL,
        owner TEXT NOT NULL,
        outcome TEXT,
        pending TEXT,
        upstream TEXT
      );
      CREATE INDEX tasks_session ON tasks(session_id);
      CREATE INDEX tasks_expiry ON tasks(expires_at);
    `,
  },
  {
    version: 14,
    description: 'end users: users chosen by the operator\'s application, the vaults each owns, the sessions opened for each',
    // A vault or session with no user is the operator's, as every one made before users existed. Deleting a user
    // deletes its sessions and vaults in one transaction (sql-store.ts deleteUser); the references refuse an orphan.
    sql: `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        display_name TEXT,
        email TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      ALTER TABLE vaults ADD COLUMN user_id TEXT REFERENCES users(id);
      CREATE INDEX vaults_user ON vaults(user_id, id);
      ALTER TABLE sessions ADD COLUMN user_id TEXT REFERENCES users(id);
      CREATE INDEX sessions_user ON sessions(user_id, id);
    `,
  },
  {
    version: 15,
    description: 'OAuth at the door: the session each user has with each agent, opened or resumed by an access token',
    // One row per (user, agent): the session an agent endpoint reached with that user's access token opens, and
    // resumes while it lives. Gone with its session (deleted, expired, its user deleted) or its user.
    sql: `
      CREATE TABLE user_agent_sessions (
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        PRIMARY KEY (user_id, agent_id)
      );
      CREATE INDEX user_agent_sessions_session ON user_agent_sessions(session_id);
    `,
  },
  {
    version: 16,
    description: 'calls: one index of the running calls by process, in place of an index of every call by outcome and one by process',
    // Every statement that looked calls up by outcome or by process looks for running ones (a dead process's calls
    // marked unknown, an approval's call still running); a call searched by another outcome is found newest first by
    // id anyway. A quick call, written once as it ends (call-log.ts), now enters no index of these at all: two
    // B-trees fewer to write on every call's commit (an insert and its commit measured ≈ 150 → ≈ 95 µs).
    sql: `
      DROP INDEX calls_outcome;
      DROP INDEX calls_instance;
      CREATE INDEX calls_running ON calls(instance_id) WHERE outcome = 'running';
    `,
  },
];
