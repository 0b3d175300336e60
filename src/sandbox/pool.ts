/**
 * SandboxPool: a fixed number of warm worker threads that run compiled modules, one guest per worker,
 * each run a fresh instance. Runs queue while every worker is busy. A worker whose guest had to be
 * stopped (deadline, kill, stdout flood caught) or that died is replaced at once: the pool keeps its size.
 */
import { availableParallelism } from 'node:os';
import { compileModule, type CompileOptions } from './compile.js';
import { SANDBOX_ERROR, SandboxError } from './errors.js';
import type { WorkerMessage } from './protocol.js';
import { SandboxRun, type RunOwner } from './run.js';
import type { CompiledModule, RunHandle, RunRequest } from './types.js';
import { WorkerSlot, type SlotEvents } from './worker-slot.js';

export interface SandboxPoolOptions {
  /** Worker threads kept warm; default: the number of CPUs. */
  size?: number;
  /** Compiled modules each worker keeps (least recently used dropped first); default 32. */
  moduleCacheSize?: number;
}

/** Workers that die before loading, in a row, before the pool stops replacing them. */
const MAX_START_FAILURES = 3;

export class SandboxPool implements RunOwner, SlotEvents {
  private readonly slots: WorkerSlot[] = [];
  private readonly idle: WorkerSlot[] = [];
  private readonly running = new Map<WorkerSlot, SandboxRun>();
  private readonly queue: SandboxRun[] = [];
  private readonly moduleCacheSize: number;
  private nextRunId = 0;
  private closed = false;
  private broken: SandboxError | null = null;
  private startFailures = 0;

  constructor(options: SandboxPoolOptions = {}) {
    const size = options.size ?? availableParallelism();
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`a sandbox pool needs at least one worker, not ${size}`);
    this.moduleCacheSize = Math.max(1, options.moduleCacheSize ?? 32);
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

  compile(bytes: Uint8Array, options: CompileOptions): Promise<CompiledModule> {
    return compileModule(bytes, options);
  }

  run(module: CompiledModule, request: RunRequest): RunHandle {
    if (this.closed) throw new SandboxError(SANDBOX_ERROR.closed, 'the sandbox pool is closed');
    if (this.broken) throw this.broken;
    if (request.limits.memoryBytes !== module.memoryBytes) {
      throw new SandboxError(
        SANDBOX_ERROR.memoryMismatch,
        `this module was compiled for a memory cap of ${module.memoryBytes} bytes, not ${request.limits.memoryBytes}; ` +
          'compile it again with the cap the run asks for',
      );
    }
    const run = new SandboxRun(++this.nextRunId, module, request, this);
    this.queue.push(run);
    this.pump();
    return run;
  }

  /** Ends every run (outcome `killed`) and terminates the workers. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const run of this.queue.splice(0)) run.endEarly({ kind: 'killed', reason: 'the sandbox pool was closed' });
    for (const run of [...this.running.values()]) run.endEarly({ kind: 'killed', reason: 'the sandbox pool was closed' });
    await Promise.all(this.slots.splice(0).map((slot) => slot.retire()));
    this.idle.length = 0;
  }

  // RunOwner

  dequeue(run: SandboxRun): void {
    const at = this.queue.indexOf(run);
    if (at >= 0) this.queue.splice(at, 1);
  }

  release(slot: WorkerSlot): void {
    this.running.delete(slot);
    if (this.closed || !this.slots.includes(slot)) return;
    this.idle.push(slot);
    this.pump();
  }

  abandon(slot: WorkerSlot): void {
    this.running.delete(slot);
    void slot.retire();
    this.replace(slot);
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
    const run = this.running.get(slot);
    if (run && run.id === message.runId) run.onMessage(message);
  }

  died(slot: WorkerSlot, reason: string): void {
    const run = this.running.get(slot);
    this.running.delete(slot);
    if (!slot.ready) this.startFailures += 1;
    if (this.startFailures >= MAX_START_FAILURES && !this.broken) {
      this.broken = new SandboxError(SANDBOX_ERROR.workerFailed, `sandbox workers fail to start: ${reason}`);
    }
    this.replace(slot);
    run?.workerDied(reason);
    if (this.broken) for (const queued of this.queue.splice(0)) queued.reject(this.broken);
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
    while (this.queue.length > 0 && this.idle.length > 0) {
      const run = this.queue.shift()!;
      const slot = this.idle.pop()!;
      this.running.set(slot, run);
      run.begin(slot);
    }
  }
}
