/**
 * The link from a task of subako's to the remote server's own task it stands for (a call whose server answered
 * with a task, passed through to a client that declared the extension): the server's task id, sealed in the task's
 * `upstream` column as its outcome is (task-outcome.ts: the platform key, bound to the session and the task). The
 * server itself is the task's tool: whichever replica serves `tasks/get` reaches it through the session's tool of
 * that name, on that replica's own connection.
 */
import { seal, unseal } from '../../common/index.js';

export interface UpstreamLink {
  /** The remote server's task id (checked when it arrived: 1 to 256 visible ASCII characters). */
  taskId: string;
}

export function sealUpstreamLink(link: UpstreamLink, key: Buffer, sessionId: string, taskId: string): string {
  return seal(JSON.stringify({ taskId: link.taskId }), { key, context: linkContext(sessionId, taskId) });
}

export function openUpstreamLink(sealed: string, key: Buffer, sessionId: string, taskId: string): UpstreamLink {
  const opened = JSON.parse(unseal(sealed, { key, context: linkContext(sessionId, taskId) }).reveal()) as { taskId?: unknown };
  if (typeof opened.taskId !== 'string') throw new Error('a task\'s upstream link holds no task id');
  return { taskId: opened.taskId };
}

function linkContext(sessionId: string, taskId: string): string {
  return `subako.task-upstream.v1:${sessionId}:${taskId}`;
}
