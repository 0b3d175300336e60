/**
 * platform/store/: where the records live — the Store contract (one interface per aggregate), its one
 * implementation over SQLite and PostgreSQL (each statement written once, the dialects' differences apart), the
 * migrations, and the check that every process on a database holds the same sealing key.
 */
export { PostgresStore } from './postgres-store.js';
export { checkSealingKey } from './sealing-key-check.js';
export { SqliteStore } from './sqlite-store.js';
export * from './store.js';
export type { StoredTask, TaskChange, TaskRecord, TaskStatus, TaskStore } from './task-store.js';
