/**
 * The statements of the tasks table (task-store.ts), written once for both databases like statements.ts's.
 */
import type { Dialect } from './dialect.js';

const NOT_TERMINAL = "status IN ('working', 'input_required')";

export function taskStatementsFor(d: Dialect) {
  return {
    // Only while the session is there: a task of a session deleted meanwhile is not written.
    insert: `INSERT INTO tasks (id, session_id, tool, status, status_message, created_at, updated_at, expires_at, ttl_ms, poll_interval_ms, owner, outcome, pending, upstream)
      SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.id = ?)`,
    // Whether the owner's lease holds, on the database's clock (as every replica judges a lapse the same).
    byId: `SELECT t.*, CASE WHEN EXISTS (SELECT 1 FROM instance_leases l WHERE l.id = t.owner AND l.expires_at > ${d.now}) THEN 1 ELSE 0 END AS owner_live
      FROM tasks t WHERE t.id = ? AND t.session_id = ?`,
    change: `UPDATE tasks SET status = ?, status_message = ?, outcome = ?, pending = ?, updated_at = ?, owner = COALESCE(?, owner)
      WHERE id = ? AND ${NOT_TERMINAL} AND (CAST(? AS TEXT) IS NULL OR status = ?)`,
    ended: `SELECT wanted.value AS id FROM ${d.jsonStrings('?')} AS wanted LEFT JOIN tasks t ON t.id = wanted.value
      WHERE t.id IS NULL OR NOT (t.${NOT_TERMINAL})`,
    prune: 'DELETE FROM tasks WHERE expires_at <= ?',
    // A session's tasks not yet terminal nor expired: what its cap counts.
    live: `SELECT COUNT(*) AS n FROM tasks WHERE session_id = ? AND ${NOT_TERMINAL} AND expires_at > ?`,
  };
}

export type TaskStatements = ReturnType<typeof taskStatementsFor>;
