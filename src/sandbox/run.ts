/**
 * One run as the main thread sees it, from queued to finished: feeds stdin, counts stdout, keeps
 * stderr's tail, serves bridge calls, enforces the deadline, and settles the result exactly once.
 *
 * States: `queued` (waiting for a worker), `ahead` (posted to a busy worker, which starts it as soon as
 * its current run ends, unless the pool takes it back), `running`, `done`. The deadline ticks from the
 * moment the run is asked for: time spent waiting for a worker is the caller's time too, so a flood of
 * runs cannot hold a queued one for longer than its own limit.
 */
import { budgetIsFor, tryConsumeWriteBudget, writeBudgetUsed } from './control-block.js';
import type { WorkerMessage } from './protocol.js';
import { answerBridgeCall, deliverOutput } from './run-callbacks.js';
import { workerDeathOutcome } from './outcome.js';
import { ByteTail } from './stderr-tail.js';
import { RunEndSignal } from './run-end-signal.js';
import type {
  CompiledModule,
  RunContext,
  RunHandle,
  RunOutcome,
  RunRequest,
  RunResult,
} from './types.js';
import type { WorkerSlot } from './worker-slot.js';

/** What a run needs from its pool. */
export interface RunOwner {
  /** A queued run ended early. */
  dequeue(run: SandboxRun): void;
  /** A running run ended early, its guest perhaps still running: stop the worker unless it moved on. */
  abandon(slot: WorkerSlot, run: SandboxRun): void;
  /**
   * A run posted ahead ends early: true when the pool took it back before its worker started it;
   * false when the worker has already started it (the run then ends as soon as it is promoted).
   */
  withdraw(slot: WorkerSlot, run: SandboxRun): boolean;
}

/** setTimeout fires at once for delays past this; longer deadlines are no deadline at all. */
const MAX_TIMER_MS = 2_147_483_647;

function ownCopy(bytes: Uint8Array): Uint8Array {
  // Posting a view clones its whole ArrayBuffer; a copy posts exactly these bytes and may be transferred.
  // (Uint8Array's own slice: Buffer#slice would return a view.)
  return Uint8Array.prototype.slice.call(bytes);
}

/** The chunks as one array (the stdin written before a run starts travels in its run message). */
function joined(chunks: Uint8Array[]): Uint8Array | null {
  if (chunks.length === 0) return null;
  if (chunks.length === 1) return chunks[0];
  return Buffer.concat(chunks);
}

export class SandboxRun implements RunHandle {
  readonly result: Promise<RunResult>;
  readonly context: RunContext;
  private settle!: (result: RunResult) => void;
  private fail!: (error: unknown) => void;
  private state: 'queued' | 'ahead' | 'running' | 'done' = 'queued';
  private slot: WorkerSlot | null = null;
  /** Stdin written while no worker runs this (copies, in order). */
  private readonly waitingStdin: Uint8Array[] = [];
  /** What went in the run message when posted ahead: put back first if the run is taken back. */
  private postedStdin: Uint8Array | null = null;
  private offerToken = 0;
  /** An end asked for while posted ahead to a worker that had already started it. */
  private pendingEnd: RunOutcome | null = null;
  /** The outcome of a running run ended from this side, until its worker has stopped (`stopped`). */
  private stopping: RunOutcome | null = null;
  private stdinClosed = false;
  private stdoutBytes = 0;
  private readonly stderrTail: ByteTail;
  private startedAt = 0;
  private deadlineAt = Infinity;
  private timer: NodeJS.Timeout | undefined;
  private finalWritten = 0;
  private readonly ended = new RunEndSignal();

  constructor(
    readonly id: number,
    readonly module: CompiledModule,
    readonly request: RunRequest,
    private readonly owner: RunOwner,
  ) {
    this.result = new Promise<RunResult>((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
    // A caller that never looks at `result` must not turn a refused run into an unhandled rejection.
    this.result.catch(() => undefined); // observed by whoever awaits `result`; not an unhandled rejection meanwhile
    this.stderrTail = new ByteTail(request.limits.stderrTailBytes);
    const { timeoutMs } = request.limits;
    if (timeoutMs <= MAX_TIMER_MS) {
      this.deadlineAt = Date.now() + timeoutMs;
      this.timer = setTimeout(() => this.endEarly({ kind: 'timeout' }), Math.max(0, timeoutMs));
    }
    if (request.stdin && request.stdin.length > 0) this.waitingStdin.push(ownCopy(request.stdin));
    const run = this;
    this.context = {
      writeBudget: {
        tryConsume: (bytes) => this.counting() && tryConsumeWriteBudget(this.slot!.control, bytes),
        used: () => (this.counting() ? writeBudgetUsed(this.slot!.control) : this.finalWritten),
      },
      get signal(): AbortSignal {
        return run.ended.signal;
      },
      remainingMs: () => Math.max(0, this.deadlineAt - Date.now()),
    };
  }

  /** The offer token this run was posted ahead under (0 when it was not). */
  get offer(): number {
    return this.offerToken;
  }

  /** Running, and not ended from this side. */
  isRunning(): boolean {
    return this.state === 'running' && this.stopping === null;
  }

  writeStdin(bytes: Uint8Array): void {
    if (this.stdinClosed || this.state === 'done' || this.stopping || bytes.length === 0) return;
    if (this.state === 'running') this.slot!.sendStdin({ runId: this.id, bytes: ownCopy(bytes) });
    else this.waitingStdin.push(ownCopy(bytes));
  }

  closeStdin(): void {
    if (this.stdinClosed || this.state === 'done' || this.stopping) return;
    this.stdinClosed = true;
    // Before the run is running, `begin` or `promote` passes the close on.
    if (this.state === 'running') this.slot!.closeStdin(this.id);
  }

  kill(reason: string): void {
    this.endEarly({ kind: 'killed', reason });
  }

  /** Called by the pool when an idle worker takes this run. */
  begin(slot: WorkerSlot): void {
    this.state = 'running';
    this.slot = slot;
    this.post(0);
    this.started();
  }

  /**
   * Called by the pool to post this run to a busy worker, which starts it when its current run ends.
   * `promote` marks it running once the current run's end is seen.
   */
  postAhead(slot: WorkerSlot, current: SandboxRun): void {
    this.state = 'ahead';
    this.slot = slot;
    this.offerToken = slot.offer(current.offerToken);
    this.postedStdin = this.post(this.offerToken);
  }

  /** The pool took this run back from the worker it was posted ahead to: queued again, stdin kept. */
  takenBack(): void {
    this.state = 'queued';
    this.slot = null;
    this.offerToken = 0;
    if (this.postedStdin) this.waitingStdin.unshift(this.postedStdin);
    this.postedStdin = null;
  }

  /** The run before this one on its worker ended: the worker has started this one (or is about to). */
  promote(): void {
    const slot = this.slot!;
    this.state = 'running';
    this.postedStdin = null;
    for (const bytes of this.waitingStdin.splice(0)) slot.sendStdin({ runId: this.id, bytes });
    this.started();
    if (this.pendingEnd) this.endEarly(this.pendingEnd);
  }

  /** A message from the worker serving this run ('done' goes to `completed`). */
  onMessage(message: WorkerMessage): void {
    if (this.state !== 'running') return;
    switch (message.type) {
      case 'stdout':
        this.stdoutBytes += message.bytes.length;
        // A run ended from this side has no reader left for its stdout; its stderr is still kept.
        if (!this.stopping) this.callBack(this.request.onStdout, message.bytes);
        break;
      case 'stderr':
        this.stderrTail.push(message.bytes);
        if (!this.stopping) this.callBack(this.request.onStderr, message.bytes);
        break;
      case 'bridge':
        if (!this.stopping) void this.serveBridge(message.channel, message.payload);
        break;
    }
  }

  /** The worker says the guest ended; a run ended from this side meanwhile keeps the outcome it was given. */
  completed(outcome: RunOutcome, writtenBytes: number): void {
    if (this.state !== 'running') return;
    this.finalWritten = writtenBytes;
    this.finish(this.stopping ?? outcome, false);
  }

  /** The worker itself died under this run (not the guest's doing as far as we can tell). */
  workerDied(reason: string): void {
    if (this.stopping) return this.finish(this.stopping, false);
    this.finish(workerDeathOutcome(reason), true);
  }

  /** The pool cannot serve this run at all. */
  reject(error: unknown): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.cleanup();
    this.fail(error);
  }

  /** Ends a run from the outside (deadline, kill, pool closing), whatever its state. */
  endEarly(outcome: RunOutcome): void {
    switch (this.state) {
      case 'done':
        return;
      case 'queued':
        this.finish(outcome, true);
        this.owner.dequeue(this);
        return;
      case 'ahead':
        if (this.owner.withdraw(this.slot!, this)) this.finish(outcome, true);
        else this.pendingEnd ??= outcome;
        return;
      case 'running': {
        // The run ends with this outcome, but is settled only once its worker has stopped (or reported the
        // end it had already reached): what the guest wrote before it was stopped is still on its way, and
        // the stderr it holds is often the explanation of the very thing that stopped it.
        if (this.stopping) return;
        this.stopping = outcome;
        if (this.counting()) this.finalWritten = writeBudgetUsed(this.slot!.control);
        clearTimeout(this.timer);
        this.ended.end();
        this.owner.abandon(this.slot!, this);
      }
    }
  }

  /** The worker stopped under a run that was ending (`endEarly`): its output drained, the run settles. */
  stopped(): void {
    if (this.stopping) this.finish(this.stopping, false);
  }

  /** Ends the run without telling the pool (the pool is closing and stops every worker itself). */
  endForClose(outcome: RunOutcome): void {
    this.finish(outcome, true);
  }

  /** Posts the run message; returns the stdin it carried. */
  private post(offer: number): Uint8Array | null {
    const slot = this.slot!;
    const { limits } = this.request;
    const stdin = joined(this.waitingStdin);
    this.waitingStdin.length = 0;
    slot.start(
      {
        type: 'run',
        runId: this.id,
        moduleId: this.module.id,
        args: this.request.args,
        env: this.request.env,
        preopens: this.request.preopens,
        stdoutBytes: limits.stdoutBytes,
        memoryBytes: this.module.memoryBytes,
        linkHttp: this.module.importsHttp,
        premade: this.module.premade,
        stdin,
        stdinClosed: false,
        writeBudgetBytes: limits.writeBudgetBytes,
        endStdinAfterAnswer: this.request.endStdinAfterAnswer,
        offer,
      },
      this.module.module,
    );
    return stdin;
  }

  /** The run is running from now: its stdin may close. */
  private started(): void {
    const slot = this.slot!;
    if (this.stdinClosed) slot.closeStdin(this.id);
    this.startedAt = Date.now();
  }

  /** The write budget counts for this run: it is running and its worker has started it. */
  private counting(): boolean {
    return this.state === 'running' && budgetIsFor(this.slot!.control, this.id);
  }

  private callBack(callback: ((chunk: Uint8Array) => void) | undefined, chunk: Uint8Array): void {
    const failed = deliverOutput(callback, chunk);
    if (failed !== null) this.endEarly({ kind: 'killed', reason: failed });
  }

  private async serveBridge(channel: string, payload: Uint8Array): Promise<void> {
    const slot = this.slot!;
    const answer = await answerBridgeCall(this.request, channel, payload, this.context);
    if (this.state !== 'running' || this.stopping || this.slot !== slot) return;
    slot.sendBridgeReply('ok' in answer ? { runId: this.id, ok: ownCopy(answer.ok) } : { runId: this.id, ...answer });
  }

  /** `readCounter`: take the bytes written from the shared counter (the worker did not report them). */
  private finish(outcome: RunOutcome, readCounter: boolean): void {
    if (this.state === 'done') return;
    if (readCounter && this.counting()) this.finalWritten = writeBudgetUsed(this.slot!.control);
    const durationMs = this.startedAt === 0 ? 0 : Date.now() - this.startedAt;
    this.state = 'done';
    this.cleanup();
    this.settle({
      outcome,
      stderrTail: this.stderrTail.bytes(),
      stdoutBytes: this.stdoutBytes,
      writtenBytes: this.finalWritten,
      durationMs,
    });
  }


  private cleanup(): void {
    clearTimeout(this.timer);
    this.waitingStdin.length = 0;
    this.postedStdin = null;
    this.ended.end();
  }
}
