/**
 * The SQLite schema as an ordered list of migrations. The database's `user_version` says how many have run;
 * opening a database runs the rest, each in its own transaction. Never edit a migration that has shipped:
 * append a new one.
 */
export interface Migration {
  version: number;
  description: string;
  sql: string;
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
];
