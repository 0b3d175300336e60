/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, for revision 2026-07-28) as subako's endpoints
 * speak it: a server that negotiated it MAY answer a `tools/call` with a task handle (`resultType: "task"`, a
 * CreateTaskResult) instead of the result; the client then polls `tasks/get` until the task is terminal, answers
 * an `input_required` task's `inputRequests` with `tasks/update`, and may `tasks/cancel` it. Only a client that
 * declared the extension in the request's own `_meta` capabilities is ever given a task, and only such a client
 * may use the `tasks/` methods (-32021 otherwise). An unknown task id — made up, expired, or another session's —
 * is -32602, the same answer every time, so the id space is no oracle.
 *
 * Here: the wire names and shapes, and what a host of tasks (the platform's, per session) does for an endpoint
 * (TaskHost). The handlers are task-handlers.ts.
 */
import { SubakoError } from '../errors.js';
import type { CallToolResult } from '../tool.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The `_meta` key that relates a message to a task. */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

export const TASK_METHODS = { get: 'tasks/get', update: 'tasks/update', cancel: 'tasks/cancel' } as const;

/** JSON-RPC's code for a request whose client lacks a capability the server needs (2026-07-28). */
export const MISSING_CLIENT_CAPABILITY_RPC_CODE = -32021;
/** Invalid params: the extension's answer to an unknown task id. */
export const TASK_NOT_FOUND_RPC_CODE = -32602;

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

/** A task as the wire carries it (the extension's `Task`). */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  lastUpdatedAt: string;
  /** From creation, in ms; null: unlimited. */
  ttlMs: number | null;
  pollIntervalMs?: number;
}

/** A JSON-RPC error as a failed task carries it. */
export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

/** A task with what its status brings (`tasks/get`'s DetailedTask): the result, the error, the input requests. */
export type DetailedTaskView = TaskView & {
  result?: Record<string, unknown>;
  error?: TaskError;
  inputRequests?: Record<string, unknown>;
};

/** What a task-capable endpoint needs of whoever keeps its tasks (the platform keeps a session's, durably). */
export interface TaskHost {
  /**
   * Runs one call that may become a task. `call` runs the tool under the signal it is given; the host starts it at
   * once and answers `result` when it ends soon enough, else keeps it running, makes its task durable and answers
   * `task`. `requestSignal` (the client's request) stops the call only until it became a task. A call that rejects
   * before it became a task rejects `run` the same way (an input request is answered on the request itself).
   * `call`'s second argument is what the host asks of the call (TaskCall). A host may refuse the call before it
   * starts (its session's cap on tasks) with ToolCallRefusedError.
   */
  run(tool: string, call: (signal: AbortSignal, how: TaskCall) => Promise<CallToolResult>, requestSignal: AbortSignal, request?: TaskRequest): Promise<TaskRun>;
  /** The task with its status's payload; throws TaskNotFoundError. */
  get(taskId: string): Promise<DetailedTaskView>;
  /**
   * Gives an `input_required` task the answers to (some of) its requests; throws TaskNotFoundError. A task whose own
   * call asked continues with `resume`: the endpoint's way to call the tool again with the answers.
   */
  update(taskId: string, inputResponses: Record<string, unknown>, resume?: TaskResume): Promise<void>;
  /** Asks the task to stop (cooperative: its status may still end otherwise); throws TaskNotFoundError. */
  cancel(taskId: string): Promise<void>;
}

/** What a host of tasks asks of a call that may become a task (the ToolCallContext fields of the same names). */
export interface TaskCall {
  /** What a remote tool does with a task of its server's own: a host that keeps handles for them asks `pass`. */
  upstreamTasks: 'pass' | 'poll';
  /** Where a function call on a worker keeps its course, for the task to outlive the replica that sent it. */
  durableKey?: string;
}

/** The call a task runs, as far as a continuation needs it: its arguments. */
export interface TaskRequest {
  args: Record<string, unknown>;
}

/**
 * Calls `tool` again with `args`, continuing an input request: the client's answers and the state the tool gave
 * with its question (what the tool's ToolCallContext.input then carries), under `signal`.
 */
export type TaskResume = (
  tool: string, args: Record<string, unknown>, answer: { responses: Record<string, unknown>; requestState?: string }, signal: AbortSignal, how: TaskCall,
) => Promise<CallToolResult>;

export type TaskRun = { kind: 'result'; result: CallToolResult } | { kind: 'task'; task: TaskView };

/** No such task for this client: unknown, expired, or not its own. The message says which of the first two it can. */
export class TaskNotFoundError extends SubakoError {
  constructor(detail = 'Task not found') {
    super('task_not_found', `Failed to retrieve task: ${detail}`);
  }
}

/** Whether a request's declared client capabilities include the tasks extension. */
export function declaresTasks(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  if (typeof extensions !== 'object' || extensions === null) return false;
  const declared = (extensions as Record<string, unknown>)[TASKS_EXTENSION];
  return typeof declared === 'object' && declared !== null && !Array.isArray(declared);
}

/** The CreateTaskResult that answers a `tools/call` whose call became a task. */
export function createTaskResult(task: TaskView): Record<string, unknown> {
  return { resultType: 'task', ...task };
}

/** The `data` of the -32021 error that says a client must declare the extension. */
export const TASKS_CAPABILITY_REQUIRED = Object.freeze({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
