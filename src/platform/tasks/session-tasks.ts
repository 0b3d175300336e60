/**
 * Tasks for long calls (the `io.modelcontextprotocol/tasks` extension, mcp/task-protocol.ts) through a session:
 * the session's MCP endpoint hands every `tools/call` of a client that declared the extension to its session's
 * TaskHost here. The call starts at once; when it ends within `graceMs` the client gets its result as any other
 * client would, and when it runs longer it becomes a task — written to the store first (the extension forbids
 * answering with a task `tasks/get` cannot yet find), then answered as the CreateTaskResult — and runs on, no
 * longer tied to the client's request.
 *
 * Durable and shared: the task is a row of the store, bound to its session, so `tasks/get`, `tasks/update` and
 * `tasks/cancel` work through either URL of the session and through any replica. Its outcome (the result, or the
 * JSON-RPC error) is sealed in the row (task-outcome.ts). A task of another session, an expired one and a
 * made-up id get the same -32602 (no oracle): the id alone (192 random bits) never reaches another session's
 * tasks. A cancellation is written to the store (the task is `cancelled` from then on) and stops the call: at
 * once on the replica running it, within a second on another (running-tasks.ts). A task whose running process
 * stopped (its lease lapsed) before the call ended is `failed`: whether the tool ran to its end is not known.
 *
 * A task keeps `ttlMs` (default an hour, never past its session's end) and is then no longer served; the sweeper
 * prunes it. `pollIntervalMs` (default a second) is what clients are asked to poll at. A session holds at most
 * `sessionTaskLimit` tasks not yet ended (default 32): a call past it is refused before it starts (-32000, naming
 * the cap and its setting), since each may hold a remote server's work or a worker's slot for an hour.
 *
 * A remote server's own task passes through: a call of such a client runs with `upstreamTasks: 'pass'`, and a
 * server that answers it with a task (upstream-tasks.ts in mcp/) gets a task of subako's standing for it, linked
 * (upstream-link.ts) to the server's task id. Its `tasks/get`, `tasks/update` and `tasks/cancel` go on to the server
 * through the session's tool of that name, on whichever replica is asked; its end is kept in the row as any task's.
 * Such a task runs on no process of ours, so no lease fails it.
 *
 * A function call on a worker outlives the replica that sent it (scale-out): it runs with the task's durable key,
 * under which its worker keeps its course where any replica reads it (`durable`). A task whose replica stopped is
 * then still working while its worker runs the call, and ends with the outcome the worker kept. A server that answers with a task only once the call
 * is a task of ours already has that task polled to its end instead, as for a client without tasks.
 */
import { systemClock, type Clock } from '../../common/index.js';
import {
  TaskNotFoundError, TERMINAL_TASK_STATUSES, describeInputRequests, ToolCallRefusedError, ToolInputRequiredError, UpstreamTaskError, parseUpstreamTask,
  CALL_REFUSED_RPC_CODE, type DetailedTaskView, type TaskCall, type TaskError, type TaskHost, type TaskRequest, type TaskResume, type TaskRun, type TaskView,
} from '../../mcp/index.js';
import { CallCancelledError, type CallToolResult, type UpstreamTaskAccess } from '../../tool.js';
import { newSecret } from '../ids.js';
import type { SessionRecord, StoredTask, TaskRecord, TaskStatus, TaskStore } from '../store/index.js';
import { RunningTasks } from './running-tasks.js';
import { boundedResult, openOutcome, sealOutcome, type TaskOutcome } from './task-outcome.js';
import { openUpstreamLink, sealUpstreamLink } from './upstream-link.js';
import { durableKeyOf } from './durable-key.js';
import { openPending, sealPending, type TaskPending } from './task-pending.js';
import { toModelResult } from '../../function/index.js';
import type { DurableCallCourse } from '../package-runtime.js';

export const DEFAULT_TASK_GRACE_MS = 1_000;
export const DEFAULT_TASK_TTL_MS = 3_600_000;
export const DEFAULT_TASK_POLL_INTERVAL_MS = 1_000;
export const DEFAULT_SESSION_TASK_LIMIT = 32;

/** Finds, by its published name, the session's tool whose remote server keeps a task (on this replica's connections). */
export type UpstreamTaskResolver = (tool: string) => Promise<UpstreamTaskAccess | undefined>;

/** JSON-RPC's internal error: what a task failed for reasons of the platform's carries. */
const INTERNAL_ERROR_RPC_CODE = -32603;

export interface SessionTasksOptions {
  store: TaskStore;
  /** The platform's sealing key: outcomes are sealed with it. */
  sealingKey: Buffer;
  /** This process (its lease names it): the owner of the tasks whose calls run here. */
  instanceId: string;
  clock?: Clock;
  /** How long a call runs before it becomes a task. */
  graceMs?: number;
  ttlMs?: number;
  pollIntervalMs?: number;
  /** The most tasks not yet ended one session holds; a call past it is refused. */
  sessionTaskLimit?: number;
  /** How the refusal names the setting that raises the cap (e.g. its flag, variable and key in the config file). */
  sessionTaskLimitSetting?: string;
  /** How often the running calls' tasks are checked for a cancellation made on another replica. */
  watchEveryMs?: number;
  /**
   * The course of a call that ran on a worker, kept where any replica reads it (scale-out's outcomes bucket): a task
   * whose replica stopped is then not failed while its worker runs the call on, and ends with its outcome.
   */
  durable?: (durableKey: string) => Promise<DurableCallCourse | null>;
  /** Hears failures no client is told of (an outcome the store could not take). Never given a secret. */
  report?: (error: Error) => void;
}

/** What a call's promise settled as. */
type Settled = { ok: true; result: CallToolResult } | { ok: false; error: unknown };

const GRACE = Symbol('grace');

export class SessionTasks {
  private readonly clock: Clock;
  private readonly graceMs: number;
  private readonly ttlMs: number;
  private readonly pollIntervalMs: number;
  private readonly sessionTaskLimit: number;
  private readonly running: RunningTasks;
  private readonly report: (error: Error) => void;
  /** Ends of calls still being written, so `drain` can wait for them. */
  private readonly settling = new Set<Promise<void>>();

  constructor(private readonly options: SessionTasksOptions) {
    this.clock = options.clock ?? systemClock;
    this.graceMs = options.graceMs ?? DEFAULT_TASK_GRACE_MS;
    this.ttlMs = options.ttlMs ?? DEFAULT_TASK_TTL_MS;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_TASK_POLL_INTERVAL_MS;
    this.sessionTaskLimit = options.sessionTaskLimit ?? DEFAULT_SESSION_TASK_LIMIT;
    this.report = options.report ?? (() => undefined);
    this.running = new RunningTasks((ids) => options.store.endedTasks(ids), options.watchEveryMs ?? 1_000, this.report);
  }

  /**
   * The session's task host, for its MCP endpoint. `upstream` finds the session's tool a passed-through task of a
   * remote server's belongs to (none: such a task fails when next asked about).
   */
  forSession(session: SessionRecord, upstream: UpstreamTaskResolver = async () => undefined): TaskHost {
    return {
      run: (tool, call, requestSignal, request) => this.run(session, tool, call, requestSignal, request),
      get: (taskId) => this.get(session, taskId, upstream),
      update: (taskId, responses, resume) => this.update(session, taskId, responses, upstream, resume),
      cancel: (taskId) => this.cancel(session, taskId, upstream),
    };
  }

  /** Deletes the tasks past their time (the sweeper's chore). */
  prune(): Promise<number> {
    return this.options.store.pruneTasks(new Date(this.clock.now()).toISOString());
  }

  /**
   * A shutdown, after the calls drained: waits up to `ms` for the outcomes of tasks' calls to be written (a call
   * still running past the grace is left to the lease: its task fails once this process's lease lapses).
   */
  async drain(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const ceiling = new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); });
    await Promise.race([Promise.all([...this.settling]), ceiling]);
    clearTimeout(timer);
    this.running.close();
  }

  private async run(
    session: SessionRecord, tool: string, call: (signal: AbortSignal, how: TaskCall) => Promise<CallToolResult>, requestSignal: AbortSignal, request?: TaskRequest,
  ): Promise<TaskRun> {
    await this.admit(session);
    // The id is the task's if the call becomes one: a call on a worker keeps its course under its durable key from the start.
    const id = newSecret('tsk');
    const controller = new AbortController();
    const followRequest = () => controller.abort(requestSignal.reason);
    if (requestSignal.aborted) followRequest();
    else requestSignal.addEventListener('abort', followRequest, { once: true });
    const called: Promise<Settled> = call(controller.signal, { upstreamTasks: 'pass', durableKey: durableKeyOf(id) }).then((result) => ({ ok: true, result }), (error: unknown) => ({ ok: false, error }));
    let becameTask = false;
    // A server's task met once the call is a task of ours already: polled to its end, under the task's signal.
    const ended: Promise<Settled> = called.then((settled) => (!becameTask || settled.ok || !(settled.error instanceof UpstreamTaskError) ? settled
      : settled.error.poll(controller.signal).then((result): Settled => ({ ok: true, result }), (error: unknown): Settled => ({ ok: false, error }))));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<typeof GRACE>((resolve) => { timer = setTimeout(() => resolve(GRACE), this.graceMs); });
    const first = await Promise.race([ended, grace]);
    clearTimeout(timer);
    if (first !== GRACE) {
      requestSignal.removeEventListener('abort', followRequest);
      if (first.ok) return { kind: 'result', result: first.result };
      if (first.error instanceof UpstreamTaskError) return this.passThrough(session, tool, first.error, requestSignal);
      throw first.error;
    }
    becameTask = true;
    // From here the call is the task's: the client's request going away no longer stops it, tasks/cancel does.
    requestSignal.removeEventListener('abort', followRequest);
    const now = this.clock.now();
    const ttlMs = Math.max(1, Math.min(this.ttlMs, Date.parse(session.expiresAt) - now));
    const at = new Date(now).toISOString();
    const record: TaskRecord = {
      id, sessionId: session.id, tool, status: 'working', statusMessage: null, createdAt: at, updatedAt: at,
      expiresAt: new Date(now + ttlMs).toISOString(), ttlMs, pollIntervalMs: this.pollIntervalMs, owner: this.options.instanceId,
      outcome: null, pending: null, upstream: null,
    };
    let written = false;
    try {
      written = await this.options.store.addTask(record);
    } catch (err) {
      this.report(err instanceof Error ? err : new Error(String(err)));
    }
    if (!written) {
      // No durable task (the store out of reach, the session gone): the client, which takes results too, waits for this one.
      if (requestSignal.aborted) controller.abort(requestSignal.reason);
      else requestSignal.addEventListener('abort', followRequest, { once: true });
      const settled = await ended;
      requestSignal.removeEventListener('abort', followRequest);
      if (settled.ok) return { kind: 'result', result: settled.result };
      throw settled.error;
    }
    this.follow(session, record.id, controller, ended, request);
    return { kind: 'task', task: view(record) };
  }

  /** The task's call runs here until it ends: then its end is written (or, when it asks for input, what it asks). */
  private follow(session: SessionRecord, taskId: string, controller: AbortController, ended: Promise<Settled>, request: TaskRequest | undefined): void {
    this.running.add(taskId, controller);
    const settling = ended.then((settled) => this.settle(session, taskId, settled, request)).finally(() => {
      this.running.remove(taskId);
      this.settling.delete(settling);
    });
    this.settling.add(settling);
  }

  /** Refuses a call when its session holds as many tasks not yet ended as it may. */
  private async admit(session: SessionRecord): Promise<void> {
    const live = await this.options.store.liveTasks(session.id, new Date(this.clock.now()).toISOString());
    if (live < this.sessionTaskLimit) return;
    const setting = this.options.sessionTaskLimitSetting ?? 'the server setting sessionTaskLimit';
    throw new ToolCallRefusedError(
      `this session holds ${live} tasks not yet ended, the most it may (${this.sessionTaskLimit}, ${setting}); wait for one to end or cancel one (tasks/cancel), or raise the limit`,
      { limit: this.sessionTaskLimit }, 'session_task_limit', CALL_REFUSED_RPC_CODE,
    );
  }

  /**
   * A remote server answered the call with a task of its own: a task of ours stands for it, linked to it. Without
   * the store, the client (which takes results too) waits for the server's task polled to its end.
   */
  private async passThrough(session: SessionRecord, tool: string, upstream: UpstreamTaskError, requestSignal: AbortSignal): Promise<TaskRun> {
    const theirs = upstream.task;
    if (isTerminal(theirs.status)) return { kind: 'result', result: await upstream.poll(requestSignal) };
    const now = this.clock.now();
    const ttlMs = Math.max(1, Math.min(this.ttlMs, theirs.ttlMs ?? Infinity, Date.parse(session.expiresAt) - now));
    const at = new Date(now).toISOString();
    const id = newSecret('tsk');
    const record: TaskRecord = {
      id, sessionId: session.id, tool, status: theirs.status, statusMessage: theirs.statusMessage ?? null, createdAt: at, updatedAt: at,
      expiresAt: new Date(now + ttlMs).toISOString(), ttlMs, pollIntervalMs: Math.max(this.pollIntervalMs, theirs.pollIntervalMs ?? 0), owner: this.options.instanceId,
      outcome: null, pending: null, upstream: sealUpstreamLink({ taskId: theirs.taskId }, this.options.sealingKey, session.id, id),
    };
    let written = false;
    try {
      written = await this.options.store.addTask(record);
    } catch (err) {
      this.report(err instanceof Error ? err : new Error(String(err)));
    }
    if (!written) return { kind: 'result', result: await upstream.poll(requestSignal) };
    return { kind: 'task', task: view(record) };
  }

  /**
   * A passed-through task not yet ended, as its server has it now: asked of the server (through the session's tool on
   * this replica), and its end, or a change of status, written to the row.
   */
  private async followUpstream(session: SessionRecord, task: StoredTask, resolve: UpstreamTaskResolver): Promise<DetailedTaskView> {
    const link = openUpstreamLink(task.upstream!, this.options.sealingKey, session.id, task.id);
    const access = await resolve(task.tool);
    const at = () => new Date(this.clock.now()).toISOString();
    if (access === undefined) {
      await this.options.store.changeTask(task.id, {
        status: 'failed', pending: null, outcome: null, at: at(),
        statusMessage: `the tool ${task.tool}, whose remote server keeps this task, is no longer in the session`,
      });
      return this.detailed(session, await this.read(session, task.id));
    }
    let theirs: DetailedTaskView;
    try {
      theirs = parseUpstreamTask(await access.get(link.taskId));
    } catch (err) {
      throw new Error(`the remote server of ${task.tool} could not be asked about its task: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (isTerminal(theirs.status)) {
      const outcome: TaskOutcome | undefined = theirs.status === 'completed'
        ? { result: boundedResult((theirs.result ?? { content: [], isError: true }) as unknown as CallToolResult) }
        : theirs.status === 'failed' ? { error: theirs.error ?? { code: INTERNAL_ERROR_RPC_CODE, message: theirs.statusMessage ?? 'the remote server\'s task failed' } } : undefined;
      await this.options.store.changeTask(task.id, {
        status: theirs.status, statusMessage: theirs.statusMessage ?? null, pending: null, at: at(),
        outcome: outcome === undefined ? null : sealOutcome(outcome, this.options.sealingKey, session.id, task.id),
      });
      return this.detailed(session, await this.read(session, task.id));
    }
    if (theirs.status !== task.status) {
      await this.options.store.changeTask(task.id, { status: theirs.status, statusMessage: theirs.statusMessage ?? null, outcome: null, pending: null, at: at() });
      task = await this.read(session, task.id);
    }
    return { ...view(task), ...(theirs.inputRequests !== undefined && theirs.status === 'input_required' ? { inputRequests: theirs.inputRequests } : {}) };
  }

  /**
   * Writes how a task's call ended, unless the task ended first (cancelled). A call that asks its client for input
   * leaves the task `input_required` with what it asks, and what continues it (task-pending.ts), when its arguments
   * are known to continue it with.
   */
  private async settle(session: SessionRecord, taskId: string, settled: Settled, request?: TaskRequest): Promise<void> {
    if (!settled.ok && settled.error instanceof ToolInputRequiredError && request !== undefined) {
      const asked = settled.error;
      const pending: TaskPending = { inputRequests: asked.inputRequests as Record<string, unknown>, args: request.args, ...(asked.requestState !== undefined ? { requestState: asked.requestState } : {}) };
      try {
        await this.options.store.changeTask(taskId, {
          status: 'input_required', statusMessage: `the tool asks its client for input: ${describeInputRequests(asked.inputRequests)}; answer with tasks/update`,
          outcome: null, pending: sealPending(pending, this.options.sealingKey, session.id, taskId), at: new Date(this.clock.now()).toISOString(),
        });
      } catch (err) {
        this.report(err instanceof Error ? err : new Error(String(err)));
      }
      return;
    }
    const { status, statusMessage, outcome } = endOf(settled);
    try {
      await this.options.store.changeTask(taskId, {
        status, statusMessage, pending: null, at: new Date(this.clock.now()).toISOString(),
        outcome: outcome === undefined ? null : sealOutcome(outcome, this.options.sealingKey, session.id, taskId),
      });
    } catch (err) {
      // The outcome is lost with the store out of reach; the task then fails once this process's lease lapses.
      this.report(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private async read(session: SessionRecord, taskId: string): Promise<StoredTask> {
    const task = await this.options.store.getTask(session.id, taskId);
    if (task === null) throw new TaskNotFoundError();
    if (Date.parse(task.expiresAt) <= this.clock.now()) throw new TaskNotFoundError('Task has expired');
    return task;
  }

  private async get(session: SessionRecord, taskId: string, upstream: UpstreamTaskResolver): Promise<DetailedTaskView> {
    let task = await this.read(session, taskId);
    if (!isTerminal(task.status) && task.upstream !== null) return this.followUpstream(session, task, upstream);
    // Only a working task runs a call: one waiting on input runs nothing, whatever became of the process that asked.
    if (task.status === 'working' && !task.ownerLive && !this.running.has(task.id)) {
      const onWorker = await this.durableEnd(session, task);
      if (onWorker !== null) return onWorker;
      // Its process stopped before the call ended: nobody will write its end.
      await this.options.store.changeTask(task.id, {
        status: 'failed', pending: null, outcome: null, at: new Date(this.clock.now()).toISOString(),
        statusMessage: 'the process running its call stopped before the call ended; whether the tool ran to its end is not known (check its effects before calling it again)',
      });
      task = await this.read(session, taskId);
    }
    return this.detailed(session, task);
  }

  /**
   * A task whose replica stopped, when its call went to a worker that keeps its course: still working while that
   * worker is live, ended with the outcome it kept once done. Null when no course was kept (the call ran in the
   * stopped process, or never reached a worker): the task has failed.
   */
  private async durableEnd(session: SessionRecord, task: StoredTask): Promise<DetailedTaskView | null> {
    if (this.options.durable === undefined) return null;
    const course = await this.options.durable(durableKeyOf(task.id));
    if (course === null || (course.state === 'running' && !course.workerLive)) return null;
    if (course.state === 'running') return this.detailed(session, task);
    const result = toModelResult(course.outcome);
    const settled: Settled = course.outcome.status === 'cancelled' ? { ok: false, error: new CallCancelledError(task.tool) } : { ok: true, result };
    await this.settle(session, task.id, settled);
    return this.detailed(session, await this.read(session, task.id));
  }

  private detailed(session: SessionRecord, task: StoredTask): DetailedTaskView {
    const base = view(task);
    if (task.status === 'completed' || task.status === 'failed') {
      const outcome = task.outcome === null ? undefined : openOutcome(task.outcome, this.options.sealingKey, session.id, task.id);
      if (outcome !== undefined && 'result' in outcome) return { ...base, result: outcome.result as unknown as Record<string, unknown> };
      const error: TaskError = outcome !== undefined && 'error' in outcome ? outcome.error : { code: INTERNAL_ERROR_RPC_CODE, message: task.statusMessage ?? 'the task failed' };
      return { ...base, status: 'failed', error };
    }
    if (task.status === 'input_required' && task.pending !== null) {
      return { ...base, inputRequests: openPending(task.pending, this.options.sealingKey, session.id, task.id).inputRequests };
    }
    return base;
  }

  /**
   * A passed-through task's answers go on to its server. A task of subako's own waiting on input continues: its call
   * again, with the answers and the tool's state (`resume`), here, taken from `input_required` by one replica only. An
   * update of a task that asks nothing is acknowledged and ignored, as the extension asks.
   */
  private async update(session: SessionRecord, taskId: string, responses: Record<string, unknown>, upstream: UpstreamTaskResolver, resume?: TaskResume): Promise<void> {
    const task = await this.read(session, taskId);
    if (task.upstream === null) {
      if (task.status !== 'input_required' || task.pending === null || resume === undefined) return;
      const pending = openPending(task.pending, this.options.sealingKey, session.id, task.id);
      const taken = await this.options.store.changeTask(task.id, {
        status: 'working', statusMessage: null, outcome: null, pending: null, at: new Date(this.clock.now()).toISOString(), owner: this.options.instanceId,
      }, 'input_required');
      if (!taken) return;
      const controller = new AbortController();
      const answer = { responses, ...(pending.requestState !== undefined ? { requestState: pending.requestState } : {}) };
      const ended: Promise<Settled> = Promise.resolve()
        .then(() => resume(task.tool, pending.args, answer, controller.signal, { upstreamTasks: 'poll', durableKey: durableKeyOf(task.id) }))
        .then((result): Settled => ({ ok: true, result }), (error: unknown): Settled => ({ ok: false, error }));
      this.follow(session, task.id, controller, ended, { args: pending.args });
      return;
    }
    if (isTerminal(task.status)) return;
    const access = await upstream(task.tool);
    if (access === undefined) return;
    await access.update(openUpstreamLink(task.upstream, this.options.sealingKey, session.id, task.id).taskId, responses);
  }

  private async cancel(session: SessionRecord, taskId: string, upstream: UpstreamTaskResolver): Promise<void> {
    const task = await this.read(session, taskId);
    if (isTerminal(task.status)) return;
    if (task.upstream !== null) {
      // The server's task is asked to stop; ours is cancelled whatever it answers (the client asked, and is done with it).
      const access = await upstream(task.tool);
      await access?.cancel(openUpstreamLink(task.upstream, this.options.sealingKey, session.id, task.id).taskId).catch((err: unknown) => {
        this.report(err instanceof Error ? err : new Error(String(err)));
      });
    }
    await this.options.store.changeTask(task.id, {
      status: 'cancelled', statusMessage: 'cancelled by its client', outcome: null, pending: null, at: new Date(this.clock.now()).toISOString(),
    });
    this.running.stop(task.id, 'its task was cancelled');
  }
}

function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_TASK_STATUSES.includes(status);
}

function view(task: TaskRecord): TaskView {
  return {
    taskId: task.id, status: task.status, ...(task.statusMessage !== null ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt, lastUpdatedAt: task.updatedAt, ttlMs: task.ttlMs, pollIntervalMs: task.pollIntervalMs,
  };
}

/**
 * A task's end from its call's: a result is `completed` (a tool's own error included, as the extension says); a
 * JSON-RPC error (the call refused) `failed` with it; a stopped call `cancelled`. A tool that asks its client for
 * input once its call is a task waits `input_required` (settle); only when the call's arguments are not known to
 * continue it with does it end here, `completed` with a result saying what it asked.
 */
function endOf(settled: Settled): { status: TaskStatus; statusMessage: string | null; outcome?: TaskOutcome } {
  if (settled.ok) return { status: 'completed', statusMessage: null, outcome: { result: boundedResult(settled.result) } };
  const error = settled.error;
  if (error instanceof CallCancelledError) return { status: 'cancelled', statusMessage: error.message };
  if (error instanceof ToolInputRequiredError) {
    const text = `The tool did not complete: once running as a task it asked its client for input (${describeInputRequests(error.inputRequests)}), which a task does not relay. Call it again without the tasks extension to answer it.`;
    return { status: 'completed', statusMessage: null, outcome: { result: { content: [{ type: 'text', text }], isError: true } } };
  }
  const rpc = rpcErrorOf(error);
  if (rpc !== undefined) return { status: 'failed', statusMessage: rpc.message, outcome: { error: rpc } };
  return { status: 'failed', statusMessage: 'the call failed inside the platform', outcome: { error: { code: INTERNAL_ERROR_RPC_CODE, message: 'the call failed inside the platform' } } };
}

/** A JSON-RPC error a call was refused with (the SDK's ProtocolError: a numeric code and a message). */
function rpcErrorOf(error: unknown): TaskError | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, data } = error as Error & { code?: unknown; data?: unknown };
  if (typeof code !== 'number' || !Number.isInteger(code)) return undefined;
  return { code, message: error.message, ...(data !== undefined ? { data } : {}) };
}
