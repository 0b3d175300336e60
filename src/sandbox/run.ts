/**
 * One run as the main thread sees it, from queued to finished: feeds stdin, counts stdout, keeps
 * stderr's tail, serves bridge calls, enforces the deadline, and settles the result exactly once.
 */
import { SubakoError } from '../errors.js';
import { resetWriteBudget, tryConsumeWriteBudget, writeBudgetUsed } from './control-block.js';
import type { BridgeReply, WorkerMessage } from './protocol.js';
import { ByteTail } from './stderr-tail.js';
import type {
  BridgeHandler,
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
  dequeue(run: SandboxRun): void;
  /** The run ended normally: the worker is free again. */
  release(slot: WorkerSlot): void;
  /** The run ended while its guest was still running: terminate and replace the worker. */
  abandon(slot: WorkerSlot): void;
}

/** setTimeout fires at once for delays past this; longer deadlines are no deadline at all. */
const MAX_TIMER_MS = 2_147_483_647;

/** What a guest sees when a bridge handler fails: our own errors are written to be shown, others are not. */
function safeBridgeMessage(error: unknown): string {
  if (error instanceof SubakoError) return error.message;
  return 'the host could not complete the request';
}

function ownCopy(bytes: Uint8Array): Uint8Array {
  // Posting a view clones its whole ArrayBuffer; a copy posts exactly these bytes and may be transferred.
  return bytes.slice();
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
  private state: 'queued' | 'running' | 'done' = 'queued';
  private slot: WorkerSlot | null = null;
  /** Stdin written before the run started (copies, in order). */
  private readonly waitingStdin: Uint8Array[] = [];
  private stdinClosed = false;
  private stdoutBytes = 0;
  private readonly stderrTail: ByteTail;
  private startedAt = 0;
  private deadlineAt = Infinity;
  private timer: NodeJS.Timeout | undefined;
  private finalWritten = 0;
  /** Made only when a bridge handler asks for the signal: most runs never need one. */
  private abort: AbortController | null = null;

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
    this.result.catch(() => undefined);
    this.stderrTail = new ByteTail(request.limits.stderrTailBytes);
    if (request.stdin && request.stdin.length > 0) this.waitingStdin.push(ownCopy(request.stdin));
    const run = this;
    this.context = {
      writeBudget: {
        tryConsume: (bytes) => this.state === 'running' && !!this.slot && tryConsumeWriteBudget(this.slot.control, bytes),
        used: () => (this.state === 'running' && this.slot ? writeBudgetUsed(this.slot.control) : this.finalWritten),
      },
      get signal(): AbortSignal {
        return run.abortSignal();
      },
      remainingMs: () =>
        this.state === 'queued' ? request.limits.timeoutMs : Math.max(0, this.deadlineAt - Date.now()),
    };
  }

  writeStdin(bytes: Uint8Array): void {
    if (this.stdinClosed || this.state === 'done' || bytes.length === 0) return;
    if (this.state === 'running' && this.slot) this.slot.sendStdin({ runId: this.id, bytes: ownCopy(bytes) });
    else this.waitingStdin.push(ownCopy(bytes));
  }

  closeStdin(): void {
    if (this.stdinClosed || this.state === 'done') return;
    this.stdinClosed = true;
    // Before the run starts, `begin` passes the close on with the bytes written so far.
    if (this.state === 'running' && this.slot) this.slot.closeStdin(this.id);
  }

  kill(reason: string): void {
    this.endEarly({ kind: 'killed', reason });
  }

  /** Called by the pool when a worker takes this run. */
  begin(slot: WorkerSlot): void {
    this.state = 'running';
    this.slot = slot;
    this.startedAt = Date.now();
    const { limits } = this.request;
    resetWriteBudget(slot.control, limits.writeBudgetBytes);
    // Set before the run message is posted, so the worker's first look at stdin already sees the end.
    if (this.stdinClosed) slot.closeStdin(this.id);
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
        stdin: joined(this.waitingStdin),
      },
      this.module.module,
    );
    this.waitingStdin.length = 0;
    if (limits.timeoutMs <= MAX_TIMER_MS) {
      this.deadlineAt = this.startedAt + limits.timeoutMs;
      this.timer = setTimeout(() => this.endEarly({ kind: 'timeout' }), Math.max(0, limits.timeoutMs));
    }
  }

  /** A message from the worker serving this run. */
  onMessage(message: WorkerMessage): void {
    if (this.state !== 'running') return;
    switch (message.type) {
      case 'stdout':
        this.stdoutBytes += message.bytes.length;
        this.callBack(this.request.onStdout, message.bytes);
        break;
      case 'stderr':
        this.stderrTail.push(message.bytes);
        this.callBack(this.request.onStderr, message.bytes);
        break;
      case 'bridge':
        void this.serveBridge(message.channel, message.payload);
        break;
      case 'done': {
        const slot = this.slot!;
        this.finish(message.outcome);
        this.owner.release(slot);
        break;
      }
    }
  }

  /** The worker itself died under this run (not the guest's doing as far as we can tell). */
  workerDied(reason: string): void {
    const outcome: RunOutcome = /out of memory/i.test(reason)
      ? { kind: 'out_of_memory', message: reason }
      : { kind: 'trap', message: reason };
    this.finish(outcome);
  }

  /** The pool cannot serve this run at all. */
  reject(error: unknown): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.cleanup();
    this.fail(error);
  }

  /** Ends a queued or running run from the outside (deadline, kill, pool closing). */
  endEarly(outcome: RunOutcome): void {
    if (this.state === 'done') return;
    const wasQueued = this.state === 'queued';
    const slot = this.slot;
    this.finish(outcome);
    if (wasQueued) this.owner.dequeue(this);
    else if (slot) this.owner.abandon(slot);
  }

  private callBack(callback: ((chunk: Uint8Array) => void) | undefined, chunk: Uint8Array): void {
    if (!callback) return;
    try {
      callback(chunk);
    } catch (error) {
      // A caller's callback must not take the host down; the run cannot go on without its output.
      this.endEarly({ kind: 'killed', reason: `an output callback failed: ${String(error)}` });
    }
  }

  private async serveBridge(channel: string, payload: Uint8Array): Promise<void> {
    const slot = this.slot!;
    const bridge = this.request.bridge as Record<string, BridgeHandler | undefined> | undefined;
    const handler = bridge && Object.hasOwn(bridge, channel) ? bridge[channel] : undefined;
    let reply: BridgeReply;
    if (!handler) {
      reply = { runId: this.id, missing: true };
    } else {
      try {
        const bytes = await handler(payload, this.context);
        if (!(bytes instanceof Uint8Array)) throw new TypeError('a bridge handler must resolve with bytes');
        reply = { runId: this.id, ok: ownCopy(bytes) };
      } catch (error) {
        reply = { runId: this.id, error: safeBridgeMessage(error) };
      }
    }
    if (this.state !== 'running' || this.slot !== slot) return;
    slot.sendBridgeReply(reply);
  }

  private finish(outcome: RunOutcome): void {
    if (this.state === 'done') return;
    if (this.slot) this.finalWritten = writeBudgetUsed(this.slot.control);
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

  private abortSignal(): AbortSignal {
    if (!this.abort) {
      this.abort = new AbortController();
      // Asked for after the end: it is aborted already, as it would have been.
      if (this.state === 'done') this.abort.abort();
    }
    return this.abort.signal;
  }

  private cleanup(): void {
    clearTimeout(this.timer);
    this.waitingStdin.length = 0;
    this.abort?.abort();
  }
}
