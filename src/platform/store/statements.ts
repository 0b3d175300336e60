/**
 * Every statement the store runs, written once for both databases: `?` placeholders (numbered for PostgreSQL
 * by the dialect) and the dialect's pieces where the databases differ (dialect.ts). The store (sql-store.ts)
 * holds no SQL of its own; the drivers hold only their bookkeeping (migrations, locks, transactions).
 *
 * Portable on purpose: `ON CONFLICT` rather than SQLite's `INSERT OR …`, `CAST(? AS TEXT) IS NULL` where a
 * parameter may be null (PostgreSQL must know its type), JSON read through `dialect.jsonStrings`.
 */
import type { Dialect } from './dialect.js';

/** A table of records ordered by `key`: its first page, and the page after a cursor (each fetches `limit + 1`). */
export interface PageStatements {
  first: string;
  after: string;
  /** The column pages are ordered by, whose value is the cursor. */
  key: 'id' | 'list_key';
}

/** One page of `table` by `key`, optionally within `where` (its placeholders come first). */
function pages(table: string, key: PageStatements['key'], where?: string): PageStatements {
  const within = where ? ` WHERE ${where}` : '';
  return {
    first: `SELECT * FROM ${table}${within} ORDER BY ${key} LIMIT ?`,
    after: `SELECT * FROM ${table}${within}${where ? ' AND' : ' WHERE'} ${key} > ? ORDER BY ${key} LIMIT ?`,
    key,
  };
}

/** Packages and skills keep versions alike: immutable, with an ordinal per name ("latest" is the highest). */
function versions(table: 'packages' | 'skills') {
  return {
    byVersion: `SELECT * FROM ${table} WHERE name = ? AND version = ?`,
    taken: `SELECT 1 AS taken FROM ${table} WHERE name = ? AND version = ?`,
    latest: `SELECT * FROM ${table} WHERE name = ? ORDER BY seq DESC LIMIT 1`,
    lastSeq: `SELECT MAX(seq) AS m FROM ${table} WHERE name = ?`,
    delete: `DELETE FROM ${table} WHERE name = ? AND version = ?`,
    pages: pages(table, 'list_key'),
  };
}

/** A call with the agent of its session. */
const CALL_WITH_AGENT = 'SELECT c.*, s.agent_id AS agent_id FROM calls c JOIN sessions s ON s.id = c.session_id';

/** The filters of a search across calls, each narrowing by one parameter (`CallFilter`, then the cursor). */
export const CALL_SEARCH_FILTERS = {
  agentId: 's.agent_id = ?',
  sessionId: 'c.session_id = ?',
  tool: 'c.tool = ?',
  outcome: 'c.outcome = ?',
  before: 'c.id < ?',
} as const;

/** A search across calls, newest first, narrowed by the given filters (in CALL_SEARCH_FILTERS' order). */
export function callSearch(filters: readonly (keyof typeof CALL_SEARCH_FILTERS)[]): string {
  const where = filters.length > 0 ? ` WHERE ${filters.map((f) => CALL_SEARCH_FILTERS[f]).join(' AND ')}` : '';
  return `${CALL_WITH_AGENT}${where} ORDER BY c.id DESC LIMIT ?`;
}

/**
 * The outcomes a stats query counts as errors: the tool failed, crashed, was cut off, or was called wrongly.
 * A denial, a cancellation and a round of input are not the tool's failures.
 */
export const ERROR_OUTCOMES = ['tool_error', 'crash', 'unknown', 'invalid_arguments'] as const;
const IS_ERROR = `CASE WHEN c.outcome IN (${ERROR_OUTCOMES.map((o) => `'${o}'`).join(', ')}) THEN 1 ELSE 0 END`;

/**
 * Calls and errors per time bucket since a moment (`?`s: the bucket's length in characters of started_at, the
 * moment). ISO text of one format, so a prefix is a minute or an hour and text order is time order.
 */
const CALL_STATS_BUCKETS = `SELECT substr(c.started_at, 1, ?) AS bucket, COUNT(*) AS calls, SUM(${IS_ERROR}) AS errors
  FROM calls c WHERE c.started_at >= ? GROUP BY 1 ORDER BY 1`;

/**
 * Per key (a tool, an agent): calls, errors, and the 50th and 95th percentile of the ended calls' durations by
 * nearest rank (the smallest duration whose rank r has r/n ≥ p), with window functions both databases have.
 */
const callStatsBy = (key: string): string => `WITH w AS (
    SELECT ${key} AS k, c.duration_ms AS d, ${IS_ERROR} AS e FROM calls c JOIN sessions s ON s.id = c.session_id WHERE c.started_at >= ?
  ), ranked AS (
    SELECT k, d, ROW_NUMBER() OVER (PARTITION BY k ORDER BY d) AS rn, COUNT(*) OVER (PARTITION BY k) AS n FROM w WHERE d IS NOT NULL
  ), pct AS (
    SELECT k, MIN(CASE WHEN rn * 100 >= n * 50 THEN d END) AS p50, MIN(CASE WHEN rn * 100 >= n * 95 THEN d END) AS p95 FROM ranked GROUP BY k
  ), counts AS (
    SELECT k, COUNT(*) AS calls, SUM(e) AS errors FROM w GROUP BY k
  )
  SELECT counts.k AS k, counts.calls AS calls, counts.errors AS errors, pct.p50 AS p50, pct.p95 AS p95
  FROM counts LEFT JOIN pct ON pct.k = counts.k ORDER BY counts.calls DESC, counts.k`;

/** A call cut off is marked `unknown` with this crash (its one `?`: the crash as JSON). */
const INTERRUPT = "UPDATE calls SET outcome = 'unknown', crash = ? WHERE outcome = 'running'";

/** The epoch of a process's lease while it holds (its one `?`: the instance id), else NULL. */
const liveEpoch = (d: Dialect, instance: string): string =>
  `(SELECT l.epoch FROM instance_leases l WHERE l.id = ${instance} AND l.expires_at > ${d.now})`;

/** A call slot (alias `c`, or the table's name) that still counts: not expired, its process's lease live. */
function liveSlot(d: Dialect, alias = 'c'): string {
  return `${alias}.expires_at > ${d.now}
    AND EXISTS (SELECT 1 FROM instance_leases l WHERE l.id = ${alias}.instance_id AND l.expires_at > ${d.now})`;
}

export function statementsFor(d: Dialect) {
  return {
    /** The health check's question: does the database answer at all. */
    ping: 'SELECT 1 AS one',
    apiKeys: {
      insert: 'INSERT INTO api_keys (id, name, hash, prefix, scope, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      byHash: 'SELECT * FROM api_keys WHERE hash = ?',
      count: 'SELECT COUNT(*) AS n FROM api_keys',
      byId: 'SELECT * FROM api_keys WHERE id = ?',
      // One statement for any number of ids, given as one JSON array (SQLite's cache keeps statements by text).
      byIds: `SELECT * FROM api_keys WHERE id IN (SELECT ids.value FROM ${d.jsonStrings('?')} AS ids)`,
      pages: pages('api_keys', 'id'),
      touch: 'UPDATE api_keys SET last_used_at = ? WHERE id = ?',
      // Locks the admin keys in force (PostgreSQL): two replicas revoking the last two at once take turns, and
      // the second then counts one left and refuses, as SQLite's single writer does.
      adminsInForce: `SELECT id FROM api_keys WHERE scope = 'admin' AND revoked_at IS NULL${d.forUpdate}`,
      standing: 'SELECT scope, revoked_at FROM api_keys WHERE id = ?',
      revoke: 'UPDATE api_keys SET revoked_at = ? WHERE id = ?',
    },
    packages: {
      ...versions('packages'),
      insert: `INSERT INTO packages (name, version, seq, description, digest, manifest, tools, created_at, list_key)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      summaries: 'SELECT name, version, seq, description, digest, created_at FROM packages WHERE name = ? ORDER BY seq',
      all: 'SELECT * FROM packages ORDER BY list_key',
      withDigest: 'SELECT COUNT(*) AS n FROM packages WHERE digest = ?',
    },
    skills: {
      ...versions('skills'),
      insert: 'INSERT INTO skills (name, version, seq, description, digest, created_at, list_key) VALUES (?, ?, ?, ?, ?, ?, ?)',
    },
    agents: {
      insert: 'INSERT INTO agents (id, name, current_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      byId: 'SELECT * FROM agents WHERE id = ?',
      pages: pages('agents', 'id'),
      // A second publisher waits here (PostgreSQL) and then sees the version the first one made current.
      currentVersion: `SELECT current_version FROM agents WHERE id = ?${d.forUpdate}`,
      publish: 'UPDATE agents SET current_version = ?, name = ?, updated_at = ? WHERE id = ?',
      insertVersion: 'INSERT INTO agent_versions (agent_id, version, spec, created_at) VALUES (?, ?, ?, ?)',
      version: 'SELECT * FROM agent_versions WHERE agent_id = ? AND version = ?',
      // Versions page by their number (the cursor is the number as text).
      versionsAfter: 'SELECT * FROM agent_versions WHERE agent_id = ? AND version > ? ORDER BY version LIMIT ?',
      insertRef: 'INSERT INTO agent_version_refs (agent_id, version, kind, ref) VALUES (?, ?, ?, ?)',
      usersOf: 'SELECT agent_id, version FROM agent_version_refs WHERE kind = ? AND ref = ? ORDER BY agent_id, version',
      deleteRefs: 'DELETE FROM agent_version_refs WHERE agent_id = ?',
      insertPin: 'INSERT INTO agent_tool_pins (agent_id, version, server, tool, digest, definition) VALUES (?, ?, ?, ?, ?, ?)',
      pins: 'SELECT * FROM agent_tool_pins WHERE agent_id = ? AND version = ? ORDER BY server, tool',
      deletePins: 'DELETE FROM agent_tool_pins WHERE agent_id = ?',
      deleteCalls: 'DELETE FROM calls WHERE session_id IN (SELECT id FROM sessions WHERE agent_id = ?)',
      deleteSessions: 'DELETE FROM sessions WHERE agent_id = ?',
      deleteVersions: 'DELETE FROM agent_versions WHERE agent_id = ?',
      delete: 'DELETE FROM agents WHERE id = ?',
    },
    vaults: {
      insert: 'INSERT INTO vaults (id, name, user_id, created_at) VALUES (?, ?, ?, ?)',
      byId: 'SELECT * FROM vaults WHERE id = ?',
      byIds: `SELECT * FROM vaults WHERE id IN (SELECT ids.value FROM ${d.jsonStrings('?')} AS ids)`,
      pages: pages('vaults', 'id'),
      deleteCredentials: 'DELETE FROM credentials WHERE vault_id = ?',
      delete: 'DELETE FROM vaults WHERE id = ?',
      insertCredential: `INSERT INTO credentials (id, vault_id, target, display_name, scheme, sealed, expires_at, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      credential: 'SELECT * FROM credentials WHERE vault_id = ? AND id = ?',
      credentialPages: pages('credentials', 'id', 'vault_id = ?'),
      credentials: 'SELECT * FROM credentials WHERE vault_id = ? ORDER BY id',
      updateCredential: `UPDATE credentials SET target = ?, display_name = ?, scheme = ?, sealed = ?, expires_at = ?, updated_at = ?
        WHERE vault_id = ? AND id = ?`,
      deleteCredential: 'DELETE FROM credentials WHERE vault_id = ? AND id = ?',
    },
    users: {
      insert: 'INSERT INTO users (id, display_name, email, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      byId: 'SELECT * FROM users WHERE id = ?',
      pages: pages('users', 'id'),
      update: 'UPDATE users SET display_name = ?, email = ?, updated_at = ? WHERE id = ?',
      vaultPages: pages('vaults', 'id', 'user_id = ?'),
      vaultIds: 'SELECT id FROM vaults WHERE user_id = ? ORDER BY id',
      sessionPages: pages('sessions', 'id', 'user_id = ?'),
      sessionIds: 'SELECT id FROM sessions WHERE user_id = ? ORDER BY id',
      // What goes with a user, children first (the references refuse an orphan): its sessions' calls, then its sessions
      // (their approvals and call keys go with them), its vaults' credentials, its vaults, the user.
      deleteCalls: 'DELETE FROM calls WHERE session_id IN (SELECT id FROM sessions WHERE user_id = ?)',
      deleteSessions: 'DELETE FROM sessions WHERE user_id = ?',
      deleteCredentials: 'DELETE FROM credentials WHERE vault_id IN (SELECT id FROM vaults WHERE user_id = ?)',
      deleteVaults: 'DELETE FROM vaults WHERE user_id = ?',
      delete: 'DELETE FROM users WHERE id = ?',
    },
    userAgentSessions: {
      // The live session a user has with an agent (a row whose session expired is passed over, and replaced).
      live: `SELECT s.* FROM user_agent_sessions u JOIN sessions s ON s.id = u.session_id
        WHERE u.user_id = ? AND u.agent_id = ? AND s.expires_at > ?`,
      put: `INSERT INTO user_agent_sessions (user_id, agent_id, session_id) VALUES (?, ?, ?)
        ON CONFLICT (user_id, agent_id) DO UPDATE SET session_id = excluded.session_id`,
    },
    sessions: {
      insert: 'INSERT INTO sessions (id, agent_id, agent_version, token_hash, vault_ids, user_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      byId: 'SELECT * FROM sessions WHERE id = ?',
      byTokenHash: 'SELECT * FROM sessions WHERE token_hash = ?',
      pages: pages('sessions', 'id', 'agent_id = ?'),
      expired: 'SELECT * FROM sessions WHERE expires_at <= ? ORDER BY id',
      usingVault: `SELECT id FROM sessions s WHERE EXISTS (SELECT 1 FROM ${d.jsonStrings('s.vault_ids')} AS v WHERE v.value = ?) ORDER BY id`,
      deleteCalls: 'DELETE FROM calls WHERE session_id = ?',
      delete: 'DELETE FROM sessions WHERE id = ?',
    },
    calls: {
      // The lease epoch a call begins under is the database's word, read as the call is recorded (NULL: its
      // process holds no live lease just now).
      insert: `INSERT INTO calls (id, session_id, via, tool, arguments, outcome, crash, model, stderr_tail, egress, duration_ms, started_at, approval, instance_id,
        traceparent, lease_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${liveEpoch(d, '?')})`,
      // A call recorded once, as it ends (it was quick: call-log.ts): the whole record, with its worker, unless its
      // session is gone (then nothing: the deletion took its calls) or a record of it exists already (a `running`
      // one whose write's answer was lost, or this very write landing twice: sql-store.ts takes it from there).
      insertEnded: `INSERT INTO calls (id, session_id, via, tool, arguments, outcome, crash, model, stderr_tail, egress, duration_ms, started_at, approval, instance_id,
        traceparent, worker_id, worker_host, lease_epoch) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${liveEpoch(d, '?')}
        WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?) ON CONFLICT (id) DO NOTHING`,
      // Fenced: only a call still running, whose process holds the very lease it began under (a call of no
      // process, recorded in-process without one, has none to check). Anything else takes the slow way (sql-store.ts).
      finish: `UPDATE calls SET outcome = ?, crash = ?, model = ?, stderr_tail = ?, egress = ?, duration_ms = ?, approval = ?, worker_id = ?, worker_host = ?
        WHERE id = ? AND outcome = 'running' AND (instance_id IS NULL OR lease_epoch = ${liveEpoch(d, 'calls.instance_id')})`,
      endState: 'SELECT outcome, crash, duration_ms FROM calls WHERE id = ?',
      finishLapsed: `UPDATE calls SET outcome = ?, crash = ?, model = ?, stderr_tail = ?, egress = ?, duration_ms = ?, approval = ?, worker_id = ?, worker_host = ?,
        lease_lapsed = ? WHERE id = ?`,
      inSession: 'SELECT * FROM calls WHERE session_id = ? AND id = ?',
      pages: pages('calls', 'id', 'session_id = ?'),
      withAgent: `${CALL_WITH_AGENT} WHERE c.id = ?`,
      statsBuckets: CALL_STATS_BUCKETS,
      statsByTool: callStatsBy('c.tool'),
      statsByAgent: callStatsBy('s.agent_id'),
    },
    callSlots: {
      // Taken under the agent's lock (sql-store.ts takeCallSlot): the counts are of slots that still count — not
      // expired, and of a process whose lease holds — so a crashed replica's slots stop counting with its lease.
      take: `INSERT INTO call_slots (call_id, agent_id, session_id, instance_id, expires_at)
        SELECT ?, ?, ?, ?, ${d.msFromNow}
        WHERE (SELECT count(*) FROM call_slots c WHERE c.agent_id = ? AND ${liveSlot(d)}) < ?
          AND (SELECT count(*) FROM call_slots c WHERE c.session_id = ? AND ${liveSlot(d)}) < ?
        ON CONFLICT (call_id) DO NOTHING`,
      drop: 'DELETE FROM call_slots WHERE call_id = ?',
      dropLapsed: `DELETE FROM call_slots WHERE NOT (${liveSlot(d, 'call_slots')})`,
    },
    instances: {
      // Renewed in time, a lease keeps its epoch; taken afresh (new, or after it lapsed) it gets the one given.
      renew: `INSERT INTO instance_leases (id, expires_at, epoch) VALUES (?, ${d.msFromNow}, ?)
        ON CONFLICT (id) DO UPDATE SET epoch = CASE WHEN instance_leases.expires_at > ${d.now} THEN instance_leases.epoch ELSE excluded.epoch END,
          expires_at = excluded.expires_at
        RETURNING epoch`,
      interruptOrphans: `${INTERRUPT} AND (instance_id IS NULL
        OR NOT EXISTS (SELECT 1 FROM instance_leases l WHERE l.id = calls.instance_id AND l.expires_at > ${d.now}))`,
      dropExpired: `DELETE FROM instance_leases WHERE expires_at <= ${d.now}`,
      interruptOf: `${INTERRUPT} AND instance_id = ?`,
      drop: 'DELETE FROM instance_leases WHERE id = ?',
      dropAll: 'DELETE FROM instance_leases',
      claimSetting: 'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
      setting: 'SELECT value FROM settings WHERE name = ?',
    },
    idempotency: {
      byScope: 'SELECT * FROM idempotency WHERE scope = ?',
      put: `INSERT INTO idempotency (scope, request_hash, status, body, created_at) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (scope) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status, body = excluded.body,
        created_at = excluded.created_at`,
      prune: 'DELETE FROM idempotency WHERE created_at < ?',
    },
    callKeys: {
      // A key bound and not expired stays; an expired one is taken over; a session gone binds none.
      claim: `INSERT INTO call_keys (session_id, idempotency_key, request_hash, call_id, result, created_at, expires_at)
        SELECT ?, ?, ?, ?, NULL, ?, ? WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = ?)
        ON CONFLICT (session_id, idempotency_key) DO UPDATE SET request_hash = excluded.request_hash, call_id = excluded.call_id, result = NULL,
          created_at = excluded.created_at, expires_at = excluded.expires_at
        WHERE call_keys.expires_at <= ?`,
      byKey: 'SELECT * FROM call_keys WHERE session_id = ? AND idempotency_key = ?',
      takeOver: `UPDATE call_keys SET call_id = ?, created_at = ?, expires_at = ?
        WHERE session_id = ? AND idempotency_key = ? AND call_id = ? AND result IS NULL AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.id = call_keys.call_id)`,
      settle: 'UPDATE call_keys SET result = ? WHERE session_id = ? AND idempotency_key = ? AND call_id = ?',
      release: 'DELETE FROM call_keys WHERE session_id = ? AND idempotency_key = ? AND call_id = ?',
      prune: 'DELETE FROM call_keys WHERE expires_at <= ?',
    },
    approvals: {
      // One statement: on SQLite the count and the insert cannot be split by another writer; on PostgreSQL two
      // replicas holding for one session at the very same moment may both count below the bound (it guards
      // against a flood, it is not a quota), but never a queue of them.
      hold: `INSERT INTO approvals (id, session_id, call_id, tool, arguments, hidden_secrets, created_at, expires_at, holder, decision, decided_by, decided_at, reason)
        SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
        WHERE (SELECT COUNT(*) FROM approvals a JOIN calls c ON c.id = a.call_id
          WHERE a.session_id = ? AND a.decision IS NULL AND a.expires_at > ? AND c.outcome = 'running') < ?
          AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = ?)`,
      byId: 'SELECT * FROM approvals WHERE id = ?',
      pending: `SELECT a.* FROM approvals a JOIN calls c ON c.id = a.call_id
        WHERE a.decision IS NULL AND a.expires_at > ? AND c.outcome = 'running'
          AND (CAST(? AS TEXT) IS NULL OR a.session_id = ?) AND (CAST(? AS TEXT) IS NULL OR a.id > ?)
        ORDER BY a.id LIMIT ?`,
      // PostgreSQL (READ COMMITTED): a second UPDATE of the row waits for the first to commit, then re-checks
      // `decision IS NULL` on the row as it now is: it changes nothing, and the second decider is told so.
      decide: `UPDATE approvals SET decision = ?, decided_by = ?, decided_at = ?, reason = ?
        WHERE id = ? AND decision IS NULL AND (CAST(? AS TEXT) IS NULL OR session_id = ?)
          AND (CAST(? AS TEXT) IS NULL OR (expires_at > ? AND EXISTS (SELECT 1 FROM calls c WHERE c.id = approvals.call_id AND c.outcome = 'running')))`,
      settled: `SELECT held.value AS held_id, a.* FROM ${d.jsonStrings('?')} AS held LEFT JOIN approvals a ON a.id = held.value
        WHERE a.id IS NULL OR a.decision IS NOT NULL`,
      redeem: 'INSERT INTO redeemed_approvals (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING',
      pruneHeld: 'DELETE FROM approvals WHERE expires_at < ?',
      pruneRedeemed: 'DELETE FROM redeemed_approvals WHERE expires_at < ?',
    },
  };
}

export type Statements = ReturnType<typeof statementsFor>;
