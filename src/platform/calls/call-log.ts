/**
 * Every call a session makes runs through here and is recorded, whichever entry point made it (REST, the
 * session's MCP endpoint, in-process code): a session's tools are wrapped once by `withCallLog`, and every
 * entry point calls those tools. Each call is recorded
 * first as `running` (so a call cut off by a crash of the server still leaves a record, marked interrupted
 * once the lease of the process that ran it runs out: platform.ts), then with its outcome, what the model saw, the stderr tail, the egress log and the time.
 * Arguments and text are redacted before they are stored. The log also counts calls in flight so a
 * shutdown can wait for them.
 *
 * Before anything is recorded, the call asks call admission (call-admission.ts) for a turn. A refusal (the
 * session's or agent's queue is full) is thrown as CallRefusedError and is not logged: nothing ran, and a flood
 * of refused calls must not turn into a flood of rows. An admitted call is logged from its arrival; if its
 * deadline passes while it waits it ends as a `timeout` crash without running, and when it runs the tool gets
 * only what is left of the deadline (`timeoutMs`).
 *
 * How a call ends is the tool's report, and two ends of the log's own: `invalid_arguments` when a checked source
 * (a remote MCP tool, a TypeScript tool) refused the arguments before any I/O — the same refusal from every
 * entry point, since the check is the source's — and `cancelled` when the caller went away (its signal). A
 * call stopped because its session or agent was deleted is kept apart from that: a `crash` with reason
 * `stopped`, since nobody cancelled it.
 *
 * A tool wrapped with an approval gate (the agent's policy `require_approval` or `require_user_approval`: the gate
 * is approvals.ts's, and it decides who approves) first gets its approval, before it takes a turn: a call that
 * carries one (a retried MCP request, end-user approval only) redeems it once it is admitted (a call refused for a
 * full queue keeps it); a call whose end user is to be asked is answered `input_required` (nothing recorded: the
 * call happens on the retry); any other call is recorded and held until an operator decides. One that is not
 * approved ends `denied` without running; the record keeps how it was decided (`approval`).
 */
import { createHash } from 'node:crypto';
import { CallCancelledError, type CallReport, type CallToolResult, type CallerInput, type ContentBlock, type ProgressReporter, type Tool, type ToolCallContext } from '../../tool.js';
import { CrashReason } from '../../function/index.js';
import { CallError } from '../../mcp/index.js';
import { newId, nowIso } from '../ids.js';
import { redactArguments, redactText } from '../../common/index.js';
import type { AgentCall, CallFilter, CallOutcome, CallRecord, CallVia, Page, PageRequest, SessionRecord, CallStore } from '../store/index.js';
import { NotFoundError } from '../errors.js';
import type { AdmittedCall, CallAdmission, NotStarted } from './call-admission.js';
import type { ApprovalGate, Verdict } from './approvals.js';
import { CallEvents } from './call-events.js';

export interface LoggedCall {
  record: CallRecord;
  result: CallToolResult;
  /**
   * Why the call has no result of its own, as `Tool.call` would reject: the source refused the arguments
   * (CallError, outcome `invalid_arguments`) or the caller went away (CallCancelledError, `cancelled`).
   */
  refusal?: Error;
}

/**
 * A session's tool wrapped by the call log. `run` is what an entry point calls: the call admitted, recorded
 * as made through `via`, redacted, with its record. `call` is the plain Tool face (the library), logged as
 * `library`, keeping Tool.call's contract (rejects with CallError or CallCancelledError).
 */
export interface LoggedTool extends Tool {
  /**
   * `progress`: the caller's reporter, given to the tool as `ctx.progress` (an MCP call with a progressToken).
   * `input`: what the caller can ask of its person (an MCP 2026-07-28 request), for a call that needs approval.
   */
  run(args: Record<string, unknown>, via: CallVia, signal?: AbortSignal, progress?: ProgressReporter, input?: CallerInput): Promise<LoggedCall>;
  /** The tool's calls wait for a person's approval (agent policy `require_approval` or `require_user_approval`). */
  readonly requiresApproval?: boolean;
}

/** The session a tool's calls belong to, and the secrets its call records are redacted of. */
export interface CallScope {
  session: SessionRecord;
  secrets: readonly string[];
}

export class CallLog {
  private inFlight = 0;
  private readonly idleWaiters: (() => void)[] = [];
  /** The agent of each call between its two writes, for the live stream's events. */
  private readonly agentOfCall = new Map<string, string>();

  /** `callTimeoutMs`: a session call's deadline, counted from its arrival (waiting for a turn included). */
  constructor(
    private readonly store: CallStore,
    readonly admission: CallAdmission,
    private readonly callTimeoutMs: number,
    /** The platform process recording the calls: each record names it, so only a process whose lease ran out has its calls marked interrupted. */
    private readonly instanceId?: string,
    /** Where each call is published as it is recorded and as it ends (the live stream listens). */
    readonly events: CallEvents = new CallEvents(),
  ) {}

  get active(): number {
    return this.inFlight;
  }

  /**
   * The one place a session's tool gets its call log and its published name (tool-names.ts): every entry
   * point calls what this returns.
   */
  withCallLog(tool: Tool, scope: CallScope, name = tool.name, approvals?: ApprovalGate): LoggedTool {
    const run = (args: Record<string, unknown>, via: CallVia, signal?: AbortSignal, progress?: ProgressReporter, input?: CallerInput): Promise<LoggedCall> =>
      this.run(scope.session, via, name, tool, args, scope.secrets, signal, progress, input, approvals);
    return Object.freeze({
      name,
      ...(approvals ? { requiresApproval: true } : {}),
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
      ...(tool.source !== undefined ? { source: tool.source } : {}),
      run,
      async call(args: Record<string, unknown>, ctx?: ToolCallContext): Promise<CallToolResult> {
        const { result, refusal } = await run(args, 'library', ctx?.signal, ctx?.progress, ctx?.input);
        if (refusal) throw refusal;
        return result;
      },
    });
  }

  /**
   * Runs one call of a session's tool and records it. Rejects only with CallRefusedError (nothing ran, nothing
   * recorded) and, for a tool that needs approval, ToolInputRequiredError (ask the client's person first);
   * every other end, the source's refusal of the arguments, a denial and a cancellation included, is a record.
   */
  async run(
    session: SessionRecord,
    via: CallVia,
    name: string,
    tool: Tool,
    args: Record<string, unknown>,
    secrets: readonly string[],
    signal?: AbortSignal,
    progress?: ProgressReporter,
    input?: CallerInput,
    approvals?: ApprovalGate,
  ): Promise<LoggedCall> {
    const callId = newId('call');
    // Throws before anything is recorded when the client's person is to be asked, or too many calls are held.
    const plan = await approvals?.plan(session.id, name, args, { callId, input, secrets, signal });
    if (plan?.kind === 'hold') return this.runHeld(session, via, name, tool, args, secrets, callId, plan, signal, progress);
    // Throws before anything is recorded when the call may not even wait (CallRefusedError).
    const admitted = this.admission.admit(session.id, session.agentId, this.callTimeoutMs, signal, tool);
    this.inFlight += 1;
    try {
      // The approval a retry carries is used up only once the call is admitted: a refused call keeps it.
      const verdict = await plan?.redeem();
      const record: CallRecord = {
        id: callId, sessionId: session.id, via, tool: name, arguments: redactArguments(args, secrets),
        outcome: 'running', crash: null, model: [], stderrTail: '', egress: [], durationMs: null, startedAt: nowIso(),
        ...(verdict ? { approval: verdict.approval } : {}),
      };
      await this.logStart(record, session.agentId);
      if (verdict && !verdict.run) return await this.notApproved(record, name, verdict, 0, secrets);
      return await this.runAdmitted(record, admitted, name, tool, args, secrets, signal, progress);
    } finally {
      admitted.end();
      this.ended();
    }
  }

  /**
   * A call held until someone decides through the API (or its deadline): recorded from its arrival, holding no
   * turn while it waits; once approved it asks for a turn like any call.
   */
  private async runHeld(
    session: SessionRecord, via: CallVia, name: string, tool: Tool, args: Record<string, unknown>, secrets: readonly string[],
    callId: string, plan: { approval: CallRecord['approval']; decided: Promise<Verdict> }, signal?: AbortSignal, progress?: ProgressReporter,
  ): Promise<LoggedCall> {
    this.inFlight += 1;
    let admitted: AdmittedCall | null = null;
    try {
      const arrived = performance.now();
      const record: CallRecord = {
        id: callId, sessionId: session.id, via, tool: name, arguments: redactArguments(args, secrets),
        outcome: 'running', crash: null, model: [], stderrTail: '', egress: [], durationMs: null, startedAt: nowIso(), approval: plan.approval,
      };
      await this.logStart(record, session.agentId);
      // A caller that follows progress learns what it waits for (and the tool's own reports still rise past it).
      progress?.(0, undefined, `waiting for a person to approve this call (approval ${plan.approval?.id}; decide it through the API)`);
      const verdict = await plan.decided;
      const decided: CallRecord = { ...record, approval: verdict.approval };
      if (!verdict.run) return await this.notApproved(decided, name, verdict, performance.now() - arrived, secrets);
      try {
        admitted = this.admission.admit(session.id, session.agentId, this.callTimeoutMs, signal, tool);
      } catch (err) {
        // Approved, but the session's queue is full (or the session went): the record says so; the caller is refused.
        const message = redactText(err instanceof Error ? err.message : String(err), secrets);
        const result: CallToolResult = { content: [{ type: 'text', text: `The tool ${name} did not run: ${message}.` }], isError: true };
        const code = String((err as { code?: unknown }).code ?? 'error');
        await this.logEnd(finish(decided, result, { status: 'crash', crash: { reason: code, message, stderr: '' }, durationMs: performance.now() - arrived }, 0, secrets));
        throw err;
      }
      return await this.runAdmitted(decided, admitted, name, tool, args, secrets, signal, progress);
    } finally {
      admitted?.end();
      this.ended();
    }
  }

  /** Ends a call that was not approved: nothing ran; the model reads why. */
  private async notApproved(record: CallRecord, name: string, verdict: Verdict & { run: false }, waitedMs: number, secrets: readonly string[]): Promise<LoggedCall> {
    const text = verdict.ending === 'cancelled'
      ? `The call to ${name} was cancelled: ${verdict.message}.`
      : `The tool ${name} did not run: ${verdict.message}.`;
    const result: CallToolResult = { content: [{ type: 'text', text }], isError: true };
    const report: LoggedReport = verdict.ending === 'stopped'
      ? { status: 'crash', crash: { reason: CrashReason.stopped, message: verdict.message, stderr: '' }, durationMs: waitedMs }
      : { status: verdict.ending, durationMs: waitedMs };
    const finished = finish(record, result, report, waitedMs, secrets);
    await this.logEnd(finished);
    return { record: finished, result, ...(verdict.ending === 'cancelled' ? { refusal: new CallCancelledError(name, verdict.message) } : {}) };
  }

  /** Every write of a call's record goes through these two: the store first, then the live stream. */
  private async logStart(record: CallRecord, agentId: string): Promise<void> {
    await this.store.addCall(this.instanceId === undefined ? record : { ...record, instanceId: this.instanceId });
    this.agentOfCall.set(record.id, agentId);
    this.events.publish(record, agentId);
  }

  private async logEnd(record: CallRecord): Promise<void> {
    const agentId = this.agentOfCall.get(record.id);
    try {
      await this.store.finishCall(record);
    } finally {
      this.agentOfCall.delete(record.id);
    }
    if (agentId !== undefined) this.events.publish(record, agentId);
  }

  private ended(): void {
    this.inFlight -= 1;
    if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** An admitted call from its turn to its end: the part every call of every tool shares. */
  private async runAdmitted(
    record: CallRecord, admitted: AdmittedCall, name: string, tool: Tool, args: Record<string, unknown>, secrets: readonly string[],
    signal?: AbortSignal, progress?: ProgressReporter,
  ): Promise<LoggedCall> {
    let turn = await admitted.started;
    // A turn that comes with no time left is a deadline passed while waiting.
    if (turn === 'run' && admitted.remainingMs() <= 0) turn = 'timeout';
    if (turn !== 'run') {
      const ended = notStartedResult(name, turn, admitted, this.callTimeoutMs);
      const finished = finish(record, ended.result, ended.report, admitted.waitedMs(), secrets);
      await this.logEnd(finished);
      return { record: finished, result: ended.result, ...(turn === 'cancelled' ? { refusal: new CallCancelledError(name, 'its caller went away before it started') } : {}) };
    }
    const started = performance.now();
    let report: LoggedReport | null = null;
    let result: CallToolResult;
    let refusal: Error | undefined;
    try {
      result = await tool.call(args, {
        signal: admitted.signal, timeoutMs: admitted.remainingMs(), report: (r) => { report = r; }, ...(progress ? { progress } : {}),
      });
    } catch (err) {
      const elapsed = performance.now() - started;
      const message = redactText(err instanceof Error ? err.message : String(err), secrets);
      if (err instanceof CallError) {
        // The source refused the arguments before any I/O: what the model reads is the refusal itself.
        refusal = err;
        result = { content: [{ type: 'text', text: message }], isError: true };
        report = { status: 'invalid_arguments', durationMs: elapsed };
      } else if (err instanceof CallCancelledError || (signal?.aborted && admitted.stoppedBecause() === null)) {
        refusal = err instanceof CallCancelledError ? err : new CallCancelledError(name);
        result = { content: [{ type: 'text', text: `The call to ${name} was cancelled: its caller went away.` }], isError: true };
        report = { ...(report as LoggedReport | null), status: 'cancelled', durationMs: (report as LoggedReport | null)?.durationMs ?? elapsed };
      } else {
        // A tool that throws (a remote server gone, a transport failure) is a crash the model reads about.
        const reason = (err as { reason?: unknown; code?: unknown }).reason ?? (err as { code?: unknown }).code ?? 'error';
        result = { content: [{ type: 'text', text: `The tool ${name} failed: ${message}` }], isError: true };
        report = { status: 'crash', crash: { reason: String(reason), message, stderr: '' }, durationMs: elapsed };
      }
    }
    const ended = report as LoggedReport | null;
    const stopped = admitted.stoppedBecause();
    // Stopped by a deletion (not by its caller): the tool saw its signal abort; the log says why.
    const told: LoggedReport | null = stopped !== null && (ended?.status === 'crash' || ended?.status === 'cancelled')
      ? { ...ended, status: 'crash', crash: { reason: CrashReason.stopped, message: `the call was stopped: ${stopped}`, stderr: ended.crash?.stderr ?? ended.stderr ?? '' } }
      : ended;
    if (stopped !== null && told?.status === 'crash') result = { content: [{ type: 'text', text: `The tool ${name} was stopped: ${stopped}.` }], isError: true };
    const finished = finish(record, result, told, performance.now() - started, secrets);
    await this.logEnd(finished);
    return { record: finished, result, ...(refusal && told?.status !== 'crash' ? { refusal } : {}) };
  }

  /** Resolves when no call is in flight, or after `timeoutMs` (returns whether all finished). */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(this.inFlight === 0), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  list(sessionId: string, page: PageRequest): Promise<Page<CallRecord>> {
    return this.store.listCalls(sessionId, page);
  }

  /** Calls of every session, newest first, narrowed by `filter`. */
  search(filter: CallFilter, page: PageRequest): Promise<Page<AgentCall>> {
    return this.store.findCalls(filter, page);
  }

  async find(id: string): Promise<AgentCall> {
    const found = await this.store.findCall(id);
    if (!found) throw new NotFoundError(`call ${id}`);
    return found;
  }

  async get(sessionId: string, id: string): Promise<CallRecord> {
    const rec = await this.store.getCall(sessionId, id);
    if (!rec) throw new NotFoundError(`call ${id} in session ${sessionId}`);
    return rec;
  }
}

/** The result and report of a call that never ran: its deadline passed while it waited, or it was stopped. */
function notStartedResult(name: string, why: NotStarted, admitted: AdmittedCall, callTimeoutMs: number): { result: CallToolResult; report: LoggedReport } {
  const waited = Math.round(admitted.waitedMs());
  const message =
    why === 'timeout'
      ? `the call waited ${waited} ms for a turn (its session or agent was running as many calls as it may, or every worker was busy) and its deadline ` +
        `of ${callTimeoutMs} ms, which counts the wait, passed before it could start`
      : why === 'stopped'
        ? `the call was stopped before it started: ${admitted.stoppedBecause() ?? 'its session was deleted'}`
        : `the caller went away after ${waited} ms, before the call started`;
  return {
    result: { content: [{ type: 'text', text: `The tool ${name} did not run: ${message}.` }], isError: true },
    report: why === 'cancelled'
      ? { status: 'cancelled', durationMs: waited }
      : { status: 'crash', crash: { reason: why, message, stderr: '' }, durationMs: waited },
  };
}

/** A tool's report, or the call log's own word on how the call ended (`invalid_arguments`). */
type LoggedReport = Omit<CallReport, 'status'> & { status: Exclude<CallOutcome, 'running'> };

function finish(record: CallRecord, result: CallToolResult, report: LoggedReport | null, elapsed: number, secrets: readonly string[]): CallRecord {
  const outcome = report?.status ?? (result.isError ? 'tool_error' : 'ok');
  return {
    ...record,
    outcome,
    crash: report?.crash ? { reason: report.crash.reason, message: redactText(report.crash.message, secrets) } : null,
    model: result.content.map((block) => loggable(block, secrets)),
    stderrTail: redactText(report?.stderr ?? report?.crash?.stderr ?? '', secrets),
    egress: report?.egress ?? [],
    durationMs: Math.round(report?.durationMs ?? elapsed),
  };
}

/** Text is kept (redacted); an image is kept as its type, size and digest, not its bytes. */
function loggable(block: ContentBlock, secrets: readonly string[]): unknown {
  if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: redactText(block.text, secrets) };
  if (block.type === 'image' && typeof block.data === 'string') {
    const bytes = Buffer.from(block.data, 'base64');
    return { type: 'image', mimeType: block.mimeType, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  }
  return redactArguments(block, secrets);
}
