/**
 * SandboxProcess: guests run in a supervised child process, never in the caller's. The child
 * (process-main.ts) holds a `SandboxPool`; this side keeps the runs, their deadlines, the bridged imports
 * (served here, where egress lives) and the module bytes, so that when a guest takes its process down — V8
 * ends a whole process on a fatal error in any isolate, whatever a worker's `resourceLimits` say — the runs
 * in it end as `sandbox_crashed`, a new process starts, and the next run is served as if nothing happened.
 *
 * Runs wait here, not in the child, past two per worker: a process that dies takes only the runs it held,
 * and a run still waiting here was never started, so it simply goes to the next process.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { nextModuleId, type CompileOptions, type PreparedModule } from './compile.js';
import { prepareWith, type PreparedModuleCache } from './prepared-cache.js';
import { SANDBOX_ERROR, SandboxError, assertSameMemoryCap } from './errors.js';
import type { FromSandbox, ProcessBridgeReply, ToSandbox } from './process-protocol.js';
import { safeBridgeMessage } from './run.js';
import { ByteTail } from './stderr-tail.js';
import { RunEndSignal } from './run-end-signal.js';
import type {
  BridgeHandler, ModuleHandle, RunContext, RunHandle, RunOutcome, RunRequest, RunResult, Sandbox, SandboxStats,
} from './types.js';

const CHILD_URL = new URL('./process-main.js', import.meta.url);

/** setTimeout fires at once for delays past this; longer deadlines are no deadline at all. */
const MAX_TIMER_MS = 2_147_483_647;
/** The child enforces each deadline itself; this side steps in only if the child has not, this much later. */
const DEADLINE_GRACE_MS = 1_000;
/** Sandbox processes that die before saying they are ready, in a row, before no new one is started. */
const MAX_START_FAILURES = 3;
/** Runs handed to the child per worker (one running, one posted ahead); the rest wait here. */
const RUNS_PER_WORKER = 2;
/** How much of the child's own stderr (V8's fatal messages) is kept to explain its end. */
const CHILD_STDERR_TAIL = 8 * 1024;

export interface SandboxProcessOptions {
  /** Worker threads in the sandbox process; default: the number of CPUs, at least two. */
  size?: number;
  /** Compiled modules each worker keeps; default 32. */
  moduleCacheSize?: number;
  /**
   * Compiled modules the sandbox process holds, default 64: past it, the one run least recently (and not
   * running now) is dropped there and compiled again from its bytes when it next runs. Without a bound every
   * package version ever uploaded, accepted or not, would keep its machine code in the sandbox process.
   */
  heldModules?: number;
  /** Node flags for the sandbox process (for example a heap limit); it inherits none of this process's. */
  execArgv?: string[];
  /** Told when a sandbox process ends unexpectedly, after its runs were ended. */
  onCrash?: (reason: string) => void;
  /** Where instrumented modules are kept across restarts (prepared-cache.ts); none when absent. */
  preparedCache?: PreparedModuleCache;
}

/** One sandbox process, from fork to exit. */
class Child {
  readonly process: ChildProcess;
  /** Runs sent to this process and not yet reported done. */
  readonly runs = new Map<number, ProcessRun>();
  /** Modules sent to this process to compile, with what it answered; in the order they were last run. */
  readonly compiles = new Map<number, Promise<boolean>>();
  readonly compileWaiters = new Map<number, { resolve(importsHttp: boolean): void; reject(error: Error): void }>();
  readonly stderr = new ByteTail(CHILD_STDERR_TAIL);
  ready = false;
  exited = false;

  constructor(size: number, moduleCacheSize: number, execArgv: string[]) {
    this.process = fork(CHILD_URL, [], {
      execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      // The child needs nothing of this process's environment (which may hold keys); it gets its settings only.
      env: { SUBAKO_SANDBOX_WORKERS: String(size), SUBAKO_SANDBOX_MODULE_CACHE: String(moduleCacheSize) },
    });
    this.process.stderr?.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    // Not what keeps this process alive: a run's deadline timer or a pending compile does (see `holdOpen`).
    this.process.unref();
    this.process.channel?.unref();
    (this.process.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
  }

  send(message: ToSandbox): void {
    if (this.exited || !this.process.connected) return;
    this.process.send(message);
  }

  /** Why the process ended, in one line: its exit and V8's last fatal message, if it printed one. */
  describeEnd(code: number | null, signal: NodeJS.Signals | null): string {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const text = Buffer.from(this.stderr.bytes()).toString('utf8');
    const fatal = /FATAL ERROR: ([^\n]+)/.exec(text)?.[1] ?? /# Fatal error[^\n]*\n# ([^\n]+)/.exec(text)?.[1];
    return `the sandbox process ${how}${fatal ? ` (V8: ${fatal.trim()})` : ''}`;
  }
}

export class SandboxProcess implements Sandbox {
  private readonly size: number;
  private readonly moduleCacheSize: number;
  private readonly heldModules: number;
  private readonly execArgv: string[];
  private readonly onCrash?: (reason: string) => void;
  private child: Child;
  /** Every module compiled through this sandbox and not released, kept to compile again in a new process. */
  private readonly modules = new Map<number, PreparedModule>();
  /** Released modules that a run still held or waited for when released: gone once none does. */
  private readonly released = new Set<number>();
  private readonly queue: ProcessRun[] = [];
  private nextRunId = 0;
  private closed = false;
  private broken: SandboxError | null = null;
  private startFailures = 0;
  private readonly preparedCache: PreparedModuleCache | undefined;
  /** Compiles and runs waiting on the child: while any is, the IPC channel keeps this process alive. */
  private holds = 0;
  /** Sandbox processes that ended unexpectedly, for diagnostics. */
  crashes = 0;

  constructor(options: SandboxProcessOptions = {}) {
    const size = options.size ?? Math.max(2, availableParallelism());
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`a sandbox needs at least one worker, not ${size}`);
    this.size = size;
    this.moduleCacheSize = Math.max(1, options.moduleCacheSize ?? 32);
    this.heldModules = Math.max(1, options.heldModules ?? 64);
    this.execArgv = options.execArgv ?? [];
    this.onCrash = options.onCrash;
    this.preparedCache = options.preparedCache;
    this.child = this.spawn();
  }

  /** Compiled modules the sandbox process holds now (or is compiling). */
  get modulesHeld(): number {
    return this.child.compiles.size;
  }

  /** The sandbox process's id (a new one after a crash). */
  get pid(): number | undefined {
    return this.child.process.pid;
  }

  /**
   * The child holds up to two runs per worker (one running, one posted ahead) and is not asked which: a
   * worker counts as busy while the child holds any run for it, and the runs past one per worker wait.
   */
  stats(): SandboxStats {
    const held = this.child.exited ? 0 : this.child.runs.size;
    const busy = Math.min(this.size, held);
    return { workers: this.size, busy, queued: held - busy + this.queue.length };
  }

  async compile(bytes: Uint8Array, options: CompileOptions): Promise<ModuleHandle> {
    this.assertOpen();
    const prepared = prepareWith(this.preparedCache, bytes, options);
    const id = nextModuleId();
    this.modules.set(id, prepared);
    try {
      const importsHttp = await this.compileIn(this.child, id);
      return Object.freeze({ id, memoryBytes: prepared.memoryBytes, importsHttp });
    } catch (error) {
      this.modules.delete(id);
      throw error;
    }
  }

  run(module: ModuleHandle, request: RunRequest): RunHandle {
    this.assertOpen();
    if (!this.modules.has(module.id)) {
      throw new SandboxError(SANDBOX_ERROR.compile, 'this module was not compiled by this sandbox; compile it with it first');
    }
    assertSameMemoryCap(module, request);
    const run = new ProcessRun(++this.nextRunId, module, request, this);
    this.queue.push(run);
    this.pump();
    return run;
  }

  release(module: ModuleHandle): void {
    if (!this.modules.has(module.id)) return;
    this.released.add(module.id);
    this.purgeReleased(this.child);
  }

  /** Ends every run (outcome `killed`) and stops the sandbox process. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const outcome: RunOutcome = { kind: 'killed', reason: 'the sandbox was closed' };
    for (const run of [...this.queue.splice(0), ...this.child.runs.values()]) run.endNow(outcome);
    const child = this.child;
    if (child.exited) return;
    const exited = new Promise<void>((resolve) => child.process.once('exit', () => resolve()));
    // Waited for, so it must keep this process alive until it has gone.
    child.process.ref();
    child.process.kill('SIGKILL');
    await exited;
  }

  // What a ProcessRun needs from its sandbox.

  /** The run ended on this side: a queued one leaves the queue, a sent one is stopped in the child. */
  ended(run: ProcessRun, child: Child | null, killReason: string | null): void {
    const at = this.queue.indexOf(run);
    if (at >= 0) this.queue.splice(at, 1);
    if (child && killReason !== null) child.send({ t: 'kill', runId: run.id, reason: killReason });
  }

  /** Something waits on the child (a run, a compile): its channel keeps this process alive until it ends. */
  holdOpen(): void {
    if (this.holds++ === 0) this.child.process.channel?.ref();
  }

  releaseHold(): void {
    if (--this.holds === 0) this.child.process.channel?.unref();
  }

  private assertOpen(): void {
    if (this.closed) throw new SandboxError(SANDBOX_ERROR.closed, 'the sandbox is closed');
    if (this.broken) throw this.broken;
  }

  private spawn(): Child {
    const child = new Child(this.size, this.moduleCacheSize, this.execArgv);
    child.process.on('message', (message: FromSandbox) => this.onMessage(child, message));
    child.process.on('exit', (code, signal) => this.onExit(child, code, signal));
    // A failed fork (no such file, out of processes) is reported as an exit too.
    child.process.on('error', () => undefined);
    if (this.holds > 0) child.process.channel?.ref();
    return child;
  }

  /** Asks `child` to compile module `id` once; resolves with whether it imports `subako_http`. */
  private compileIn(child: Child, id: number): Promise<boolean> {
    let compiling = child.compiles.get(id);
    if (compiling) {
      // Last run now: to the end of the order.
      child.compiles.delete(id);
      child.compiles.set(id, compiling);
      return compiling;
    }
    const prepared = this.modules.get(id)!;
    compiling = new Promise<boolean>((resolve, reject) => child.compileWaiters.set(id, { resolve, reject }));
    child.compiles.set(id, compiling);
    this.holdOpen();
    compiling.then(() => this.releaseHold(), () => this.releaseHold());
    child.send({ t: 'compile', moduleId: id, bytes: prepared.bytes, memoryBytes: prepared.memoryBytes });
    this.dropIdleModules(child);
    return compiling;
  }

  /** Modules that a run holds in the child or waits for here. */
  private modulesInUse(child: Child): Set<number> {
    const inUse = new Set<number>();
    for (const run of child.runs.values()) inUse.add(run.module.id);
    for (const run of this.queue) inUse.add(run.module.id);
    return inUse;
  }

  /** The child drops a compiled module (compiled again from its bytes if it is run later). */
  private forgetIn(child: Child, id: number): void {
    child.compiles.delete(id);
    child.send({ t: 'forget', moduleId: id });
  }

  /**
   * Past `heldModules`, the child drops the modules run least recently that no run holds and none waits on
   * (looked at as a module is compiled, and as a run ends, when one may have stopped being in use).
   */
  private dropIdleModules(child: Child): void {
    if (child.compiles.size <= this.heldModules) return;
    const inUse = this.modulesInUse(child);
    for (const id of child.compiles.keys()) {
      if (child.compiles.size <= this.heldModules) return;
      if (inUse.has(id) || child.compileWaiters.has(id)) continue;
      this.forgetIn(child, id);
    }
  }

  /** Released modules no run uses any more: their bytes go here, their code in the child. */
  private purgeReleased(child: Child): void {
    if (this.released.size === 0) return;
    const inUse = this.modulesInUse(child);
    for (const id of [...this.released]) {
      if (inUse.has(id) || child.compileWaiters.has(id)) continue;
      this.released.delete(id);
      this.modules.delete(id);
      if (child.compiles.has(id)) this.forgetIn(child, id);
    }
  }

  private pump(): void {
    const child = this.child;
    if (child.exited) return;
    while (this.queue.length > 0 && child.runs.size < this.size * RUNS_PER_WORKER) {
      const run = this.queue.shift()!;
      // The child answers a compile before it starts the run that needs it (one channel, in order).
      // A failed compile fails the run that needs it (the child answers it so); nothing is lost here.
      this.compileIn(child, run.module.id).catch(() => undefined);
      child.runs.set(run.id, run);
      run.send(child);
    }
  }

  private onMessage(child: Child, message: FromSandbox): void {
    switch (message.t) {
      case 'ready':
        child.ready = true;
        this.startFailures = 0;
        return;
      case 'compiled':
        child.compileWaiters.get(message.moduleId)?.resolve(message.importsHttp);
        child.compileWaiters.delete(message.moduleId);
        this.dropIdleModules(child);
        this.purgeReleased(child);
        return;
      case 'compile_failed':
        child.compiles.delete(message.moduleId);
        child.compileWaiters.get(message.moduleId)?.reject(
          new SandboxError(SANDBOX_ERROR.compile, message.message),
        );
        child.compileWaiters.delete(message.moduleId);
        return;
      case 'stdout':
        child.runs.get(message.runId)?.onStdout(message.bytes);
        return;
      case 'bridge':
        child.runs.get(message.runId)?.serveBridge(child, message.callId, message.channel, message.payload, message.budgetLeft);
        return;
      case 'done':
      case 'refused': {
        const run = child.runs.get(message.runId);
        if (!run) return;
        child.runs.delete(message.runId);
        if (message.t === 'done' && message.stdout) run.onStdout(message.stdout);
        if (message.t === 'done') run.completed(message.result);
        else run.reject(new SandboxError(message.code, message.message));
        this.pump();
        this.dropIdleModules(child);
        this.purgeReleased(child);
      }
    }
  }

  private onExit(child: Child, code: number | null, signal: NodeJS.Signals | null): void {
    child.exited = true;
    if (this.closed) return;
    const reason = child.describeEnd(code, signal);
    this.crashes += 1;
    if (!child.ready) this.startFailures += 1;
    const crashed = new SandboxError(SANDBOX_ERROR.crashed, reason);
    for (const waiter of child.compileWaiters.values()) waiter.reject(crashed);
    child.compileWaiters.clear();
    const runs = [...child.runs.values()];
    child.runs.clear();
    for (const run of runs) run.end({ kind: 'sandbox_crashed', message: reason });
    if (this.startFailures >= MAX_START_FAILURES) {
      this.broken = new SandboxError(SANDBOX_ERROR.workerFailed, `the sandbox process fails to start: ${reason}`);
      for (const queued of this.queue.splice(0)) queued.reject(this.broken);
    } else {
      this.child = this.spawn();
      this.pump();
    }
    this.onCrash?.(reason);
  }
}

/** One run as this process sees it: waiting here, sent to the child, or done. */
class ProcessRun implements RunHandle {
  readonly result: Promise<RunResult>;
  private settle!: (result: RunResult) => void;
  private fail!: (error: unknown) => void;
  /** `stopping`: ended from this side while the child held it; settled when the child's end (with stderr's tail) comes. */
  private state: 'queued' | 'sent' | 'stopping' | 'done' = 'queued';
  /** The outcome a stopping run ends with, whatever the child reports. */
  private stoppingWith: RunOutcome | null = null;
  private child: Child | null = null;
  private readonly stdin: Uint8Array[] = [];
  private stdinClosed = false;
  private stdoutBytes = 0;
  private readonly createdAt = Date.now();
  private readonly deadlineAt: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly ended = new RunEndSignal();

  constructor(
    readonly id: number,
    readonly module: ModuleHandle,
    private readonly request: RunRequest,
    private readonly sandbox: SandboxProcess,
  ) {
    this.result = new Promise<RunResult>((resolve, reject) => {
      this.settle = resolve;
      this.fail = reject;
    });
    this.result.catch(() => undefined);
    if (request.stdin && request.stdin.length > 0) this.stdin.push(Uint8Array.prototype.slice.call(request.stdin));
    const { timeoutMs } = request.limits;
    this.deadlineAt = timeoutMs <= MAX_TIMER_MS ? this.createdAt + timeoutMs : Infinity;
    this.arm(this.deadlineAt);
    sandbox.holdOpen();
  }

  writeStdin(bytes: Uint8Array): void {
    if (this.stdinClosed || this.state === 'done' || this.state === 'stopping' || bytes.length === 0) return;
    // A sent message is serialized at once, so the caller may reuse its buffer; a queued one is copied.
    if (this.state === 'sent') this.child!.send({ t: 'stdin', runId: this.id, bytes });
    else this.stdin.push(Uint8Array.prototype.slice.call(bytes));
  }

  closeStdin(): void {
    if (this.stdinClosed || this.state === 'done' || this.state === 'stopping') return;
    this.stdinClosed = true;
    if (this.state === 'sent') this.child!.send({ t: 'close', runId: this.id });
  }

  kill(reason: string): void {
    this.end({ kind: 'killed', reason });
  }

  /** Hands the run to `child` with what is left of its deadline. */
  send(child: Child): void {
    this.state = 'sent';
    this.child = child;
    const { request } = this;
    const remaining = this.deadlineAt === Infinity ? request.limits.timeoutMs : Math.max(0, this.deadlineAt - Date.now());
    child.send({
      t: 'run',
      runId: this.id,
      moduleId: this.module.id,
      args: request.args,
      env: request.env,
      preopens: request.preopens,
      limits: { ...request.limits, timeoutMs: remaining },
      stdin: this.stdin.length === 0 ? null : this.stdin.length === 1 ? this.stdin[0] : Buffer.concat(this.stdin),
      stdinClosed: this.stdinClosed,
      http: request.bridge?.http !== undefined,
      endStdinAfterAnswer: request.endStdinAfterAnswer,
    });
    this.stdin.length = 0;
    // The child ends the run at its deadline; this side waits a little longer before it steps in.
    this.arm(this.deadlineAt + DEADLINE_GRACE_MS);
  }

  onStdout(bytes: Uint8Array): void {
    if (this.state !== 'sent') return;
    this.stdoutBytes += bytes.length;
    const callback = this.request.onStdout;
    if (!callback) return;
    try {
      callback(bytes);
    } catch (error) {
      this.end({ kind: 'killed', reason: `an output callback failed: ${String(error)}` });
    }
  }

  async serveBridge(child: Child, callId: number, channel: string, payload: Uint8Array, budgetLeft: number): Promise<void> {
    const bridge = this.request.bridge as Record<string, BridgeHandler | undefined> | undefined;
    const handler = bridge && Object.hasOwn(bridge, channel) ? bridge[channel] : undefined;
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
    let reply: ProcessBridgeReply;
    if (!handler) {
      reply = { error: 'this run has no handler for the host import it called', consumed: 0 };
    } else {
      try {
        const bytes = await handler(payload, context);
        if (!(bytes instanceof Uint8Array)) throw new TypeError('a bridge handler must resolve with bytes');
        reply = { ok: bytes, consumed };
      } catch (error) {
        reply = { error: safeBridgeMessage(error), consumed };
      }
    }
    if (this.state !== 'sent' || this.child !== child) return;
    child.send({ t: 'reply', runId: this.id, callId, reply });
  }

  completed(result: RunResult): void {
    this.finish(this.stoppingWith ?? result.outcome, result);
  }

  reject(error: unknown): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.cleanup();
    this.fail(error);
  }

  /**
   * Ends the run from this side (deadline, kill, the sandbox crashing). A run the child holds is stopped
   * there and settles when the child reports its end, which carries the stderr's tail (what the guest wrote
   * is often the explanation of what stopped it); if the child does not report within DEADLINE_GRACE_MS, the
   * run settles without it.
   */
  end(outcome: RunOutcome): void {
    if (this.state === 'done') return;
    if (this.state === 'stopping') {
      // The child died before it reported: nothing more is coming.
      if (outcome.kind === 'sandbox_crashed') this.finish(this.stoppingWith!, null);
      return;
    }
    const child = this.state === 'sent' ? this.child : null;
    const killReason = outcome.kind === 'sandbox_crashed' ? null : outcome.kind === 'killed' ? outcome.reason : outcome.kind;
    if (child === null || killReason === null) {
      this.finish(outcome, null);
      this.sandbox.ended(this, child, killReason);
      return;
    }
    this.state = 'stopping';
    this.stoppingWith = outcome;
    this.ended.end();
    this.arm(Date.now() + DEADLINE_GRACE_MS);
    this.sandbox.ended(this, child, killReason);
  }

  /** Settles the run now, without asking the child (the sandbox is closing and ends the child itself). */
  endNow(outcome: RunOutcome): void {
    this.finish(this.stoppingWith ?? outcome, null);
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    if (at === Infinity) return;
    this.timer = setTimeout(() => {
      if (this.state === 'stopping') this.finish(this.stoppingWith!, null);
      else this.end({ kind: 'timeout' });
    }, Math.max(0, at - Date.now()));
  }

  private finish(outcome: RunOutcome, fromChild: RunResult | null): void {
    if (this.state === 'done') return;
    this.state = 'done';
    this.cleanup();
    this.settle({
      outcome,
      stderrTail: fromChild?.stderrTail ?? new Uint8Array(0),
      stdoutBytes: fromChild?.stdoutBytes ?? this.stdoutBytes,
      writtenBytes: fromChild?.writtenBytes ?? 0,
      durationMs: fromChild?.durationMs ?? Date.now() - this.createdAt,
    });
  }


  private cleanup(): void {
    clearTimeout(this.timer);
    this.stdin.length = 0;
    this.ended.end();
    this.sandbox.releaseHold();
  }
}
