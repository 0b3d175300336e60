/**
 * Every call a session makes, from the REST API or its MCP endpoint, runs through here and is recorded:
 * first as `running` (so a call cut off by a crash of the server still leaves a record, marked interrupted at
 * the next start), then with its outcome, what the model saw, the stderr tail, the egress log and the time.
 * Arguments and text are redacted before they are stored. The log also counts calls in flight so a
 * shutdown can wait for them.
 *
 * Before anything is recorded, the call asks call admission (call-admission.ts) for a turn. A refusal (the
 * session's or agent's queue is full) is thrown as CallRefusedError and is not logged: nothing ran, and a flood
 * of refused calls must not turn into a flood of rows. An admitted call is logged from its arrival; if its
 * deadline passes while it waits it ends as a `timeout` crash without running, and when it runs the tool gets
 * only what is left of the deadline (`timeoutMs`).
 */
import { createHash } from 'node:crypto';
import type { CallReport, CallToolResult, ContentBlock, Tool } from '../tool.js';
import { newId, nowIso } from './ids.js';
import { redactArguments, redactText } from '../common/index.js';
import type { CallRecord, Page, PageRequest, SessionRecord, Store } from './store.js';
import { NotFoundError } from './errors.js';
import type { AdmittedCall, CallAdmission, NotStarted } from './call-admission.js';

export interface LoggedCall {
  record: CallRecord;
  result: CallToolResult;
}

export class CallLog {
  private inFlight = 0;
  private readonly idleWaiters: (() => void)[] = [];

  /** `callTimeoutMs`: a session call's deadline, counted from its arrival (waiting for a turn included). */
  constructor(
    private readonly store: Store,
    readonly admission: CallAdmission,
    private readonly callTimeoutMs: number,
  ) {}

  get active(): number {
    return this.inFlight;
  }

  async run(
    session: SessionRecord,
    via: 'api' | 'mcp',
    name: string,
    tool: Tool,
    args: Record<string, unknown>,
    secrets: readonly string[],
    signal?: AbortSignal,
  ): Promise<LoggedCall> {
    // Throws before anything is recorded when the call may not even wait (CallRefusedError).
    const admitted = this.admission.admit(session.id, session.agentId, this.callTimeoutMs, signal);
    this.inFlight += 1;
    try {
      const record: CallRecord = {
        id: newId('call'), sessionId: session.id, via, tool: name, arguments: redactArguments(args, secrets),
        outcome: 'running', crash: null, model: [], stderrTail: '', egress: [], durationMs: null, startedAt: nowIso(),
      };
      await this.store.addCall(record);
      let turn = await admitted.started;
      // A turn that comes with no time left is a deadline passed while waiting.
      if (turn === 'run' && admitted.remainingMs() <= 0) turn = 'timeout';
      if (turn !== 'run') {
        const result = notStartedResult(name, turn, admitted, this.callTimeoutMs);
        const finished = finish(record, result.result, result.report, admitted.waitedMs(), secrets);
        await this.store.finishCall(finished);
        return { record: finished, result: result.result };
      }
      const started = performance.now();
      let report: CallReport | null = null;
      let result: CallToolResult;
      try {
        result = await tool.call(args, { signal: admitted.signal, timeoutMs: admitted.remainingMs(), report: (r) => { report = r; } });
      } catch (err) {
        // A tool that throws (a remote server gone, a transport failure) is a crash the model reads about.
        const message = redactText(err instanceof Error ? err.message : String(err), secrets);
        const reason = (err as { reason?: unknown; code?: unknown }).reason ?? (err as { code?: unknown }).code ?? 'error';
        result = { content: [{ type: 'text', text: `The tool ${name} failed: ${message}` }], isError: true };
        report = { status: 'crash', crash: { reason: String(reason), message, stderr: '' }, durationMs: performance.now() - started };
      }
      const ended = report as CallReport | null;
      const stopped = admitted.stoppedBecause();
      // The tool saw its signal abort and reports a crash; the log says why it was aborted.
      const told = stopped !== null && ended?.status === 'crash'
        ? { ...ended, crash: { reason: 'stopped', message: `the call was stopped: ${stopped}`, stderr: ended.crash?.stderr ?? '' } }
        : ended;
      const finished = finish(record, result, told, performance.now() - started, secrets);
      await this.store.finishCall(finished);
      return { record: finished, result };
    } finally {
      admitted.end();
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
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

  async get(sessionId: string, id: string): Promise<CallRecord> {
    const rec = await this.store.getCall(sessionId, id);
    if (!rec) throw new NotFoundError(`call ${id} in session ${sessionId}`);
    return rec;
  }
}

/** The result and report of a call that never ran: its deadline passed while it waited, or it was stopped. */
function notStartedResult(name: string, why: NotStarted, admitted: AdmittedCall, callTimeoutMs: number): { result: CallToolResult; report: CallReport } {
  const waited = Math.round(admitted.waitedMs());
  const message =
    why === 'timeout'
      ? `the call waited ${waited} ms for a turn (its session or agent was running as many calls as it may) and its deadline ` +
        `of ${callTimeoutMs} ms, which counts the wait, passed before it could start`
      : why === 'stopped'
        ? `the call was stopped before it started: ${admitted.stoppedBecause() ?? 'its session was deleted'}`
        : `the caller went away after ${waited} ms, before the call started`;
  return {
    result: { content: [{ type: 'text', text: `The tool ${name} did not run: ${message}.` }], isError: true },
    report: { status: 'crash', crash: { reason: why, message, stderr: '' }, durationMs: waited },
  };
}

function finish(record: CallRecord, result: CallToolResult, report: CallReport | null, elapsed: number, secrets: readonly string[]): CallRecord {
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
