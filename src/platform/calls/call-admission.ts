/**
 * Call admission: who may run now, who waits, who is refused. Every session call passes here (the call log
 * asks before it runs anything), so one session, or one agent's many sessions, cannot take every worker and
 * make everyone else wait behind them.
 *
 * - A session runs at most `sessionConcurrency` calls at once and an agent (all its sessions together) at
 *   most `agentConcurrency`; a call that finds either full waits.
 * - The workers are shared out fairly: with `workers` set (the sandbox workers of this process), function
 *   package calls of all agents together run at most that many at once, and when one ends the next free
 *   worker goes first to an agent with nothing running, then to the others round-robin (worker-turns.ts);
 *   within an agent, its calls start in arrival order, each as soon as its session has room. An agent's
 *   backlog therefore never runs ahead of an agent that has nothing running. Calls that hold no worker (a
 *   remote MCP server's tools, TypeScript tools) count against their session and agent only.
 * - Waiting is bounded: a session has at most `sessionQueue` calls waiting, an agent `agentQueue`. A call
 *   past either bound is refused at once (CallRefusedError, with a retry hint), never left to wait without end.
 * - The deadline counts the wait: a call whose deadline passes while it waits ends as `timeout` without
 *   running, and one that starts late gets only what is left of its deadline.
 * - Every call in flight holds an AbortController, so `stopSession` / `stopAgent` can end all of a session's
 *   or an agent's calls (running and waiting) and wait until they have ended; a session stopped so is
 *   remembered for a while, and a call that arrives for it after the stop is refused as not found.
 *
 * A call of a full session does not hold up calls of the same agent's other sessions: when a slot frees, the
 * agent's waiting calls are scanned in arrival order and the first one whose session has room starts. The
 * work per admitted or ended call is bounded by the agent's queue (amortized: an agent found with nothing that
 * could start leaves the turns, and only an event of its own brings it back), whatever the number of agents.
 */
import { abortWith } from '../../common/index.js';
import { ToolCallRefusedError } from '../../mcp/index.js';
import { NotFoundError } from '../errors.js';
import { WorkerTurns } from './worker-turns.js';

export interface CallAdmissionLimits {
  /** Calls one session may run at once. */
  sessionConcurrency: number;
  /** Calls one session may have waiting for a turn; past it, calls are refused. */
  sessionQueue: number;
  /** Calls all sessions of one agent may run at once. */
  agentConcurrency: number;
  /** Calls all sessions of one agent may have waiting; past it, calls are refused. */
  agentQueue: number;
  /**
   * Function package calls all agents together may run at once: the sandbox workers of this process. Absent:
   * no such cap (calls go to `subako worker`s over NATS, whose number this replica does not know).
   */
  workers?: number;
}

/**
 * Defaults for a server with `workers` sandbox workers. A session may take half the workers (so another
 * session's call finds one free unless several sessions are busy). An agent may take all but one, so a call
 * of another agent with nothing running finds a worker free however busy the first agent is; but never fewer
 * than a session's share plus one, so a session at its limit does not hold up its own agent's other sessions.
 * With one or two workers the two cannot both hold: there an agent may take every worker, and another agent
 * gets the next one that frees, ahead of the busy agent's backlog. The queues absorb a burst (a batch, a
 * model's parallel tool calls) without refusing it.
 *
 * `where`: `here` when the workers are this process's, shared out by admission (`workers` set); `fleet` when
 * calls go to `subako worker`s over NATS, which this replica neither counts nor shares out (each worker takes
 * calls while it has a free slot), so `workers` then only sizes the session's and the agent's share.
 */
export function defaultCallAdmissionLimits(workers: number, where: 'here' | 'fleet' = 'here'): CallAdmissionLimits {
  const pool = Math.max(1, Math.floor(workers));
  const sessionConcurrency = Math.max(1, Math.floor(pool / 2));
  const agentConcurrency = Math.min(pool, Math.max(sessionConcurrency + 1, pool - 1));
  return { sessionConcurrency, sessionQueue: 16, agentConcurrency, agentQueue: 64, ...(where === 'here' ? { workers: pool } : {}) };
}

/**
 * Whether a call of `tool` holds a sandbox worker while it runs: a function package's tool does; a remote MCP
 * server's or a TypeScript function's does not. A call that names no tool is counted, to be safe.
 */
function holdsWorker(tool: AdmittedTool | undefined): boolean {
  return tool === undefined || tool.source?.kind === 'function';
}

/** What admission reads of the tool called (Tool.source). */
export interface AdmittedTool {
  readonly source?: { readonly kind: string };
}

/** How long a refused caller is told to wait before trying again. Refusals are cheap: nothing is stored. */
export const RETRY_AFTER_MS = 1_000;

export const CALL_REFUSED = 'too_many_calls';

/**
 * A call refused before it ran. It is mcp/'s ToolCallRefusedError, so an MCP endpoint answers it as a JSON-RPC
 * error with the retry hint (REST: 429) without anyone translating it.
 */
export class CallRefusedError extends ToolCallRefusedError {
  constructor(
    readonly limit: 'session' | 'agent',
    readonly retryAfterMs: number,
    message: string,
  ) {
    super(message, { retryAfterMs, limit }, CALL_REFUSED);
  }
}

/** Why a call that was admitted to wait ended without running. */
export type NotStarted = 'timeout' | 'stopped' | 'cancelled';

/** An admitted call. `started` says when it may run; `end()` must be called once it has finished (or not started). */
export interface AdmittedCall {
  /** Aborted when the call is stopped (its session or agent deleted) or its caller goes away. */
  readonly signal: AbortSignal;
  /** Resolves with 'run' when the call may start, or with why it will not. */
  readonly started: Promise<'run' | NotStarted>;
  /** Milliseconds waited for a turn (so far, or until it started). */
  waitedMs(): number;
  /** What is left of the deadline, in milliseconds (0 once it has passed). */
  remainingMs(): number;
  /** Why the call was stopped (`stopSession` / `stopAgent`), or null. */
  stoppedBecause(): string | null;
  /** Releases the call's place (a slot, or its place in the queue). Idempotent. */
  end(): void;
}

interface Entry {
  readonly sessionId: string;
  readonly agentId: string;
  readonly arrived: number;
  readonly deadline: number;
  /** It holds a sandbox worker while it runs (a function package's call). */
  readonly onWorker: boolean;
  /** The call's own signal: aborted by a stop (`stoppedWith` says why) or by its caller going away. */
  readonly controller: AbortController;
  /** Why the call was stopped from outside (its session or agent deleted); null when it was not. */
  stoppedWith: string | null;
  /** Lets go of the caller's signal (the call's follows it while the call lasts). */
  unlink: () => void;
  /** `left`: it left the queue without running (timeout, stop, cancel) and waits for `end()`. */
  state: 'waiting' | 'running' | 'left' | 'ended';
  startedAt: number | null;
  resolveStart: (value: 'run' | NotStarted) => void;
  timer: NodeJS.Timeout | null;
  readonly ended: Promise<void>;
  markEnded: () => void;
}

interface Group {
  running: number;
  waiting: number;
  readonly calls: Set<Entry>;
}

interface AgentGroup extends Group {
  /** The agent's waiting calls, in arrival order. */
  readonly queue: Entry[];
}

function checkedLimits(limits: CallAdmissionLimits): CallAdmissionLimits {
  for (const [name, value] of Object.entries(limits)) {
    if (value === undefined && name === 'workers') continue;
    if (!Number.isInteger(value) || value < (name.endsWith('Queue') ? 0 : 1)) {
      throw new RangeError(`call admission: ${name} must be a whole number${name.endsWith('Queue') ? '' : ' of at least 1'}, not ${value}`);
    }
  }
  return { ...limits };
}

/** Sessions and agents stopped lately, remembered so a call racing the delete is refused; oldest forgotten first. */
const REMEMBERED_STOPS = 4_096;

export class CallAdmission {
  private readonly sessions = new Map<string, Group>();
  private readonly agents = new Map<string, AgentGroup>();
  private readonly stopped = new Set<string>();
  /** Agents whose waiting calls may be waiting for a worker, in the order they get the next one. */
  private readonly turns = new WorkerTurns<AgentGroup>();
  /** Calls running that hold a worker. */
  private onWorkers = 0;

  private current: CallAdmissionLimits;
  private readonly sizing: (() => CallAdmissionLimits) | null;

  /**
   * `limits`: fixed, or (scale-out) read again at each call's arrival and end, as the fleet's slots change; when
   * they grow, waiting calls that now fit start.
   */
  constructor(limits: CallAdmissionLimits | (() => CallAdmissionLimits), private readonly now: () => number = () => performance.now()) {
    this.sizing = typeof limits === 'function' ? limits : null;
    this.current = checkedLimits(typeof limits === 'function' ? limits() : limits);
  }

  /** The limits as they stand. */
  get limits(): CallAdmissionLimits {
    return this.current;
  }

  /** Reads the limits again (scale-out), and starts what they now let start. */
  private resize(): void {
    if (!this.sizing) return;
    const next = this.sizing();
    const was = this.current;
    if (Object.keys(next).length === Object.keys(was).length && Object.entries(next).every(([k, v]) => was[k as keyof CallAdmissionLimits] === v)) return;
    this.current = checkedLimits(next);
    for (const agent of this.agents.values()) {
      if (agent.waiting > 0) this.turns.wait(agent, agent.running);
    }
    this.shareWorkers();
    for (const agent of this.agents.values()) this.startWhatFits(agent);
  }

  /**
   * Admits a call of `sessionId` (of `agentId`) to `tool` with `deadlineMs` to run, counted from now. Throws
   * CallRefusedError when it would have to wait and the queue is full, NotFoundError when the session or
   * agent was stopped. `signal` is the caller's: its abort ends the call too.
   */
  admit(sessionId: string, agentId: string, deadlineMs: number, signal?: AbortSignal, tool?: AdmittedTool): AdmittedCall {
    this.resize();
    if (this.stopped.has(`session:${sessionId}`)) throw new NotFoundError(`session ${sessionId}`);
    if (this.stopped.has(`agent:${agentId}`)) throw new NotFoundError(`agent ${agentId}`);
    const session = this.sessionGroup(sessionId);
    const agent = this.agentGroup(agentId);
    const onWorker = holdsWorker(tool);
    const canRun = this.hasRoom(session, agent, onWorker);
    if (!canRun) {
      const workersBusy = onWorker && !this.workerFree() ? `; all ${this.limits.workers} workers are busy` : '';
      if (session.waiting >= this.limits.sessionQueue) {
        this.forgetIfIdle(sessionId, agentId);
        throw new CallRefusedError('session', RETRY_AFTER_MS,
          `session ${sessionId} already runs ${session.running} calls (at most ${this.limits.sessionConcurrency} at once) and has ` +
          `${session.waiting} waiting (at most ${this.limits.sessionQueue})${workersBusy}; retry after ${RETRY_AFTER_MS / 1000} s, or wait for a call to end`);
      }
      if (agent.waiting >= this.limits.agentQueue) {
        this.forgetIfIdle(sessionId, agentId);
        throw new CallRefusedError('agent', RETRY_AFTER_MS,
          `the sessions of agent ${agentId} already run ${agent.running} calls (at most ${this.limits.agentConcurrency} at once) and have ` +
          `${agent.waiting} waiting (at most ${this.limits.agentQueue})${workersBusy}; retry after ${RETRY_AFTER_MS / 1000} s, or wait for a call to end`);
      }
    }
    const arrived = this.now();
    let resolveStart!: (value: 'run' | NotStarted) => void;
    const started = new Promise<'run' | NotStarted>((resolve) => { resolveStart = resolve; });
    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => { markEnded = resolve; });
    const controller = new AbortController();
    const entry: Entry = {
      sessionId, agentId, arrived, deadline: arrived + Math.max(0, deadlineMs), onWorker, controller, state: 'waiting', startedAt: null,
      resolveStart, timer: null, ended, markEnded, stoppedWith: null,
      // The caller going away aborts the call's own signal too: one link, not a composite signal (abort-link.ts).
      unlink: signal ? abortWith(controller, signal) : () => undefined,
    };
    session.calls.add(entry);
    agent.calls.add(entry);
    if (canRun) this.start(entry);
    else {
      session.waiting += 1;
      agent.waiting += 1;
      agent.queue.push(entry);
      // Waiting for its session or agent, this is a no-op until one of its calls ends; waiting for a worker, its turn.
      this.turns.wait(agent, agent.running);
      entry.timer = setTimeout(() => this.leaveQueue(entry, 'timeout'), Math.max(0, entry.deadline - arrived));
      if (signal) {
        const onAbort = (): void => this.leaveQueue(entry, 'cancelled');
        if (signal.aborted) onAbort();
        else {
          signal.addEventListener('abort', onAbort, { once: true });
          void started.then(() => signal.removeEventListener('abort', onAbort));
        }
      }
    }
    return {
      signal: controller.signal,
      started,
      waitedMs: () => (entry.startedAt ?? this.now()) - entry.arrived,
      remainingMs: () => Math.max(0, entry.deadline - this.now()),
      stoppedBecause: () => entry.stoppedWith,
      end: () => this.end(entry),
    };
  }

  /** Calls of the session in flight (running and waiting). */
  inFlight(sessionId: string): { running: number; waiting: number } {
    const group = this.sessions.get(sessionId);
    return { running: group?.running ?? 0, waiting: group?.waiting ?? 0 };
  }

  /** Aborts every running and waiting call of the session; resolves when they have all ended. */
  stopSession(sessionId: string, reason = `session ${sessionId} was deleted`): Promise<void> {
    this.remember(`session:${sessionId}`);
    return this.stopAll(this.sessions.get(sessionId), reason);
  }

  /** Aborts every running and waiting call of the agent's sessions; resolves when they have all ended. */
  stopAgent(agentId: string, reason = `agent ${agentId} was deleted`): Promise<void> {
    this.remember(`agent:${agentId}`);
    return this.stopAll(this.agents.get(agentId), reason);
  }

  private async stopAll(group: Group | undefined, reason: string): Promise<void> {
    if (!group) return;
    const calls = [...group.calls];
    for (const entry of calls) {
      if (entry.state === 'waiting') this.leaveQueue(entry, 'stopped');
      entry.stoppedWith ??= reason;
      entry.controller.abort(new Error(reason));
    }
    await Promise.all(calls.map((entry) => entry.ended));
  }

  private workerFree(): boolean {
    return this.limits.workers === undefined || this.onWorkers < this.limits.workers;
  }

  private hasRoom(session: Group, agent: Group, onWorker: boolean): boolean {
    return session.running < this.limits.sessionConcurrency && agent.running < this.limits.agentConcurrency && (!onWorker || this.workerFree());
  }

  private start(entry: Entry): void {
    entry.state = 'running';
    entry.startedAt = this.now();
    const agent = this.agentGroup(entry.agentId);
    this.sessionGroup(entry.sessionId).running += 1;
    agent.running += 1;
    if (entry.onWorker) this.onWorkers += 1;
    this.turns.update(agent, agent.running);
    entry.resolveStart('run');
  }

  /** A waiting call leaves the queue without running; it still holds its entry until `end()`. */
  private leaveQueue(entry: Entry, why: NotStarted): void {
    if (entry.state !== 'waiting') return;
    const agent = this.agents.get(entry.agentId)!;
    agent.queue.splice(agent.queue.indexOf(entry), 1);
    this.dequeued(entry, agent);
    entry.state = 'left';
    entry.resolveStart(why);
  }

  /** The counts of a call that is no longer waiting (it left the queue, or is about to start). */
  private dequeued(entry: Entry, agent: AgentGroup): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    this.sessions.get(entry.sessionId)!.waiting -= 1;
    agent.waiting -= 1;
    if (agent.waiting === 0) this.turns.drop(agent);
  }

  private end(entry: Entry): void {
    if (entry.state === 'ended') return;
    this.resize();
    if (entry.state === 'waiting') this.leaveQueue(entry, 'cancelled');
    const session = this.sessions.get(entry.sessionId)!;
    const agent = this.agents.get(entry.agentId)!;
    const wasRunning = entry.state === 'running';
    if (wasRunning) {
      session.running -= 1;
      agent.running -= 1;
      if (entry.onWorker) this.onWorkers -= 1;
    }
    entry.state = 'ended';
    entry.unlink();
    session.calls.delete(entry);
    agent.calls.delete(entry);
    entry.markEnded();
    if (wasRunning) {
      // Its session and agent have room again: the agent's waiting calls may start, in its turn for a worker.
      if (agent.waiting > 0) this.turns.wait(agent, agent.running);
      this.shareWorkers();
      this.startWhatFits(agent);
    }
    this.forgetIfIdle(entry.sessionId, entry.agentId);
  }

  /**
   * While a worker is free, gives it to the agent whose turn it is (worker-turns.ts): its first waiting call,
   * in arrival order, whose session has room. An agent with nothing that could start leaves the turns until
   * one of its own calls ends or arrives, the only events that give it room again.
   */
  private shareWorkers(): void {
    while (this.workerFree()) {
      const agent = this.turns.next();
      if (!agent) return;
      const entry = this.firstStartable(agent);
      if (!entry) {
        this.turns.drop(agent);
        continue;
      }
      this.startWaiting(entry, agent);
      if (agent.waiting > 0) this.turns.served(agent);
    }
  }

  /**
   * Starts what the agent whose call ended may start besides: with every worker busy, its waiting calls that
   * hold none. (A worker still free after shareWorkers is one no waiting call of any agent could take.)
   */
  private startWhatFits(agent: AgentGroup): void {
    for (let entry = this.firstStartable(agent); entry; entry = this.firstStartable(agent)) this.startWaiting(entry, agent);
  }

  /** The agent's first waiting call, in arrival order, that may start now: its agent and its session have room, and a worker if it needs one. */
  private firstStartable(agent: AgentGroup): Entry | undefined {
    if (agent.running >= this.limits.agentConcurrency) return undefined;
    const workerFree = this.workerFree();
    return agent.queue.find((entry) => (workerFree || !entry.onWorker) && this.sessions.get(entry.sessionId)!.running < this.limits.sessionConcurrency);
  }

  private startWaiting(entry: Entry, agent: AgentGroup): void {
    agent.queue.splice(agent.queue.indexOf(entry), 1);
    this.dequeued(entry, agent);
    this.start(entry);
  }

  private sessionGroup(id: string): Group {
    let group = this.sessions.get(id);
    if (!group) this.sessions.set(id, (group = { running: 0, waiting: 0, calls: new Set() }));
    return group;
  }

  private agentGroup(id: string): AgentGroup {
    let group = this.agents.get(id);
    if (!group) this.agents.set(id, (group = { running: 0, waiting: 0, calls: new Set(), queue: [] }));
    return group;
  }

  /** Groups with nothing in flight are dropped, so the maps hold only sessions and agents with calls. */
  private forgetIfIdle(sessionId: string, agentId: string): void {
    if (this.sessions.get(sessionId)?.calls.size === 0) this.sessions.delete(sessionId);
    const agent = this.agents.get(agentId);
    if (agent?.calls.size === 0) {
      this.turns.drop(agent);
      this.agents.delete(agentId);
    }
  }

  private remember(key: string): void {
    this.stopped.delete(key);
    this.stopped.add(key);
    if (this.stopped.size > REMEMBERED_STOPS) this.stopped.delete(this.stopped.values().next().value as string);
  }
}
