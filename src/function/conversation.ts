/**
 * One stateless MCP conversation with a running guest: write a request, read answer lines as they come,
 * and turn every deviation from the ABI into a crash with its reason. The first crash wins, and nothing the
 * guest writes on stdout after it is read: nothing said after breaking the protocol can be trusted. The
 * guest is not stopped at that line, though: stdin ends, and it gets the same exit grace period as after a
 * last answer, so the stderr it writes on its way out — often its own explanation of the error it just
 * answered — reaches the crash report; past the grace it is stopped. Notifications break nothing: they are
 * ignored, but for progress the call asked for (progress-relay.ts).
 */
import type { RunHandle, RunOutcome, RunResult } from '../sandbox/index.js';
import { LineSplitter } from './line-splitter.js';
import { classifyLine } from './messages.js';
import { crash, CrashReason, type Crash } from './crash.js';
import type { OutgoingRequest } from './protocol.js';
import type { ProgressRelay } from './progress-relay.js';

/** Rejection of `request` when the conversation has crashed; the crash itself is in `finish()`. */
export class ConversationCrashed extends Error {
  constructor(readonly crash: Crash) {
    super(crash.message);
    this.name = 'ConversationCrashed';
  }
}

export interface ConversationEnd {
  crash: Crash | null;
  run: RunResult;
}

interface Pending {
  request: OutgoingRequest;
  /** The last request of the conversation: stdin closes as soon as its answer is read. */
  last: boolean;
  resolve: (result: unknown) => void;
  reject: (err: ConversationCrashed) => void;
}

const excerpt = (line: string): string => (line.length > 120 ? `${line.slice(0, 120)}…` : line);

/** What a run's end means when the guest still owed an answer, or after stdin closed. */
export function crashFromOutcome(outcome: RunOutcome, owedAnswer: boolean): Crash | null {
  switch (outcome.kind) {
    case 'exit':
      if (owedAnswer) return crash(CrashReason.exitedEarly, `the module exited with status ${outcome.code} before answering`);
      return outcome.code === 0 ? null : crash(CrashReason.exitStatus, `the module exited with status ${outcome.code}; ABI 1 wants 0`);
    case 'trap':
      return crash(CrashReason.trap, `the module trapped: ${outcome.message}`);
    case 'out_of_memory':
      return crash(CrashReason.outOfMemory, `the module ran out of memory: ${outcome.message}`);
    case 'timeout':
      return crash(CrashReason.timeout, 'the module did not finish within its time limit');
    case 'stdout_limit':
      return crash(CrashReason.stdoutLimit, 'the module wrote more than the stdout limit');
    case 'killed':
      // Not a timeout (the sandbox reports its own deadline as `timeout`): someone stopped the run.
      return crash(CrashReason.stopped, `the run was stopped: ${outcome.reason}`);
    case 'sandbox_crashed':
      return crash(CrashReason.sandboxCrashed, `${outcome.message} while this call ran; the host started a new one`);
  }
}

export class GuestConversation {
  private readonly lines = new LineSplitter();
  private pending: Pending | null = null;
  private crashed: Crash | null = null;
  private handle: RunHandle | null = null;
  private ended = false;
  /** Ids this conversation asked, so a repeated answer is told apart from a stray one. */
  private readonly asked = new Set<string | number>();
  /** The sandbox gives end of file itself at the last answer (`RunRequest.endStdinAfterAnswer`). */
  private sandboxEndsStdin = false;
  /** The last request's answer was read: stdin has ended or is ending. */
  private lastAnswered = false;

  /** `progress`: the call wants progress; the guest's `notifications/progress` lines go to it, the rest are ignored. */
  constructor(private readonly exitGraceMs: number, private readonly progress?: ProgressRelay) {}

  /** The stdout callback to give the sandbox before the run starts. */
  readonly onStdout = (chunk: Uint8Array): void => {
    if (this.crashed) return;
    this.lines.push(chunk, this.onLine);
  };

  /**
   * Binds the run; `first` is the request already placed on stdin when the run was started. `last`: no
   * request follows, so stdin closes the moment its answer is read (as `finish` would, a few turns of the
   * event loop later: the guest's wait for end of file is on the call's path). `sandboxEndsStdin`: the run
   * was started with `endStdinAfterAnswer` for `first`, so the sandbox has given end of file by the time the
   * answer is read here, and closing it again would only cost a message across the sandbox's boundary.
   */
  attach(handle: RunHandle, first: OutgoingRequest, last = false, sandboxEndsStdin = false): Promise<unknown> {
    this.handle = handle;
    this.sandboxEndsStdin = last && sandboxEndsStdin;
    const answered = this.expect(first, last);
    void handle.result.then((run) => this.onRunEnded(run));
    return answered;
  }

  /** Sends another request once the previous one was answered. */
  request(request: OutgoingRequest): Promise<unknown> {
    if (this.crashed) return Promise.reject(new ConversationCrashed(this.crashed));
    const answered = this.expect(request, false);
    this.handle!.writeStdin(Buffer.from(request.line));
    return answered;
  }

  /**
   * Closes stdin and waits for the module to exit within the grace period; classifies the whole run. A module
   * still running at the end of the grace is stopped: after a crash with that crash as the reason, else as
   * `no_exit`.
   */
  async finish(): Promise<ConversationEnd> {
    const handle = this.handle!;
    if (!(this.sandboxEndsStdin && this.lastAnswered)) handle.closeStdin();
    let timer: NodeJS.Timeout | undefined;
    if (!this.ended) {
      timer = setTimeout(() => {
        if (this.crashed) handle.kill(this.crashed.reason);
        else this.fail(crash(CrashReason.noExit, `the module did not exit within ${this.exitGraceMs} ms of stdin closing`), true);
      }, this.exitGraceMs);
    }
    const run = await handle.result;
    clearTimeout(timer);
    this.onRunEnded(run);
    return { crash: this.crashed ?? crashFromOutcome(run.outcome, false), run };
  }

  private expect(request: OutgoingRequest, last: boolean): Promise<unknown> {
    this.asked.add(request.id);
    return new Promise((resolve, reject) => {
      this.pending = { request, last, resolve, reject };
    });
  }

  private readonly onLine = (line: string): void => {
    if (this.crashed || line.length === 0) return;
    const message = classifyLine(line);
    switch (message.kind) {
      case 'notification':
        // Only while an answer is owed: progress after the answer describes nothing the caller waits for.
        if (message.method === 'notifications/progress' && this.pending) this.progress?.offer(message.params);
        return;
      case 'invalid':
        return this.fail(crash(CrashReason.notJsonRpc, `stdout carried a line that is not a JSON-RPC message (${message.why}): ${excerpt(line)}`));
      case 'request':
        return this.fail(crash(CrashReason.moduleRequest, `the module sent a request of its own ("${message.method}"); a stateless server sends none`));
      case 'error':
        if (message.id !== null && message.id !== this.pending?.request.id) return this.failUnknownId(message.id);
        return this.fail(crash(CrashReason.jsonrpcError, `the module answered with a JSON-RPC error: ${describeError(message.error)}`));
      case 'result': {
        const pending = this.pending;
        if (!pending || message.id !== pending.request.id) return this.failUnknownId(message.id);
        const resultType = (message.result as { resultType?: unknown } | null)?.resultType;
        if (resultType !== undefined && resultType !== 'complete') {
          return this.fail(crash(CrashReason.resultType, `the module answered with resultType ${JSON.stringify(resultType)}; only "complete" is accepted`));
        }
        this.pending = null;
        if (pending.last) {
          this.lastAnswered = true;
          if (!this.sandboxEndsStdin) this.handle?.closeStdin();
        }
        pending.resolve(message.result);
      }
    }
  };

  private failUnknownId(id: string | number): void {
    const again = this.asked.has(id) ? ' again' : '';
    this.fail(crash(CrashReason.unknownId, `the module answered${again} an id it was not asked: ${JSON.stringify(id)}`));
  }

  /**
   * The first crash wins. `stop`: the run is stopped now (the grace is over); otherwise stdin ends and
   * `finish` gives the module its exit grace period to write its last stderr and leave.
   */
  private fail(reason: Crash, stop = false): void {
    if (this.crashed) return;
    this.crashed = reason;
    if (stop) this.handle?.kill(reason.reason);
    else this.handle?.closeStdin();
    const pending = this.pending;
    this.pending = null;
    pending?.reject(new ConversationCrashed(reason));
  }

  private onRunEnded(run: RunResult): void {
    if (this.ended) return;
    this.ended = true;
    // A last line without its newline counts only when the module exited: after a trap, a limit or a kill
    // it is a fragment (a stdout limit cuts mid-line), and the run's own outcome is the reason.
    const rest = this.lines.rest();
    if (rest.length > 0 && run.outcome.kind === 'exit') this.onLine(rest);
    if (this.pending && !this.crashed) {
      this.fail(crashFromOutcome(run.outcome, true) ?? crash(CrashReason.exitedEarly, 'the module ended before answering'));
    }
  }
}

function describeError(error: { code?: unknown; message?: unknown }): string {
  const code = typeof error.code === 'number' ? ` ${error.code}` : '';
  const message = typeof error.message === 'string' ? `: ${excerpt(error.message)}` : '';
  return `error${code}${message}`;
}
