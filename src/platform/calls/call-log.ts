/**
 * Every call a session makes is recorded here, whichever entry point made it (REST, the session's MCP endpoint,
 * in-process code): the call log is the outermost step composed around each of a session's tools (`step`), once,
 * when the session's toolbox is built, and every entry point calls those tools. Each call is recorded first as
 * `running` (so a call cut off by a crash of the server still leaves a record, marked interrupted once the lease
 * of the process that ran it runs out: platform.ts), then with its outcome, what the model saw (a bounded
 * preview), the stderr tail, the egress log and the time. Arguments and text are redacted before they are
 * stored. The log also counts calls in flight so a shutdown can wait for them.
 *
 * The steps inside it decide when a call is recorded (CallInFlight): admission (admission-step.ts) once the call
 * has a place — a call refused for a full queue is never recorded, so a flood of refusals is not a flood of rows —
 * and approval (approval-step.ts) as soon as a call is held for a person. A step that ends a call without running
 * it (a denial, a deadline passed in the queue, a stop) throws CallNotRun with the call's result and report; the
 * call log writes every ending in one place (`ending`): the tool's own report, `invalid_arguments` when a checked
 * source (a remote MCP tool, a TypeScript tool) refused the arguments before any I/O, `cancelled` when the caller
 * went away, a crash with reason `stopped` when the session or agent was deleted under the call, and
 * `input_required` when the tool's remote server asked the client for input and the client was asked (the input
 * relay: the round is recorded, and the retry is a call of its own).
 */
import { CallCancelledError, type CallReport, type CallToolResult, type ToolCallContext, type ToolInterceptor } from '../../tool.js';
import { CrashReason } from '../../function/index.js';
import { CallError, ToolInputRequiredError, describeInputRequests } from '../../mcp/index.js';
import { newId, nowIso } from '../ids.js';
import { cutToBytes, redactArguments, redactText } from '../../common/index.js';
import { loggedModel } from './call-preview.js';
import type { AgentCall, CallApproval, CallFilter, CallOutcome, CallRecord, CallVia, Page, PageRequest, SessionRecord, CallStore } from '../store/index.js';
import { NotFoundError } from '../errors.js';
import { CallEvents } from './call-events.js';

export interface LoggedCall {
  record: CallRecord;
  result: CallToolResult;
}

/** What a session's call carries through its steps: who made it, who wants its record, and the call as logged. */
export interface SessionCallContext extends ToolCallContext {
  /** The entry point the call came through; `library` when none says (in-process code). */
  via?: CallVia;
  /** Told the call's record and result once it is recorded as ended, before the call resolves or rejects (REST answers with it). */
  onRecord?: (logged: LoggedCall) => void;
  /** The call as the call log holds it, for the steps inside the log; set by the call log. */
  call?: CallInFlight;
  /**
   * Set by the input relay on a call that continues one whose tool asked its client for input (or whose state it
   * refused): the call's approval, when it had one before it ran, stands and is not asked again.
   */
  resumed?: { approval?: CallApproval };
}

/** The session a tool's calls belong to, and the secrets its call records are redacted of. */
export interface CallScope {
  session: SessionRecord;
  secrets: readonly string[];
}

/** A tool's report, or the call log's own word on how the call ended (`invalid_arguments`). */
export type LoggedReport = Omit<CallReport, 'status'> & { status: Exclude<CallOutcome, 'running'> };

/**
 * How a step ends a call without running it — denied, its deadline passed in the queue, stopped, cancelled
 * before it started: the result the model reads and the report the log keeps. `refusal`: what the call rejects
 * with (a cancellation), after it is recorded.
 */
export class CallNotRun extends Error {
  constructor(readonly result: CallToolResult, readonly report: LoggedReport, readonly refusal?: Error) {
    super('the call did not run');
    this.name = 'CallNotRun';
  }
}

/** A call that did not run, as the model reads it: `The tool <name> did not run: <why>.` */
export function didNotRun(name: string, why: string, report: LoggedReport, refusal?: Error): CallNotRun {
  return new CallNotRun({ content: [{ type: 'text', text: `The tool ${name} did not run: ${why}.` }], isError: true }, report, refusal);
}

/** The one way a call ends cancelled: its caller went away (before it started, while held, or while it ran). */
export function cancelledCall(name: string, durationMs: number, detail = 'its caller went away'): CallNotRun {
  return new CallNotRun(
    { content: [{ type: 'text', text: `The call to ${name} was cancelled: ${detail}.` }], isError: true },
    { status: 'cancelled', durationMs },
    new CallCancelledError(name, detail),
  );
}

/**
 * A call as the call log holds it between its arrival and its end. Recorded as `running` once (`record`): when
 * it is held for a person, or once it is admitted (after the steps that must come between a place and the
 * record — an approval a retry carries is redeemed only once the call has its place, so a refused call keeps it).
 */
export class CallInFlight {
  readonly id = newId('call');
  readonly arrived = performance.now();
  /** How the call was approved, when its tool needs approval: recorded with the call, and updated by the decision. */
  approval: CallApproval | undefined;
  /** Why the call was stopped from outside (its session or agent deleted), as admission says; null when it was not. */
  stoppedBecause: () => string | null = () => null;
  /** When the tool itself was called (performance.now()), once the call had its turn. */
  runningSince: number | null = null;
  private recorded: Promise<void> | null = null;
  private isRecorded = false;
  private readonly whenAdmitted: (() => Promise<CallNotRun | null>)[] = [];
  private readonly draft: CallRecord;

  constructor(draft: Omit<CallRecord, 'id'>, private readonly write: (record: CallRecord) => Promise<void>) {
    this.draft = { ...draft, id: this.id };
  }

  /** The record as it stands (its approval as last decided). */
  get record(): CallRecord {
    return this.approval ? { ...this.draft, approval: this.approval } : this.draft;
  }

  /** Whether the call has been recorded: from then on every ending is recorded too. */
  get logged(): boolean {
    return this.isRecorded;
  }

  /** Records the call as running, once. */
  recordStart(): Promise<void> {
    this.recorded ??= this.write(this.record).then(() => { this.isRecorded = true; });
    return this.recorded;
  }

  /** Runs once the call is admitted, before it is recorded; answering a CallNotRun ends the call once recorded. */
  onAdmitted(step: () => Promise<CallNotRun | null>): void {
    this.whenAdmitted.push(step);
  }

  /** The call has its place: the steps that wait for it, then the record; throws what a step ended the call with. */
  async admitted(): Promise<void> {
    let notRun: CallNotRun | null = null;
    for (const step of this.whenAdmitted) notRun ??= await step();
    await this.recordStart();
    if (notRun) throw notRun;
  }

  /** Milliseconds since the call arrived. */
  waitedMs(): number {
    return performance.now() - this.arrived;
  }
}

/** How a call ended, as the call log records it and its caller gets it. */
interface Ending {
  result: CallToolResult;
  report: LoggedReport | null;
  /** What the call rejects with once recorded: the source's refusal of the arguments, a cancellation, a refusal of a turn after a hold. */
  rejection?: Error;
  /** The ending came from the tool's own run (a deletion may then say why it stopped). */
  ran: boolean;
}

export class CallLog {
  private inFlight = 0;
  private readonly idleWaiters: (() => void)[] = [];
  /** The agent of each call between its two writes, for the live stream's events. */
  private readonly agentOfCall = new Map<string, string>();

  /** `callTimeoutMs`: a session call's deadline, counted from its arrival (waiting for a turn included). */
  constructor(
    private readonly store: CallStore,
    readonly callTimeoutMs: number,
    /** The platform process recording the calls: each record names it, so only a process whose lease ran out has its calls marked interrupted. */
    private readonly instanceId?: string,
    /** Where each call is published as it is recorded and as it ends (the live stream listens). */
    readonly events: CallEvents = new CallEvents(),
  ) {}

  get active(): number {
    return this.inFlight;
  }

  /**
   * The call log as the outermost step of one of a session's tools, published as `name`: made once per tool
   * when the session's toolbox is built. A call it rejects before recording anything (a refused turn, a person
   * to be asked first) leaves no record; every other ending is recorded, then resolved or rejected as
   * `Tool.call` does (CallError, CallCancelledError).
   */
  step(scope: CallScope, name: string): ToolInterceptor<SessionCallContext> {
    return (next) => async (args, ctx) => {
      const { session, secrets } = scope;
      const call = new CallInFlight({
        sessionId: session.id, via: ctx.via ?? 'library', tool: name, arguments: redactArguments(args, secrets),
        outcome: 'running', crash: null, model: [], stderrTail: '', egress: [], durationMs: null, startedAt: nowIso(),
        ...(ctx.traceparent !== undefined ? { traceparent: ctx.traceparent } : {}),
      }, (record) => this.logStart(record, session.agentId));
      this.inFlight += 1;
      try {
        let report: LoggedReport | null = null;
        let ending: Ending;
        try {
          // What only the steps inside may say of a call (a continuation, and its approval) is never taken from a caller.
          const result = await next(args, { ...ctx, call, report: (r) => { report = r; }, resumed: undefined, resume: undefined });
          ending = { result, report, ran: true };
        } catch (err) {
          // Nothing was recorded (a refused turn, a person to ask first): nothing to end either.
          if (!call.logged) throw err;
          ending = this.ending(err, name, report, call, ctx.signal, secrets);
        }
        const { record, result, rejection } = this.finish(call, ending, secrets);
        await this.logEnd(record);
        ctx.onRecord?.({ record, result });
        if (rejection) throw rejection;
        return result;
      } finally {
        this.ended();
      }
    };
  }

  /** How a call that threw once recorded ends: the one place each kind of ending is decided. */
  private ending(err: unknown, name: string, report: LoggedReport | null, call: CallInFlight, signal: AbortSignal | undefined, secrets: readonly string[]): Ending {
    if (err instanceof CallNotRun) return { result: err.result, report: err.report, rejection: err.refusal, ran: false };
    if (err instanceof ToolInputRequiredError) {
      // The tool's server asked the client for input, and the client is asked: this round ends here, the call goes on
      // in the client's retry. The log keeps what was asked, as a line.
      const asked = `The tool ${name} asked its client for input: ${describeInputRequests(err.inputRequests)}.`;
      return {
        result: { content: [{ type: 'text', text: asked }] },
        report: { status: 'input_required', durationMs: performance.now() - (call.runningSince ?? call.arrived) }, rejection: err, ran: true,
      };
    }
    const elapsed = performance.now() - (call.runningSince ?? call.arrived);
    const message = redactText(err instanceof Error ? err.message : String(err), secrets);
    if (call.runningSince === null) {
      // Refused a turn after it was recorded (held, then approved, and its queue full; or its session gone).
      const code = String((err as { code?: unknown }).code ?? 'error');
      const ended = didNotRun(name, message, { status: 'crash', crash: { reason: code, message, stderr: '' }, durationMs: elapsed });
      return { result: ended.result, report: ended.report, rejection: err as Error, ran: false };
    }
    if (err instanceof CallError) {
      // The source refused the arguments before any I/O: what the model reads is the refusal itself.
      return { result: { content: [{ type: 'text', text: message }], isError: true }, report: { status: 'invalid_arguments', durationMs: elapsed }, rejection: err, ran: true };
    }
    if (err instanceof CallCancelledError || (signal?.aborted && call.stoppedBecause() === null)) {
      const cancelled = cancelledCall(name, (report as LoggedReport | null)?.durationMs ?? elapsed);
      return { result: cancelled.result, report: { ...(report as LoggedReport | null), ...cancelled.report }, rejection: err instanceof CallCancelledError ? err : cancelled.refusal, ran: true };
    }
    // A tool that throws (a remote server gone, a transport failure) is a crash the model reads about.
    const reason = (err as { reason?: unknown; code?: unknown }).reason ?? (err as { code?: unknown }).code ?? 'error';
    return {
      result: { content: [{ type: 'text', text: `The tool ${name} failed: ${message}` }], isError: true },
      report: { status: 'crash', crash: { reason: String(reason), message, stderr: '' }, durationMs: elapsed },
      ran: true,
    };
  }

  /** The record of a call's end, and what its caller gets; a call its session's or agent's deletion stopped says so. */
  private finish(call: CallInFlight, ending: Ending, secrets: readonly string[]): { record: CallRecord; result: CallToolResult; rejection?: Error } {
    let { result, report, rejection } = ending;
    const stopped = ending.ran ? call.stoppedBecause() : null;
    if (stopped !== null && (report?.status === 'crash' || report?.status === 'cancelled')) {
      report = { ...report, status: 'crash', crash: { reason: CrashReason.stopped, message: `the call was stopped: ${stopped}`, stderr: report.crash?.stderr ?? report.stderr ?? '' } };
      result = { content: [{ type: 'text', text: `The tool ${call.record.tool} was stopped: ${stopped}.` }], isError: true };
      rejection = undefined;
    }
    const elapsed = performance.now() - (call.runningSince ?? call.arrived);
    const record: CallRecord = {
      ...call.record,
      outcome: report?.status ?? (result.isError ? 'tool_error' : 'ok'),
      crash: report?.crash ? { reason: report.crash.reason, message: cutToBytes(redactText(report.crash.message, secrets), MAX_CRASH_MESSAGE_BYTES) } : null,
      model: loggedModel(result.content, secrets),
      stderrTail: redactText(report?.stderr ?? report?.crash?.stderr ?? '', secrets),
      egress: report?.egress ?? [],
      durationMs: Math.round(report?.durationMs ?? elapsed),
      ...(report?.worker ? { worker: report.worker } : {}),
    };
    return { record, result, ...(rejection ? { rejection } : {}) };
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

/** The most the log keeps of a crash's message (a remote server's error text, a library tool's exception). */
const MAX_CRASH_MESSAGE_BYTES = 4 * 1024;

