/**
 * A remote server's own tasks (the `io.modelcontextprotocol/tasks` extension, task-protocol.ts) as subako's client
 * meets them. A call made with ToolCallContext.upstreamTasks declares the extension to the server, which may then
 * answer with a task (taken off the wire by bounded-transport.ts). What then:
 * - `pass`: the call rejects with UpstreamTaskError, carrying the task and the way to reach it (the tool's
 *   UpstreamTaskAccess), for a caller that keeps a handle of its own for it (a session's tasks, for a client that
 *   declared the extension): its `tasks/get`, `tasks/update` and `tasks/cancel` go on to the server;
 * - `poll`: the call polls the server's `tasks/get`, at the task's `pollIntervalMs` (kept within bounds: a server
 *   cannot make us spin, nor wait an hour between two looks), until the task ends or its time is up, and returns
 *   its result as though the call had answered it (a client without tasks never sees one). A task that asks for
 *   input (`input_required`) cannot be answered so: it is cancelled, and the call says what was asked.
 *
 * What a server sends is untrusted: a task is checked here (its id bounded, visible ASCII; its status one of the
 * extension's) before anything is kept of it.
 */
import { SubakoError } from '../errors.js';
import { CallCancelledError, type CallToolResult, type UpstreamTaskAccess } from '../tool.js';
import { McpServerError } from './errors.js';
import { CLIENT_CAPABILITIES_KEY } from './input-requests.js';
import { TASKS_EXTENSION, TERMINAL_TASK_STATUSES, type DetailedTaskView, type TaskError, type TaskStatus, type TaskView } from './task-protocol.js';

/** The fewest ms between two polls, whatever the server asks. */
export const MIN_UPSTREAM_POLL_MS = 50;
/** The most ms between two polls, whatever the server asks. */
export const MAX_UPSTREAM_POLL_MS = 30_000;
/** How long a call polls a server's task at most, unless its caller says less. */
export const DEFAULT_UPSTREAM_POLL_CEILING_MS = 3_600_000;

const STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
const TASK_ID = /^[\x21-\x7e]{1,256}$/;

/** A server's task answer that is not one: its id or status unusable. */
export class UpstreamTaskInvalidError extends McpServerError {
  constructor(url: string, tool: string, why: string) {
    super('protocol', `the server of ${tool} answered with a task that is not one (${why}); a task has a taskId of 1 to 256 visible ASCII characters and a status of ${STATUSES.join(', ')}`, { url, tool });
  }
}

/** The call became a task of its server's (mode `pass`): the caller keeps a handle for it. */
export class UpstreamTaskError extends SubakoError {
  constructor(
    /** The server's task, checked. */
    readonly task: TaskView,
    /** How to reach it afterwards (the tool's connection). */
    readonly access: UpstreamTaskAccess,
    readonly tool: string,
  ) {
    super('upstream_task', `the server of ${tool} runs the call as its task ${task.taskId}`);
  }

  /** The task polled to its end, as mode `poll` would have: for a caller that can no longer pass it on. */
  poll(signal?: AbortSignal, ceilingMs?: number): Promise<CallToolResult> {
    return pollToResult(this.access, this.task, this.tool, { ...(signal ? { signal } : {}), ...(ceilingMs !== undefined ? { ceilingMs } : {}) });
  }
}

/** The task a server sent (a CreateTaskResult or a `tasks/get` answer), checked; throws a plain Error saying why not. */
export function parseUpstreamTask(raw: unknown): DetailedTaskView {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('not an object');
  const r = raw as Record<string, unknown>;
  if (typeof r.taskId !== 'string' || !TASK_ID.test(r.taskId)) throw new Error('its taskId is missing or unusable');
  if (typeof r.status !== 'string' || !STATUSES.includes(r.status as TaskStatus)) throw new Error(`its status ${JSON.stringify(String(r.status).slice(0, 40))} is not one of the extension's`);
  const now = new Date().toISOString();
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 2000) : undefined);
  const ms = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined);
  const task: DetailedTaskView = {
    taskId: r.taskId, status: r.status as TaskStatus,
    createdAt: text(r.createdAt) ?? now, lastUpdatedAt: text(r.lastUpdatedAt) ?? now,
    ttlMs: ms(r.ttlMs) ?? null,
  };
  const message = text(r.statusMessage);
  if (message !== undefined) task.statusMessage = message;
  const poll = ms(r.pollIntervalMs);
  if (poll !== undefined) task.pollIntervalMs = poll;
  if (isObject(r.result)) task.result = r.result;
  if (isObject(r.error) && typeof r.error.code === 'number' && typeof r.error.message === 'string') {
    task.error = { code: r.error.code, message: r.error.message.slice(0, 2000), ...(r.error.data !== undefined ? { data: r.error.data } : {}) };
  }
  if (isObject(r.inputRequests)) task.inputRequests = r.inputRequests;
  return task;
}

export function isTerminalTask(task: Pick<TaskView, 'status'>): boolean {
  return TERMINAL_TASK_STATUSES.includes(task.status);
}

/** How long to wait before the next look at a task: what it asks, within bounds. */
export function pollDelayMs(task: Pick<TaskView, 'pollIntervalMs'>, fallbackMs = 1_000): number {
  return Math.min(MAX_UPSTREAM_POLL_MS, Math.max(MIN_UPSTREAM_POLL_MS, task.pollIntervalMs ?? fallbackMs));
}

export interface PollOptions {
  signal?: AbortSignal;
  /** The longest the task is polled (its own ttl counts too); past it, it is cancelled and the call fails. */
  ceilingMs?: number;
}

/** Polls the task until it is terminal (or asks for input), then answers what the call returns. */
export async function pollToResult(access: UpstreamTaskAccess, first: TaskView, tool: string, options: PollOptions = {}): Promise<CallToolResult> {
  const { signal } = options;
  const ceiling = Math.min(options.ceilingMs ?? DEFAULT_UPSTREAM_POLL_CEILING_MS, first.ttlMs ?? Infinity);
  const deadline = Date.now() + ceiling;
  let task: DetailedTaskView = first;
  try {
    while (!isTerminalTask(task) && task.status !== 'input_required') {
      if (Date.now() + pollDelayMs(task) > deadline) {
        await access.cancel(task.taskId).catch(() => undefined);
        throw new McpServerError('transport', `the server's task for ${tool} did not end within ${Math.round(ceiling / 1000)} s of polling; it was cancelled`, { tool });
      }
      await sleep(pollDelayMs(task), signal);
      task = parseChecked(await access.get(task.taskId, signal), tool);
    }
  } catch (err) {
    if (signal?.aborted) {
      // The call was cancelled: so is the server's task (best effort, with the call's own signal gone).
      await access.cancel(task.taskId).catch(() => undefined);
      throw new CallCancelledError(tool);
    }
    throw err;
  }
  if (task.status === 'input_required') {
    await access.cancel(task.taskId).catch(() => undefined);
    const asked = task.inputRequests === undefined ? 'input' : `input (${Object.keys(task.inputRequests).slice(0, 8).join(', ')})`;
    return { content: [{ type: 'text', text: `The tool ${tool} did not complete: its server's task asked for ${asked}, which only a client that declared the tasks extension can give; the task was cancelled.` }], isError: true };
  }
  return resultOfTask(task, tool);
}

/** A terminal task's result as a call's: its result when completed; a failure or a cancellation as a tool error. */
export function resultOfTask(task: DetailedTaskView, tool: string): CallToolResult {
  if (task.status === 'completed' && task.result !== undefined && Array.isArray(task.result.content)) return task.result as unknown as CallToolResult;
  if (task.status === 'completed') return { content: [{ type: 'text', text: `The tool ${tool}'s server completed its task without a result.` }], isError: true };
  if (task.status === 'cancelled') return { content: [{ type: 'text', text: `The tool ${tool}'s server cancelled its task${task.statusMessage ? `: ${task.statusMessage}` : ''}.` }], isError: true };
  const error: TaskError | undefined = task.error;
  throw new McpServerError('rejected', `the server's task for ${tool} failed: ${error?.message ?? task.statusMessage ?? 'no reason given'}`, { tool, ...(error ? { rpcCode: error.code } : {}) });
}

function parseChecked(raw: unknown, tool: string): DetailedTaskView {
  try {
    return parseUpstreamTask(raw);
  } catch (err) {
    throw new McpServerError('protocol', `the server of ${tool} answered tasks/get with something that is not a task (${(err as Error).message})`, { tool });
  }
}

function isObject(v: unknown): v is Record<string, unknown> & { code?: unknown; message?: unknown; data?: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => { signal?.removeEventListener('abort', stop); resolve(); }, ms);
    const stop = () => { clearTimeout(timer); reject(signal!.reason); };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/** A request's `_meta` with the extension added to its declared client capabilities (over the SDK's empty declaration). */
export function declaringTasks(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  const capabilities = (meta?.[CLIENT_CAPABILITIES_KEY] ?? {}) as Record<string, unknown>;
  const extensions = (capabilities.extensions ?? {}) as Record<string, unknown>;
  return { ...meta, [CLIENT_CAPABILITIES_KEY]: { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } } };
}
