/**
 * One run as the server sees it when guests run in the sandbox process: waiting here, sent to a lane, or
 * done. It keeps the deadline (the server stops the worker itself when it passes: a stop asked on the
 * control channel), the stderr's tail and the stdout count (read from the lane), and serves bridge calls
 * here, where egress lives.
 */
import type { Lane } from './lane.js';
import type { ProcessBridgeReply } from './process-protocol.js';
import { answerBridgeCall, deliverOutput } from './run-callbacks.js';
import { workerDeathOutcome } from './outcome.js';
import { ByteTail } from './stderr-tail.js';
import { RunEndSignal } from './run-end-signal.js';
import type { ModuleHandle, RunContext, RunHandle, RunOutcome, RunRequest, RunResult } from './types.js';

/** setTimeout fires at once for delays past this; longer deadlines are no deadline at all. */
const MAX_TIMER_MS = 2_147_483_647;
/** How long a stopped worker may take to report its end before the run settles without it. */
const STOP_GRACE_MS = 1_000;

/** What a run needs from its sandbox. */
export interface ProcessRunOwner {
  /** A queued run ended before it was sent. */
  dequeue(run: ProcessRun): void;
  /** Stop the lane's worker: the run on it ended from this side. */
  stopLane(lane: Lane): void;
  stdin(lane: Lane, runId: number, bytes: Uint8Array): void;
  closeStdin(lane: Lane, runId: number): void;
  reply(lane: Lane, runId: number, reply: ProcessBridgeReply): void;
  holdOpen(): void;
  releaseHold(): void;
}

export class ProcessRun implements RunHandle {
  readonly result: Promise<RunResult>;
  private settle!: (result: RunResult) => void;
  private fail!: (error: unknown) => void;
  /** `stopping`: ended from this side while a worker held it; settled when the worker's end is known. */
  private state: 'queued' | 'sent' | 'stopping' | 'done' = 'queued';
  private stoppingWith: RunOutcome | null = null;
  lane: Lane | null = null;
  private readonly stdin: Uint8Array[] = [];
  private stdinClosed = false;
  private stdoutBytes = 0;
  private readonly stderrTail: ByteTail;
  private readonly createdAt = Date.now();
  private sentAt = 0;
  private readonly deadlineAt: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly ended = new RunEndSignal();
  /** A bridge call is being served: the guest is blocked in it, so a second one can only come from a lying process. */
  private bridging = false;

  constructor(
    readonly id: number,
    readonly module: ModuleHandle,
    private readonly request: RunRequest,
    private readonly owner: ProcessRunOwner,
  ) {
    this.result = new Promise<RunResult>((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
    this.result.catch(() => undefined);
    this.stderrTail = new ByteTail(request.limits.stderrTailBytes);
    if (request.stdin && request.stdin.length > 0) this.stdin.push(Uint8Array.prototype.slice.call(request.stdin));
    const { timeoutMs } = request.limits;
    // The deadline ticks from the moment the run is asked for: waiting for a worker is the caller's time too.
    this.deadlineAt = timeoutMs <= MAX_TIMER_MS ? this.createdAt + timeoutMs : Infinity;
    this.arm(this.deadlineAt);
    owner.holdOpen();
  }

  writeStdin(bytes: Uint8Array): void {
    if (this.stdinClosed || this.state === 'done' || this.state === 'stopping' || bytes.length === 0) return;
    // A sent message is serialized at once, so the caller may reuse its buffer; a queued one is copied.
    if (this.state === 'sent') this.owner.stdin(this.lane!, this.id, bytes);
    else this.stdin.push(Uint8Array.prototype.slice.call(bytes));
  }

  closeStdin(): void {
    if (this.stdinClosed || this.state === 'done' || this.state === 'stopping') return;
    this.stdinClosed = true;
    if (this.state === 'sent') this.owner.closeStdin(this.lane!, this.id);
  }

  kill(reason: string): void {
    this.end({ kind: 'killed', reason });
  }

  /** Hands the run to `lane`'s worker, with the stdin written so far. */
  send(lane: Lane): void {
    this.state = 'sent';
    this.lane = lane;
    this.sentAt = Date.now();
    const { request } = this;
    lane.send({
      t: 'run',
      runId: this.id,
      moduleId: this.module.id,
      args: request.args,
      env: request.env,
      preopens: request.preopens,
      stdoutBytes: request.limits.stdoutBytes,
      memoryBytes: this.module.memoryBytes,
      linkHttp: this.module.importsHttp,
      writeBudgetBytes: request.limits.writeBudgetBytes,
      stdin: this.stdin.length === 0 ? null : this.stdin.length === 1 ? this.stdin[0] : Buffer.concat(this.stdin),
      stdinClosed: this.stdinClosed,
      endStdinAfterAnswer: request.endStdinAfterAnswer,
    });
    this.stdin.length = 0;
  }

  /** Output the worker wrote for this run. */
  onOutput(stream: 1 | 2, bytes: Uint8Array): void {
    if (this.state !== 'sent' && this.state !== 'stopping') return;
    if (stream === 2) {
      // Kept even when stopping: what the guest wrote last often explains what stopped it.
      this.stderrTail.push(bytes);
      if (this.state === 'sent') this.callBack(this.request.onStderr, bytes);
      return;
    }
    this.stdoutBytes += bytes.length;
    // The worker stops the guest at the cap itself: output past it means the sandbox process is not ours any more.
    if (this.stdoutBytes > this.request.limits.stdoutBytes) return this.end({ kind: 'stdout_limit' });
    // A run ended from this side has no reader left for its stdout.
    if (this.state === 'sent') this.callBack(this.request.onStdout, bytes);
  }

  async serveBridge(channel: string, payload: Uint8Array, budgetLeftReported: unknown): Promise<void> {
    const lane = this.lane;
    if (this.state !== 'sent' || !lane) return;
    if (this.bridging) return this.end({ kind: 'killed', reason: 'the sandbox process sent a second bridge call while one was served' });
    this.bridging = true;
    const budgetLeft = this.reportedBytes(budgetLeftReported);
    let left = budgetLeft;
    let consumed = 0;
    const run = this;
    const context: RunContext = {
      writeBudget: {
        tryConsume: (bytes) => {
          if (run.state !== 'sent' || bytes > left) return false;
          left -= bytes;
          consumed += bytes;
          return true;
        },
        used: () => run.request.limits.writeBudgetBytes - left,
      },
      get signal(): AbortSignal {
        return run.ended.signal;
      },
      remainingMs: () => Math.max(0, run.deadlineAt - Date.now()),
    };
    const answer = await answerBridgeCall(this.request, channel, payload, context);
    const reply: ProcessBridgeReply = 'missing' in answer ? { missing: true, consumed: 0 } : { ...answer, consumed };
    this.bridging = false;
    if (this.state !== 'sent' || this.lane !== lane) return;
    this.owner.reply(lane, this.id, reply);
  }

  /** The worker reported the guest's end. A run ended from this side meanwhile keeps the outcome it was given. */
  completed(outcome: RunOutcome, writtenBytes: unknown): void {
    this.finish(this.stoppingWith ?? outcome, this.reportedBytes(writtenBytes));
  }

  /**
   * The lane's worker has gone (and everything it wrote was read): a stopped run settles with the outcome
   * it was stopped with; otherwise the worker itself died under the run.
   */
  laneEnded(reason: string, writtenBytes: unknown): void {
    if (this.state === 'done') return;
    const written = this.reportedBytes(writtenBytes);
    if (this.stoppingWith) return this.finish(this.stoppingWith, written);
    this.finish(workerDeathOutcome(reason), written);
  }

  reject(error: unknown): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.cleanup();
    this.fail(error);
  }

  /**
   * Ends the run from this side (deadline, kill, the sandbox crashing). A run a worker holds is stopped
   * there and settles once the worker's end is known, with the stderr it wrote up to then; if that takes
   * longer than STOP_GRACE_MS, it settles without it.
   */
  end(outcome: RunOutcome): void {
    if (this.state === 'done') return;
    if (this.state === 'stopping') {
      // The sandbox process died before the worker's end was known: nothing more is coming.
      if (outcome.kind === 'sandbox_crashed') this.finish(this.stoppingWith!, 0);
      return;
    }
    if (this.state === 'queued' || outcome.kind === 'sandbox_crashed') {
      const wasQueued = this.state === 'queued';
      this.finish(outcome, 0);
      if (wasQueued) this.owner.dequeue(this);
      return;
    }
    this.state = 'stopping';
    this.stoppingWith = outcome;
    this.ended.end();
    this.arm(Date.now() + STOP_GRACE_MS);
    this.owner.stopLane(this.lane!);
  }

  /** Settles the run now, without asking the worker (the sandbox is closing and ends its process itself). */
  endNow(outcome: RunOutcome): void {
    this.finish(this.stoppingWith ?? outcome, 0);
  }

  isDone(): boolean {
    return this.state === 'done';
  }

  /**
   * Bytes the sandbox process says the run wrote (or may still write): volume quotas are settled with it, so
   * whatever it says is held to what the run was allowed.
   */
  private reportedBytes(value: unknown): number {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return 0;
    return Math.min(value, this.request.limits.writeBudgetBytes);
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    if (at === Infinity) return;
    this.timer = setTimeout(() => {
      if (this.state === 'stopping') this.finish(this.stoppingWith!, 0);
      else this.end({ kind: 'timeout' });
    }, Math.max(0, at - Date.now()));
  }

  private callBack(callback: ((chunk: Uint8Array) => void) | undefined, chunk: Uint8Array): void {
    const failed = deliverOutput(callback, chunk);
    if (failed !== null) this.end({ kind: 'killed', reason: failed });
  }

  private finish(outcome: RunOutcome, writtenBytes: number): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.cleanup();
    this.settle({
      outcome,
      stderrTail: this.stderrTail.bytes(),
      stdoutBytes: this.stdoutBytes,
      writtenBytes,
      durationMs: this.sentAt === 0 ? 0 : Date.now() - this.sentAt,
    });
  }

  private cleanup(): void {
    clearTimeout(this.timer);
    this.stdin.length = 0;
    this.ended.end();
    this.owner.releaseHold();
  }
}
