/**
 * Call admission: who may run now, who waits, who is refused. Every session call passes here (the call log
 * asks before it runs anything), so one session, or one agent's many sessions, cannot take every worker and
 * make everyone else wait behind them.
 *
 * - A session runs at most `sessionConcurrency` calls at once and an agent (all its sessions together) at
 *   most `agentConcurrency`; a call that finds either full waits, first come first served.
 * - Waiting is bounded: a session has at most `sessionQueue` calls waiting, an agent `agentQueue`. A call
 *   past either bound is refused at once (CallRefusedError, with a retry hint), never left to wait without end.
 * - The deadline counts the wait: a call whose deadline passes while it waits ends as `timeout` without
 *   running, and one that starts late gets only what is left of its deadline.
 * - Every call in flight holds an AbortController, so `stopSession` / `stopAgent` can end all of a session's
 *   or an agent's calls (running and waiting) and wait until they have ended; a session stopped so is
 *   remembered for a while, and a call that arrives for it after the stop is refused as not found.
 *
 * A call of a full session does not hold up calls of the same agent's other sessions: when a slot frees, the
 * agent's waiting calls are scanned in arrival order and each one whose session has room starts.
 */
import { ToolCallRefusedError } from '../mcp/index.js';
import { NotFoundError } from './errors.js';

export interface CallAdmissionLimits {
  /** Calls one session may run at once. */
  sessionConcurrency: number;
  /** Calls one session may have waiting for a turn; past it, calls are refused. */
  sessionQueue: number;
  /** Calls all sessions of one agent may run at once. */
  agentConcurrency: number;
  /** Calls all sessions of one agent may have waiting; past it, calls are refused. */
  agentQueue: number;
}

/**
 * Defaults for a server with `workers` sandbox workers. A session may take half the workers (so another
 * session's call always finds one free unless several sessions are busy), an agent all of them (so one agent
 * cannot push more than one round of calls into the shared sandbox queue ahead of another agent's). The
 * queues absorb a burst (a batch, a model's parallel tool calls) without refusing it.
 */
export function defaultCallAdmissionLimits(workers: number): CallAdmissionLimits {
  const pool = Math.max(1, Math.floor(workers));
  return { sessionConcurrency: Math.max(1, Math.floor(pool / 2)), sessionQueue: 16, agentConcurrency: pool, agentQueue: 64 };
}

/** How long a refused caller is told to wait before trying again. Refusals are cheap: nothing is stored. */
export const RETRY_AFTER_MS = 1_000;

export const CALL_REFUSED = 'too_many_calls';

/** A call refused because the session's or the agent's queue is full. Nothing ran and nothing was logged. */
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
  readonly controller: AbortController;
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

/** Sessions and agents stopped lately, remembered so a call racing the delete is refused; oldest forgotten first. */
const REMEMBERED_STOPS = 4_096;

export class CallAdmission {
  private readonly sessions = new Map<string, Group>();
  private readonly agents = new Map<string, Group & { readonly queue: Entry[] }>();
  private readonly stopped = new Set<string>();

  constructor(readonly limits: CallAdmissionLimits, private readonly now: () => number = () => performance.now()) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value < (name.endsWith('Queue') ? 0 : 1)) {
        throw new RangeError(`call admission: ${name} must be a whole number${name.endsWith('Queue') ? '' : ' of at least 1'}, not ${value}`);
      }
    }
  }

  /**
   * Admits a call of `sessionId` (of `agentId`) with `deadlineMs` to run, counted from now. Throws
   * CallRefusedError when it would have to wait and the queue is full, NotFoundError when the session or
   * agent was stopped. `signal` is the caller's: its abort ends the call too.
   */
  admit(sessionId: string, agentId: string, deadlineMs: number, signal?: AbortSignal): AdmittedCall {
    if (this.stopped.has(`session:${sessionId}`)) throw new NotFoundError(`session ${sessionId}`);
    if (this.stopped.has(`agent:${agentId}`)) throw new NotFoundError(`agent ${agentId}`);
    const session = this.sessionGroup(sessionId);
    const agent = this.agentGroup(agentId);
    const canRun = session.running < this.limits.sessionConcurrency && agent.running < this.limits.agentConcurrency;
    if (!canRun) {
      if (session.waiting >= this.limits.sessionQueue) {
        this.forgetIfIdle(sessionId, agentId);
        throw new CallRefusedError('session', RETRY_AFTER_MS,
          `session ${sessionId} already runs ${session.running} calls (at most ${this.limits.sessionConcurrency} at once) and has ` +
          `${session.waiting} waiting (at most ${this.limits.sessionQueue}); retry after ${RETRY_AFTER_MS / 1000} s, or wait for a call to end`);
      }
      if (agent.waiting >= this.limits.agentQueue) {
        this.forgetIfIdle(sessionId, agentId);
        throw new CallRefusedError('agent', RETRY_AFTER_MS,
          `the sessions of agent ${agentId} already run ${agent.running} calls (at most ${this.limits.agentConcurrency} at once) and have ` +
          `${agent.waiting} waiting (at most ${this.limits.agentQueue}); retry after ${RETRY_AFTER_MS / 1000} s, or wait for a call to end`);
      }
    }
    const arrived = this.now();
    let resolveStart!: (value: 'run' | NotStarted) => void;
    const started = new Promise<'run' | NotStarted>((resolve) => { resolveStart = resolve; });
    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => { markEnded = resolve; });
    const controller = new AbortController();
    const entry: Entry = {
      sessionId, agentId, arrived, deadline: arrived + Math.max(0, deadlineMs), controller, state: 'waiting', startedAt: null,
      resolveStart, timer: null, ended, markEnded,
    };
    session.calls.add(entry);
    agent.calls.add(entry);
    const callSignal = signal ? AbortSignal.any([controller.signal, signal]) : controller.signal;
    if (canRun) this.start(entry);
    else {
      session.waiting += 1;
      agent.waiting += 1;
      agent.queue.push(entry);
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
      signal: callSignal,
      started,
      waitedMs: () => (entry.startedAt ?? this.now()) - entry.arrived,
      remainingMs: () => Math.max(0, entry.deadline - this.now()),
      stoppedBecause: () => (controller.signal.aborted ? String((controller.signal.reason as Error).message) : null),
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
      entry.controller.abort(new Error(reason));
    }
    await Promise.all(calls.map((entry) => entry.ended));
  }

  private start(entry: Entry): void {
    entry.state = 'running';
    entry.startedAt = this.now();
    this.sessionGroup(entry.sessionId).running += 1;
    this.agentGroup(entry.agentId).running += 1;
    entry.resolveStart('run');
  }

  /** A waiting call leaves the queue without running; it still holds its entry until `end()`. */
  private leaveQueue(entry: Entry, why: NotStarted): void {
    if (entry.state !== 'waiting') return;
    this.dequeue(entry);
    entry.resolveStart(why);
  }

  private dequeue(entry: Entry): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    const session = this.sessions.get(entry.sessionId)!;
    const agent = this.agents.get(entry.agentId)!;
    session.waiting -= 1;
    agent.waiting -= 1;
    const at = agent.queue.indexOf(entry);
    if (at >= 0) agent.queue.splice(at, 1);
    entry.state = 'left';
  }

  private end(entry: Entry): void {
    if (entry.state === 'ended') return;
    if (entry.state === 'waiting') this.leaveQueue(entry, 'cancelled');
    const session = this.sessions.get(entry.sessionId)!;
    const agent = this.agents.get(entry.agentId)!;
    if (entry.state === 'running') {
      session.running -= 1;
      agent.running -= 1;
    }
    entry.state = 'ended';
    session.calls.delete(entry);
    agent.calls.delete(entry);
    entry.markEnded();
    this.pump(entry.agentId);
    this.forgetIfIdle(entry.sessionId, entry.agentId);
  }

  /** Starts, in arrival order, every waiting call of the agent that now has room. */
  private pump(agentId: string): void {
    const agent = this.agents.get(agentId);
    if (!agent) return;
    for (let i = 0; i < agent.queue.length && agent.running < this.limits.agentConcurrency;) {
      const entry = agent.queue[i];
      const session = this.sessions.get(entry.sessionId)!;
      if (session.running >= this.limits.sessionConcurrency) {
        i += 1;
        continue;
      }
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = null;
      agent.queue.splice(i, 1);
      session.waiting -= 1;
      agent.waiting -= 1;
      this.start(entry);
    }
  }

  private sessionGroup(id: string): Group {
    let group = this.sessions.get(id);
    if (!group) this.sessions.set(id, (group = { running: 0, waiting: 0, calls: new Set() }));
    return group;
  }

  private agentGroup(id: string): Group & { queue: Entry[] } {
    let group = this.agents.get(id);
    if (!group) this.agents.set(id, (group = { running: 0, waiting: 0, calls: new Set(), queue: [] }));
    return group;
  }

  /** Groups with nothing in flight are dropped, so the maps hold only sessions and agents with calls. */
  private forgetIfIdle(sessionId: string, agentId: string): void {
    if (this.sessions.get(sessionId)?.calls.size === 0) this.sessions.delete(sessionId);
    if (this.agents.get(agentId)?.calls.size === 0) this.agents.delete(agentId);
  }

  private remember(key: string): void {
    this.stopped.delete(key);
    this.stopped.add(key);
    if (this.stopped.size > REMEMBERED_STOPS) this.stopped.delete(this.stopped.values().next().value as string);
  }
}
