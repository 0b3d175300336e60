/**
 * SandboxPool: a fixed number of warm worker threads that run compiled modules, one guest per worker,
 * each run a fresh instance. Runs queue while every worker is busy; then the next one in line is also
 * posted ahead to a busy worker, which starts it the moment its current run ends (no round trip to this
 * thread in between), unless an idle worker turns up first and the pool takes it back. A worker whose
 * guest had to be stopped (deadline, kill, stdout flood caught) or that died is replaced at once: the
 * pool keeps its size.
 */
import { availableParallelism } from 'node:os';
import { compilePrepared, type CompileOptions } from './compile.js';
import { prepareWith, type PreparedModuleCache } from './prepared-cache.js';
import { SANDBOX_ERROR, SandboxError, assertSameMemoryCap } from './errors.js';
import type { WorkerMessage } from './protocol.js';
import { SandboxRun, type RunOwner } from './run.js';
import type { CompiledModule, ModuleHandle, RunHandle, RunRequest, Sandbox, SandboxStats } from './types.js';
import { WorkerSlot, type SlotEvents } from './worker-slot.js';

export interface SandboxPoolOptions {
  /** Worker threads kept warm; default: the number of CPUs. */
  size?: number;
  /** Compiled modules each worker keeps (least recently used dropped first); default 32. */
  moduleCacheSize?: number;
  /** Where instrumented modules are kept across restarts (prepared-cache.ts); none when absent. */
  preparedCache?: PreparedModuleCache;
}

/** Workers that die before loading, in a row, before the pool stops replacing them. */
const MAX_START_FAILURES = 3;

export class SandboxPool implements Sandbox, RunOwner, SlotEvents {
  private readonly slots: WorkerSlot[] = [];
  private readonly idle: WorkerSlot[] = [];
  private readonly running = new Map<WorkerSlot, SandboxRun>();
  /** At most one run posted ahead per busy worker. */
  private readonly ahead = new Map<WorkerSlot, SandboxRun>();
  private readonly queue: SandboxRun[] = [];
  /** Runs ended from this side whose worker is being stopped: its last output is drained into them. */
  private readonly stopping = new Map<WorkerSlot, SandboxRun>();
  private readonly moduleCacheSize: number;
  private readonly preparedCache: PreparedModuleCache | undefined;
  private nextRunId = 0;
  private closed = false;
  private broken: SandboxError | null = null;
  private startFailures = 0;

  constructor(options: SandboxPoolOptions = {}) {
    const size = options.size ?? availableParallelism();
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`a sandbox pool needs at least one worker, not ${size}`);
    this.moduleCacheSize = Math.max(1, options.moduleCacheSize ?? 32);
    this.preparedCache = options.preparedCache;
    for (let i = 0; i < size; i++) this.addSlot();
  }

  /** Live workers. */
  get size(): number {
    return this.slots.length;
  }

  /** The worker threads' ids, for diagnostics (a replaced worker has a new id). */
  workerThreadIds(): number[] {
    return this.slots.map((slot) => slot.threadId);
  }

  async compile(bytes: Uint8Array, options: CompileOptions): Promise<CompiledModule> {
    return compilePrepared(await prepareWith(this.preparedCache, bytes, options));
  }

  /** Nothing to let go here: a compiled module lives in its handle, and in the workers' own bounded caches. */
  release(_module: ModuleHandle): void {}

  stats(): SandboxStats {
    return { workers: this.slots.length, busy: this.running.size, queued: this.ahead.size + this.queue.length };
  }

  run(handle: ModuleHandle, request: RunRequest): RunHandle {
    if (this.closed) throw new SandboxError(SANDBOX_ERROR.closed, 'the sandbox pool is closed');
    if (this.broken) throw this.broken;
    if (!('module' in handle)) {
      throw new SandboxError(SANDBOX_ERROR.compile, 'this module was not compiled in this process; compile it with this pool first');
    }
    const module = handle as CompiledModule;
    assertSameMemoryCap(module, request);
    const run = new SandboxRun(++this.nextRunId, module, request, this);
    this.queue.push(run);
    this.pump();
    return run;
  }

  /** Ends every run (outcome `killed`) and terminates the workers. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const outcome = { kind: 'killed', reason: 'the sandbox pool was closed' } as const;
    const runs = [...this.queue.splice(0), ...this.ahead.values(), ...this.running.values(), ...this.stopping.values()];
    this.ahead.clear();
    this.running.clear();
    this.stopping.clear();
    for (const run of runs) run.endForClose(outcome);
    this.idle.length = 0;
    await Promise.all(this.slots.splice(0).map((slot) => slot.retire()));
  }

  // RunOwner

  dequeue(run: SandboxRun): void {
    const at = this.queue.indexOf(run);
    if (at >= 0) this.queue.splice(at, 1);
  }

  abandon(slot: WorkerSlot, run: SandboxRun): void {
    if (this.running.get(slot) !== run) return;
    const next = this.ahead.get(slot);
    // The worker already finished this run and started the one posted ahead: it is not stopped; the
    // run's own end is on its way, settles it, and promotes the next one.
    if (next && !slot.takeBack(next.offer)) return;
    this.running.delete(slot);
    if (next) this.requeue(slot, next);
    // What the worker posted before it stopped still reaches the run (its stderr's tail); then it settles.
    this.stopping.set(slot, run);
    void slot.retire({ drain: true }).then(() => {
      this.stopping.delete(slot);
      run.stopped();
    });
    this.replace(slot);
  }

  withdraw(slot: WorkerSlot, run: SandboxRun): boolean {
    if (this.ahead.get(slot) !== run || !slot.takeBack(run.offer)) return false;
    this.ahead.delete(slot);
    return true;
  }

  // SlotEvents

  message(slot: WorkerSlot, message: WorkerMessage): void {
    if (message.type === 'ready') {
      // A worker takes runs only once it has loaded: one that fails to load never costs a run.
      this.startFailures = 0;
      this.idle.push(slot);
      this.pump();
      return;
    }
    const stopping = this.stopping.get(slot);
    if (stopping) {
      if (stopping.id === message.runId) stopping.onMessage(message);
      return;
    }
    const run = this.running.get(slot);
    if (!run || run.id !== message.runId) return;
    if (message.type !== 'done') return run.onMessage(message);
    run.completed(message.outcome, message.writtenBytes);
    this.runEnded(slot);
  }

  died(slot: WorkerSlot, reason: string): void {
    const run = this.running.get(slot);
    const next = this.ahead.get(slot);
    this.running.delete(slot);
    if (!slot.ready) this.startFailures += 1;
    if (this.startFailures >= MAX_START_FAILURES && !this.broken) {
      this.broken = new SandboxError(SANDBOX_ERROR.workerFailed, `sandbox workers fail to start: ${reason}`);
    }
    // A run posted ahead that the worker never took goes back to the queue; one it took died with it.
    if (next && slot.takeBack(next.offer)) this.requeue(slot, next);
    else if (next) {
      this.ahead.delete(slot);
      next.workerDied(reason);
    }
    this.replace(slot);
    run?.workerDied(reason);
    if (this.broken) for (const queued of this.queue.splice(0)) queued.reject(this.broken);
  }

  /** The slot's run ended normally: it starts the run posted ahead, or is idle again. */
  private runEnded(slot: WorkerSlot): void {
    const next = this.ahead.get(slot);
    if (next) {
      this.ahead.delete(slot);
      this.running.set(slot, next);
      next.promote();
    } else {
      this.running.delete(slot);
      if (!this.closed && this.slots.includes(slot)) this.idle.push(slot);
    }
    this.pump();
  }

  /** A run taken back from `slot` (never started there) goes to the front of the queue. */
  private requeue(slot: WorkerSlot, run: SandboxRun): void {
    this.ahead.delete(slot);
    run.takenBack();
    this.queue.unshift(run);
  }

  private replace(slot: WorkerSlot): void {
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    const idleAt = this.idle.indexOf(slot);
    if (idleAt >= 0) this.idle.splice(idleAt, 1);
    if (this.closed || this.broken) return;
    this.addSlot();
    this.pump();
  }

  private addSlot(): void {
    this.slots.push(new WorkerSlot(this, this.moduleCacheSize));
  }

  private pump(): void {
    // An idle worker takes a run posted ahead to a busy one, if that one has not started it yet.
    if (this.idle.length > 0 && this.ahead.size > 0) {
      for (const [slot, run] of [...this.ahead]) {
        if (this.idle.length === 0) break;
        if (!slot.takeBack(run.offer)) continue;
        this.requeue(slot, run);
      }
    }
    while (this.queue.length > 0) {
      const slot = this.idle.pop();
      if (slot) {
        const run = this.queue.shift()!;
        this.running.set(slot, run);
        run.begin(slot);
        continue;
      }
      const busy = this.busyWithoutNext();
      if (!busy) return;
      const run = this.queue.shift()!;
      this.ahead.set(busy, run);
      run.postAhead(busy, this.running.get(busy)!);
    }
  }

  /** A worker running a run that is still going, with nothing posted ahead to it. */
  private busyWithoutNext(): WorkerSlot | undefined {
    for (const [slot, run] of this.running) {
      if (!this.ahead.has(slot) && run.isRunning()) return slot;
    }
    return undefined;
  }
}
