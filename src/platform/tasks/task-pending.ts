/**
 * What an `input_required` task of subako's own waits on, sealed in its row's `pending` column (as its outcome is:
 * the platform key, bound to the session and the task): the tool's input requests, which `tasks/get` shows its
 * client, and what continues the call once `tasks/update` brings the answers — the call's arguments and the state
 * the tool gave with its question (the session's input relay's, itself sealed and checked again on the retry).
 */
import { seal, unseal } from '../../common/index.js';

export interface TaskPending {
  inputRequests: Record<string, unknown>;
  args: Record<string, unknown>;
  requestState?: string;
}

export function sealPending(pending: TaskPending, key: Buffer, sessionId: string, taskId: string): string {
  return seal(JSON.stringify(pending), { key, context: pendingContext(sessionId, taskId) });
}

export function openPending(sealed: string, key: Buffer, sessionId: string, taskId: string): TaskPending {
  return JSON.parse(unseal(sealed, { key, context: pendingContext(sessionId, taskId) }).reveal()) as TaskPending;
}

function pendingContext(sessionId: string, taskId: string): string {
  return `subako.task-pending.v1:${sessionId}:${taskId}`;
}
