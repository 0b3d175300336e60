/**
 * The durable tasks of the `io.modelcontextprotocol/tasks` extension (platform/tasks/): one row per call that
 * became a task, bound to its session, holding its status and, sealed, its outcome — so that any replica answers
 * `tasks/get` for it, whichever ran the call.
 */

/** A task's status, as the extension names them; the last three are terminal. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface TaskRecord {
  /** The task id the client holds (unguessable). */
  id: string;
  sessionId: string;
  /** The published name of the tool whose call it is. */
  tool: string;
  status: TaskStatus;
  statusMessage: string | null;
  createdAt: string;
  updatedAt: string;
  /** `createdAt` plus `ttlMs`: past it the task is no longer served, and is pruned. */
  expiresAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  /** The process running the call (its instance id): a non-terminal task whose owner's lease lapsed has failed. */
  owner: string;
  /** Sealed: the result (`completed`) or the JSON-RPC error (`failed`); null before, and for a task failed by a lapse. */
  outcome: string | null;
  /** Sealed: what an `input_required` task asks, and what continues it; null otherwise. */
  pending: string | null;
  /** Sealed: the remote server's own task this task stands for; null for a task of subako's. */
  upstream: string | null;
}

/** A task as read: its row, and whether its owner's lease still holds (as the database's clock has it). */
export interface StoredTask extends TaskRecord {
  ownerLive: boolean;
}

/** How a task's status changes: its new status, and the sealed fields that come with it. */
export interface TaskChange {
  status: TaskStatus;
  statusMessage: string | null;
  outcome: string | null;
  pending: string | null;
  at: string;
  /** Present: the process that now runs the task's call (a continuation started on another replica). */
  owner?: string;
}

export interface TaskStore {
  /** Writes a new task; false when its session is gone. */
  addTask(rec: TaskRecord): Promise<boolean>;
  /** The task, only within its session (another session's id is as unknown as a made-up one). */
  getTask(sessionId: string, id: string): Promise<StoredTask | null>;
  /**
   * Changes a task that is not terminal, and that is `from` when given (`input_required` → `working`, taken by one
   * replica only); false when it was terminal already (or not `from`), or is gone.
   */
  changeTask(id: string, change: TaskChange, from?: TaskStatus): Promise<boolean>;
  /** Of `ids`, those that are terminal or gone: their calls, still running here, are to stop. */
  endedTasks(ids: readonly string[]): Promise<string[]>;
  /** Deletes the tasks past their expiry (`now`); returns how many. */
  pruneTasks(now: string): Promise<number>;
  /** How many of the session's tasks are neither terminal nor past their expiry (`now`): what its cap counts. */
  liveTasks(sessionId: string, now: string): Promise<number>;
}
