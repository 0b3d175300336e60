/**
 * platform/tasks/: tasks for long calls (the io.modelcontextprotocol/tasks extension) through a session, kept
 * durably in the store so that any replica serves them.
 */
export { SessionTasks, DEFAULT_TASK_GRACE_MS, DEFAULT_TASK_POLL_INTERVAL_MS, DEFAULT_TASK_TTL_MS, type SessionTasksOptions } from './session-tasks.js';
export { MAX_TASK_RESULT_BYTES, boundedResult } from './task-outcome.js';
