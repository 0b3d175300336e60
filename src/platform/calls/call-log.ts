/**
 * Every call a session makes is recorded here, whichever entry point made it (REST, the session's MCP endpoint,
 * in-process code): the call log is the outermost step composed around each of a session's tools (`step`), once,
 * when the session's toolbox is built, and every entry point calls those tools. A call is recorded as `running`
 * (so a call cut off by a crash of the server still leaves a record, marked `unknown` once the lease of the
 * process that ran it runs out: platform.ts), then with its outcome, what the model saw (a bounded preview), the
 * stderr tail, the egress log and the time. A quick call — one that ends within `callRecordDelayMs` of its
 * admission (100 ms by default) — is written once, whole, as it ends: the write on every call's path is one, not
 * two. Arguments and text are redacted before they are stored. The log also counts calls in flight so a shutdown
 * can wait for them.
 *
 * Exactly one outcome per call. A database out of reach refuses calls (CallNotStartedError: they did not run,
 * retrying is safe): a call held for a person, a call bound to an idempotency key, and every call while the
 * database has not taken an earlier call's end, run only once their `running` record is written. A call's end that the database
 * cannot take is kept (call-outbox.ts) and written once it is back, while the caller gets its outcome at once; the
 * end is written fenced by the lease the call began under (store `finishCall`), so a mark another replica made
 * while this one's lease was lapsed is noted, not silently overwritten. A call with an idempotency key goes
 * through call-keys.ts: a retry is answered the first call's outcome rather than run again. A call interrupted
 * mid-run (its worker stopped answering) has an `unknown` outcome: whether the tool ran to its end is not known.
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
 *
 * Each call is a span too (call-span.ts), around all of the above: under the client's trace context, which the
 * record keeps, while the steps and the tool inside run under the span's own.
 */
import { CallCancelledError, type CallReport, type CallToolResult, type ToolCall, type ToolCallContext, type ToolInterceptor } from '../../tool.js';
import { CrashReason } from '../../function/index.js';
import { CallError, ClientCapabilityRequiredError, ToolInputRequiredError, UpstreamTaskError, describeInputRequests } from '../../mcp/index.js';
import { newId, nowIso } from '../ids.js';
import { cutToBytes, redactArguments, redactText, systemClock, type Clock, type Logger } from '../../common/index.js';
import { loggedModel } from './call-preview.js';
import type { AgentCall, CallApproval, CallFilter, CallKeyStore, CallOutcome, CallRecord, CallVia, Page, PageRequest, SessionRecord, CallStore } from '../store/index.js';
import { NotFoundError, StoreUnavailableError } from '../errors.js';
import { CallEvents } from './call-events.js';
import { CallKeys, IDEMPOTENCY_META_KEY, REPLAYED_META_KEY, checkIdempotencyKey, type FirstCallEnd, type KeyedCall, type Replay } from './call-keys.js';
import { CallOutbox, type PendingEnd } from './call-outbox.js';
import { CallNotStartedError } from './call-refusals.js';
import { CallSpan } from './call-span.js';
import { statsQuery, statsWindow, type CallStatsWindow, type StatsWindow } from './call-stats.js';

export interface LoggedCall {
  record: CallRecord;
  result: CallToolResult;
  /** A retry with the same idempotency key: the first call's record and result; nothing ran again. */
  replayed?: boolean;
  /** The database could not take the call's end: this process holds it and writes it once it can (the log shows the call running till then). */
  endHeld?: boolean;
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
  /**
   * The REST call's Idempotency-Key header as it came, checked here (checkIdempotencyKey) like an MCP call's
   * `_meta` field (`ctx.meta`).
   */
  idempotencyKey?: unknown;
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
 *
 * Once admitted, the `running` record may wait (`startDelayMs`): a call that ends within that time is recorded
 * once, whole, as it ends — one write instead of two, on every call's path — and one still running then is
 * recorded as `running` at that moment, its end written over it as before. The call log says when it may wait.
 * The live stream hears of the call as it starts either way (`announce`): its event carries the whole record.
 */
export class CallInFlight {
  readonly id: string;
  readonly arrived = performance.now();
  /** How the call was approved, when its tool needs approval: recorded with the call, and updated by the decision. */
  approval: CallApproval | undefined;
  /** Why the call was stopped from outside (its session or agent deleted), as admission says; null when it was not. */
  stoppedBecause: () => string | null = () => null;
  /** When the tool itself was called (performance.now()), once the call had its turn. */
  runningSince: number | null = null;
  private recorded: Promise<void> | null = null;
  private isRecorded = false;
  /** Admitted with its `running` record put off: the call is recorded however it ends. */
  private startPutOff = false;
  private startTimer: NodeJS.Timeout | null = null;
  private readonly whenAdmitted: (() => Promise<CallNotRun | null>)[] = [];
  private readonly draft: CallRecord;

  /** The live stream has heard that the call started (once, whichever way its record went). */
  private announced = false;

  /**
   * `id`: the call's id when it was chosen before (an idempotency key was bound to it); a new one otherwise.
   * `startDelayMs`: asked as the call is admitted, how long its `running` record may wait (null: it is written first).
   */
  constructor(
    draft: Omit<CallRecord, 'id'>,
    private readonly recorder: StartRecorder,
    id = newId('call'),
    private readonly startDelayMs: () => number | null = () => null,
  ) {
    this.id = id;
    this.draft = { ...draft, id };
  }

  /** The record as it stands (its approval as last decided). */
  get record(): CallRecord {
    return this.approval ? { ...this.draft, approval: this.approval } : this.draft;
  }

  /** Whether the call has been recorded, or admitted to be recorded as it ends: either way its ending is recorded. */
  get logged(): boolean {
    return this.isRecorded || this.startPutOff;
  }

  /** Records the call as running, once, and announces it once recorded (unless it was announced already). */
  recordStart(): Promise<void> {
    this.recorded ??= this.recorder.write(this.record).then(() => {
      this.isRecorded = true;
      this.announce();
    });
    return this.recorded;
  }

  private announce(): void {
    if (this.announced) return;
    this.announced = true;
    this.recorder.announce(this.record);
  }

  /**
   * How the call's end is to be written: `first` when no `running` record of it was written (put off, and the call
   * ended in time; or its write failed), `over` when it was. Asked once, as the call ends: a put-off record is not
   * written after that.
   */
  async endWrite(): Promise<'first' | 'over'> {
    if (this.startTimer !== null) {
      clearTimeout(this.startTimer);
      this.startTimer = null;
      return 'first';
    }
    if (this.recorded === null) return 'first';
    try {
      await this.recorded;
      return 'over';
    } catch {
      // Whether that write landed is not known: the one-write form finds out (store `recordEndedCall`).
      return 'first';
    }
  }

  /** Runs once the call is admitted, before it is recorded; answering a CallNotRun ends the call once recorded. */
  onAdmitted(step: () => Promise<CallNotRun | null>): void {
    this.whenAdmitted.push(step);
  }

  /** The call has its place: the steps that wait for it, then the record; throws what a step ended the call with. */
  async admitted(): Promise<void> {
    let notRun: CallNotRun | null = null;
    for (const step of this.whenAdmitted) notRun ??= await step();
    const delayMs = this.recorded === null ? this.startDelayMs() : null;
    if (delayMs === null) await this.recordStart();
    else this.putOffStart(delayMs);
    if (notRun) throw notRun;
  }

  /** The call runs at once; its `running` record is written only if it still runs `delayMs` from now. */
  private putOffStart(delayMs: number): void {
    this.startPutOff = true;
    this.announce();
    this.startTimer = setTimeout(() => {
      this.startTimer = null;
      // A failure here is the end's to mend: it is then written as the call's first record.
      this.recordStart().catch(() => undefined);
    }, delayMs);
  }

  /** Milliseconds since the call arrived. */
  waitedMs(): number {
    return performance.now() - this.arrived;
  }
}

/** Where a call's `running` record goes: the store, and the live stream. */
export interface StartRecorder {
  write(record: CallRecord): Promise<void>;
  announce(record: CallRecord): void;
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

export interface CallLogOptions {
  store: CallStore & CallKeyStore;
  /** A session call's deadline, counted from its arrival (waiting for a turn included). */
  callTimeoutMs: number;
  /** The platform process recording the calls: each record names it, so only a process whose lease ran out has its calls marked unknown. */
  instanceId?: string;
  /** The deployment's sealing key: idempotency keys' results are kept sealed with it. */
  sealingKey: Buffer;
  /** Where each call is published as it is recorded and as it ends (the live stream listens). */
  events?: CallEvents;
  clock?: Clock;
  /** Where call ends held for the database, and ends written past a lapsed lease, are told. */
  log: Logger;
  /**
   * How long an admitted call may run before its `running` record is written (CallInFlight); a call that ends
   * sooner is written once, as it ends. 0: every call is recorded as running before it runs.
   * DEFAULT_CALL_RECORD_DELAY_MS when absent.
   */
  callRecordDelayMs?: number;
}

/**
 * A call quicker than this is written once, as it ends. The price: a server killed outright (not stopped: a
 * stop waits for its calls) loses the records of the calls it started in this last moment — a database out of
 * reach still refuses calls, from the first end it could not take (see `startDelay`).
 */
export const DEFAULT_CALL_RECORD_DELAY_MS = 100;

/** A call bound to an idempotency key, as it runs: the key, its call's id, and who to tell as it ends. */
interface KeyedRun extends KeyedCall {
  callId: string;
  ended: (end: FirstCallEnd) => void;
}

export class CallLog {
  private inFlight = 0;
  private readonly idleWaiters: (() => void)[] = [];
  readonly callTimeoutMs: number;
  readonly events: CallEvents;
  private readonly store: CallStore & CallKeyStore;
  private readonly clock: Clock;
  private readonly instanceId: string | undefined;
  private readonly keys: CallKeys;
  private readonly outbox: CallOutbox;
  private readonly log: Logger;
  private readonly callRecordDelayMs: number;

  constructor(options: CallLogOptions) {
    this.store = options.store;
    this.callTimeoutMs = options.callTimeoutMs;
    this.instanceId = options.instanceId;
    this.events = options.events ?? new CallEvents();
    this.log = options.log;
    this.keys = new CallKeys(options.store, options.sealingKey, options.clock ?? systemClock);
    this.clock = options.clock ?? systemClock;
    this.outbox = new CallOutbox((end) => this.land(end), options.log);
    this.callRecordDelayMs = options.callRecordDelayMs ?? DEFAULT_CALL_RECORD_DELAY_MS;
  }

  get active(): number {
    return this.inFlight;
  }

  /**
   * The call log as the outermost step of one of a session's tools, published as `name`: made once per tool
   * when the session's toolbox is built. A call it rejects before recording anything (a refused turn, a person
   * to be asked first) leaves no record; every other ending is recorded, then resolved or rejected as
   * `Tool.call` does (CallError, CallCancelledError). A call with an idempotency key runs once per key.
   */
  step(scope: CallScope, name: string): ToolInterceptor<SessionCallContext> {
    return (next) => (args, ctx) => {
      // The call's span is around everything the call log does with it, a retry answered from its key included.
      const span = CallSpan.start(name, scope.session, ctx.via ?? 'library', ctx.traceparent);
      return span.around(async () => {
        const key = ctx.idempotencyKey !== undefined ? checkIdempotencyKey(ctx.idempotencyKey, 'the Idempotency-Key header') : metaKey(ctx.meta);
        if (key === undefined) return this.run(scope, name, next, args, ctx, span);
        const keyed: KeyedCall = { sessionId: scope.session.id, key, tool: name, requestHash: this.keys.requestHash(name, args) };
        return this.keys.call(keyed, this.callTimeoutMs, ctx.signal,
          (callId, ended) => this.run(scope, name, next, args, ctx, span, { ...keyed, callId, ended }),
          (replay) => this.replayed(replay, ctx, span));
      });
    };
  }

  /** One call, recorded as it starts and as it ends; `keyed` when it is an idempotency key's first call. */
  private async run(
    scope: CallScope, name: string, next: ToolCall<SessionCallContext>, args: Record<string, unknown>, ctx: SessionCallContext, span: CallSpan, keyed?: KeyedRun,
  ): Promise<CallToolResult> {
    const { session, secrets } = scope;
    const call = new CallInFlight({
      sessionId: session.id, via: ctx.via ?? 'library', tool: name, arguments: redactArguments(args, secrets),
      outcome: 'running', crash: null, model: [], stderrTail: '', egress: [], durationMs: null, startedAt: nowIso(),
      ...(ctx.traceparent !== undefined ? { traceparent: ctx.traceparent } : {}),
    }, { write: (record) => this.storeStart(record), announce: (record) => this.events.publish(record, session.agentId) }, keyed?.callId, () => this.startDelay(keyed));
    this.inFlight += 1;
    try {
      let report: LoggedReport | null = null;
      let ending: Ending;
      try {
        // What only the steps inside may say of a call (a continuation, and its approval) is never taken from a caller.
        // What the call does runs under the call's span: the record keeps the caller's trace context, the tool gets the span's.
        const traceparent = span.traceparent;
        const result = await next(args, {
          ...ctx, call, report: (r) => { report = r; }, resumed: undefined, resume: undefined, ...(traceparent !== undefined ? { traceparent } : {}),
        });
        ending = { result, report, ran: true };
      } catch (err) {
        // Nothing was recorded (a refused turn, a person to ask first, the database out of reach): nothing ran,
        // nothing to end, and a key this call held is free again.
        if (!call.logged) {
          span.refused(err);
          if (keyed) await this.freeUnrecorded(keyed);
          throw err instanceof StoreUnavailableError ? new CallNotStartedError({ cause: err }) : err;
        }
        ending = this.ending(err, name, report, call, ctx.signal, secrets);
      }
      const { record, result, rejection } = this.finish(call, ending, secrets);
      span.recorded(record);
      // Under the call's span: with traces exported, the line carries their trace_id and span_id.
      this.log.debug({ callId: record.id, tool: name, session: session.id, outcome: record.outcome, durationMs: record.durationMs }, 'call ended');
      let key: PendingEnd['key'];
      if (keyed) {
        // Waiting retries hear at once; the store hears with the call's end, just below.
        const end: FirstCallEnd = ranItsTool(call, record) ? { ran: true, replay: { record, result } } : { ran: false };
        keyed.ended(end);
        key = this.keys.keyEnd(keyed, keyed.callId, end);
      }
      const first = await call.endWrite() === 'first';
      const endHeld = await this.writeEnd({ record, agentId: session.agentId, ...(key ? { key } : {}), ...(first ? { first } : {}) });
      ctx.onRecord?.({ record, result, ...(endHeld ? { endHeld } : {}) });
      if (rejection) throw rejection;
      return result;
    } finally {
      this.ended();
    }
  }

  /** A retry answered the first call's outcome: the caller hears the record, and an MCP result names the call it replays. */
  private replayed(replay: Replay, ctx: SessionCallContext, span: CallSpan): CallToolResult {
    span.recorded(replay.record, true);
    ctx.onRecord?.({ ...replay, replayed: true });
    return { ...replay.result, _meta: { ...replay.result._meta, [REPLAYED_META_KEY]: replay.record.id } };
  }

  /** A keyed call refused before it was recorded gives its key back (best effort: a claim left behind is taken over later). */
  private async freeUnrecorded(keyed: KeyedRun): Promise<void> {
    keyed.ended({ ran: false });
    await this.store.releaseCallKey(keyed.sessionId, keyed.key, keyed.callId).catch(() => undefined);
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
    if (err instanceof UpstreamTaskError) {
      // The tool's server runs the call as a task of its own, handed to the client as a task of the session's: the
      // call went as far as a call goes here; the task's end is the task's.
      return {
        result: { content: [{ type: 'text', text: `The tool ${name}'s server runs the call as a task of its own (${err.task.status}); its end is the task's.` }] },
        report: { status: 'ok', durationMs: performance.now() - (call.runningSince ?? call.arrived) }, rejection: err, ran: true,
      };
    }
    if (err instanceof ClientCapabilityRequiredError) {
      // The tool's server needs a capability the client did not declare: the client is answered -32021, the log says so.
      return {
        result: { content: [{ type: 'text', text: `The tool ${name} did not complete: ${err.message}.` }], isError: true },
        report: { status: 'tool_error', durationMs: performance.now() - (call.runningSince ?? call.arrived) }, rejection: err, ran: true,
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
      outcome: outcomeOf(report, result),
      crash: report?.crash ? { reason: report.crash.reason, message: cutToBytes(redactText(report.crash.message, secrets), MAX_CRASH_MESSAGE_BYTES) } : null,
      model: loggedModel(result.content, secrets),
      stderrTail: redactText(report?.stderr ?? report?.crash?.stderr ?? '', secrets),
      egress: report?.egress ?? [],
      durationMs: Math.round(report?.durationMs ?? elapsed),
      ...(report?.worker ? { worker: report.worker } : {}),
    };
    return { record, result, ...(rejection ? { rejection } : {}) };
  }

  /**
   * How long a call's `running` record may wait once it is admitted; null when it is written before the call runs:
   * always with a delay of 0; for a call bound to an idempotency key (a retry reads its course from the record); and
   * while the database has not taken the ends of earlier calls (the outbox holds some), so that a database out of
   * reach refuses calls (CallNotStartedError) rather than have them run unrecorded.
   */
  private startDelay(keyed: KeyedRun | undefined): number | null {
    if (this.callRecordDelayMs === 0 || keyed !== undefined || this.outbox.size > 0) return null;
    return this.callRecordDelayMs;
  }

  /** Every write of a call's record goes through these: the store first, then the live stream. */
  private async storeStart(record: CallRecord): Promise<void> {
    await this.store.addCall(this.withInstance(record));
    // The database answers: ends held for it need not wait for their next try.
    this.outbox.kick();
  }

  private withInstance(record: CallRecord): CallRecord {
    return this.instanceId === undefined ? record : { ...record, instanceId: this.instanceId };
  }

  /** Writes a call's end now, or holds it for later when the database cannot take it: answers whether it is held. */
  private async writeEnd(end: PendingEnd): Promise<boolean> {
    try {
      await this.land(end);
      return false;
    } catch (err) {
      this.outbox.hold(end, err);
      return true;
    }
  }

  /** A call's end into the store: its key's first (so a key never says "running" of a call that ended), then its record. */
  private async land(end: PendingEnd): Promise<void> {
    const { key } = end;
    if (key?.write === 'release') await this.store.releaseCallKey(key.sessionId, key.key, key.callId);
    else if (key && key.write !== 'none') await this.store.settleCallKey(key.sessionId, key.key, key.callId, key.write.result);
    const written = end.first ? await this.store.recordEndedCall(this.withInstance(end.record)) : await this.store.finishCall(end.record);
    if (key) this.keys.landed(key.sessionId, key.key, key.callId);
    if (written.status === 'gone' || end.agentId === undefined) return;
    let { record } = end;
    if (written.status === 'lease_lapsed') {
      record = { ...record, leaseLapsed: written.leaseLapsed };
      this.log.warn({ callId: record.id, markedAs: written.leaseLapsed.markedAs },
        `the end of call ${record.id} (${record.outcome}) was written after this server's lease had lapsed; ${written.leaseLapsed.note}`);
    }
    this.events.publish(record, end.agentId);
  }

  private ended(): void {
    this.inFlight -= 1;
    if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** Resolves when every call end held for the database is written, or after `timeoutMs` (answers whether none is left). */
  flushEnds(timeoutMs: number): Promise<boolean> {
    return this.outbox.flush(timeoutMs);
  }

  /** Stops writing held ends (the process is closing): their calls are marked `unknown` once its lease lapses. */
  close(): void {
    this.outbox.close();
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

  /** The calls of the last hour (by minute) or day (by hour): counts, errors, latency by tool and by agent. */
  async stats(window: StatsWindow): Promise<CallStatsWindow> {
    const now = this.clock.now();
    return statsWindow(window, now, await this.store.callStats(statsQuery(window, now)));
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

/**
 * A call's outcome from its report: a call interrupted mid-run (its worker stopped answering) has an `unknown`
 * one — the tool may have run to its end, or not — whatever its report calls it.
 */
function outcomeOf(report: LoggedReport | null, result: CallToolResult): Exclude<CallOutcome, 'running'> {
  if (report?.crash?.reason === CrashReason.interrupted) return 'unknown';
  return report?.status ?? (result.isError ? 'tool_error' : 'ok');
}

/**
 * Whether a call ran its tool, so that its idempotency key holds its outcome: it had its turn, and the tool did
 * not refuse its arguments before any I/O nor fail for the database's sake before it did anything (a function
 * call's vault credentials are read as it starts). A call that never ran frees its key: a retry runs it. A round
 * that ended `input_required` frees it too: the call goes on in the client's retry (which may carry the same key),
 * and the key holds the outcome that retry comes to, not the question.
 */
function ranItsTool(call: CallInFlight, record: CallRecord): boolean {
  return call.runningSince !== null && record.outcome !== 'invalid_arguments' && record.outcome !== 'input_required'
    && record.crash?.reason !== 'store_unavailable';
}

/** The idempotency key an MCP call's `_meta` carries, checked; undefined when it carries none. */
function metaKey(meta: Record<string, unknown> | undefined): string | undefined {
  if (meta === undefined || !Object.prototype.hasOwnProperty.call(meta, IDEMPOTENCY_META_KEY)) return undefined;
  return checkIdempotencyKey(meta[IDEMPOTENCY_META_KEY], `_meta["${IDEMPOTENCY_META_KEY}"]`);
}

/** The most the log keeps of a crash's message (a remote server's error text, a library tool's exception). */
const MAX_CRASH_MESSAGE_BYTES = 4 * 1024;

