/**
 * SandboxProcess: guests run in a supervised child process, never in the caller's. The child
 * (process-main.ts) holds the worker threads; each worker has a lane (lane.ts) straight to this process, so
 * a call is one frame to the worker and its output and end straight back, with no thread in between. This
 * side keeps the runs, their deadlines, the bridged imports (served here, where egress lives), the module
 * bytes, and the schedule: which worker is free. When a guest takes its process down — V8 ends a whole
 * process on a fatal error in any isolate, whatever a worker's `resourceLimits` say — the runs in it end as
 * `sandbox_crashed`, a new process starts, and the next run is served as if nothing happened.
 *
 * Runs wait here, not in the child: a process that dies takes only the runs its workers held, and a run
 * still waiting here was never started, so it simply goes to the next process.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { nextModuleId, type CompileOptions, type PreparedModule } from './compile.js';
import { prepareWith, type PreparedModuleCache } from './prepared-cache.js';
import { SANDBOX_ERROR, SandboxError, assertSameMemoryCap } from './errors.js';
import { Lane, LaneListener, type LaneEvents } from './lane.js';
import type { FromLane, FromSandbox, ProcessBridgeReply, ToSandbox } from './process-protocol.js';
import { ProcessRun, type ProcessRunOwner } from './process-run.js';
import { ByteTail } from './stderr-tail.js';
import { START_MARKS, startMarker } from './start-marks.js';
import type { ModuleHandle, RunHandle, RunOutcome, RunRequest, Sandbox, SandboxStats } from './types.js';

const CHILD_URL = new URL('./process-main.js', import.meta.url);

/** Sandbox processes that die before saying they are ready, in a row, before no new one is started. */
const MAX_START_FAILURES = 3;
/** How long a lane whose connection closed waits for its process to say why, before it is taken as gone. */
const LANE_END_WAIT_MS = 1_000;
/** How much of the child's own stderr (V8's fatal messages) is kept to explain its end. */
const CHILD_STDERR_TAIL = 8 * 1024;

export interface SandboxProcessOptions {
  /** Worker threads in the sandbox process; default: the number of CPUs, at least two. */
  size?: number;
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

/** What the child said of a lane's end, kept until the lane's connection has closed too. */
interface LaneEnd {
  reason: string;
  writtenBytes: number;
}

/** One sandbox process, from fork to exit. */
class Child {
  readonly process: ChildProcess;
  /** Said by this process's workers when they open their lanes. */
  readonly token = randomBytes(32);
  readonly lanes = new Map<number, Lane>();
  /** Lanes whose worker is free, most recently freed last. */
  readonly idle: Lane[] = [];
  /** The run each busy lane holds. */
  readonly running = new Map<Lane, ProcessRun>();
  /** Lanes asked to stop: never given another run. */
  readonly retiring = new Set<Lane>();
  /** Ends reported for lanes whose connection has not closed yet, or that never opened. */
  readonly laneEnds = new Map<number, LaneEnd>();
  /** Modules sent to this process to compile, with what it answered; in the order they were last run. */
  readonly compiles = new Map<number, Promise<boolean>>();
  readonly compileWaiters = new Map<number, { resolve(importsHttp: boolean): void; reject(error: Error): void }>();
  readonly compiled = new Set<number>();
  readonly stderr = new ByteTail(CHILD_STDERR_TAIL);
  ready = false;
  exited = false;

  constructor(size: number, lanePath: string, execArgv: string[]) {
    this.process = fork(CHILD_URL, [], {
      execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      // The child needs nothing of this process's environment (which may hold keys); it gets its settings only.
      env: {
        SUBAKO_SANDBOX_WORKERS: String(size),
        SUBAKO_SANDBOX_LANES: lanePath,
        SUBAKO_SANDBOX_TOKEN: this.token.toString('hex'),
      },
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

  ownsToken(token: string): boolean {
    const given = Buffer.from(token, 'hex');
    return given.length === this.token.length && timingSafeEqual(given, this.token);
  }

  /** Why the process ended, in one line: its exit and V8's last fatal message, if it printed one. */
  describeEnd(code: number | null, signal: NodeJS.Signals | null): string {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const text = Buffer.from(this.stderr.bytes()).toString('utf8');
    const fatal = /FATAL ERROR: ([^\n]+)/.exec(text)?.[1] ?? /# Fatal error[^\n]*\n# ([^\n]+)/.exec(text)?.[1];
    return `the sandbox process ${how}${fatal ? ` (V8: ${fatal.trim()})` : ''}`;
  }
}

export class SandboxProcess implements Sandbox, ProcessRunOwner, LaneEvents {
  private readonly size: number;
  private readonly heldModules: number;
  private readonly execArgv: string[];
  private readonly onCrash?: (reason: string) => void;
  private readonly lanes: LaneListener;
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
  private readonly mark = startMarker();

  constructor(options: SandboxProcessOptions = {}) {
    const size = options.size ?? Math.max(2, availableParallelism());
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`a sandbox needs at least one worker, not ${size}`);
    this.size = size;
    this.heldModules = Math.max(1, options.heldModules ?? 64);
    this.execArgv = options.execArgv ?? [];
    this.onCrash = options.onCrash;
    this.preparedCache = options.preparedCache;
    this.lanes = new LaneListener(this);
    this.child = this.spawn();
  }

  /** Compiled modules the sandbox process holds now (or is compiling). */
  get modulesHeld(): number {
    return this.child.compiles.size;
  }

  /** Where this sandbox's workers open their lanes (for diagnostics, and for tests that attack it). */
  get lanePath(): string {
    return this.lanes.path;
  }

  /** The sandbox process's id (a new one after a crash). */
  get pid(): number | undefined {
    return this.child.process.pid;
  }

  stats(): SandboxStats {
    const busy = this.child.exited ? 0 : this.child.running.size;
    return { workers: this.size, busy, queued: this.queue.length };
  }

  async compile(bytes: Uint8Array, options: CompileOptions): Promise<ModuleHandle> {
    this.assertOpen();
    const prepared = await prepareWith(this.preparedCache, bytes, options);
    // Closed (or broken) while the module was instrumented: no compile is asked of a process that is gone.
    this.assertOpen();
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
    for (const run of [...this.queue.splice(0), ...this.child.running.values()]) run.endNow(outcome);
    this.child.running.clear();
    for (const lane of this.child.lanes.values()) lane.destroy();
    this.lanes.close();
    const child = this.child;
    if (child.exited) return;
    const exited = new Promise<void>((resolve) => child.process.once('exit', () => resolve()));
    // Waited for, so it must keep this process alive until it has gone.
    child.process.ref();
    child.process.kill('SIGKILL');
    await exited;
  }

  // ProcessRunOwner

  dequeue(run: ProcessRun): void {
    const at = this.queue.indexOf(run);
    if (at >= 0) this.queue.splice(at, 1);
  }

  stopLane(lane: Lane): void {
    const child = this.child;
    if (!child.lanes.has(lane.laneId) || child.lanes.get(lane.laneId) !== lane) return;
    child.retiring.add(lane);
    const at = child.idle.indexOf(lane);
    if (at >= 0) child.idle.splice(at, 1);
    child.send({ t: 'stop', laneId: lane.laneId });
  }

  stdin(lane: Lane, runId: number, bytes: Uint8Array): void {
    this.child.send({ t: 'stdin', laneId: lane.laneId, runId, bytes });
  }

  closeStdin(lane: Lane, runId: number): void {
    this.child.send({ t: 'close', laneId: lane.laneId, runId });
  }

  reply(lane: Lane, runId: number, reply: ProcessBridgeReply): void {
    this.child.send({ t: 'reply', laneId: lane.laneId, runId, reply });
  }

  /** Something waits on the child (a run, a compile): its channel keeps this process alive until it ends. */
  holdOpen(): void {
    if (this.holds++ === 0) this.child.process.channel?.ref();
  }

  releaseHold(): void {
    if (--this.holds === 0) this.child.process.channel?.unref();
  }

  // LaneEvents

  laneOpened(lane: Lane, token: string): boolean {
    const child = this.child;
    if (this.closed || child.exited || !child.ownsToken(token)) return false;
    if (!Number.isSafeInteger(lane.laneId) || lane.laneId < 1 || child.lanes.has(lane.laneId) || child.laneEnds.has(lane.laneId)) return false;
    // Its workers and their replacements: more can only come from a process that is not ours any more.
    if (child.lanes.size >= 2 * this.size) return false;
    this.mark(START_MARKS.firstLane);
    child.lanes.set(lane.laneId, lane);
    child.idle.push(lane);
    this.pump();
    return true;
  }

  laneFrame(lane: Lane, frame: Exclude<FromLane, { t: 'hello' }>): void {
    const child = this.child;
    const run = child.running.get(lane);
    // A frame about a run the lane no longer holds (or never did) is dropped.
    if (!run || frame.runId !== run.id) return;
    switch (frame.t) {
      case 'out':
        if ((frame.stream === 1 || frame.stream === 2) && frame.bytes instanceof Uint8Array) run.onOutput(frame.stream, frame.bytes);
        return;
      case 'bridge':
        if (typeof frame.channel === 'string' && frame.payload instanceof Uint8Array) void run.serveBridge(frame.channel, frame.payload, frame.budgetLeft);
        return;
      case 'done': {
        child.running.delete(lane);
        run.completed(checkedOutcome(frame.outcome), frame.writtenBytes);
        if (!child.retiring.has(lane)) child.idle.push(lane);
        this.pump();
        this.dropIdleModules(child);
        this.purgeReleased(child);
      }
    }
  }

  laneClosed(lane: Lane): void {
    const child = this.child;
    if (child.lanes.get(lane.laneId) !== lane) return;
    const end = child.laneEnds.get(lane.laneId);
    // Every byte the worker wrote has been read; its end waits for the child's word on why it ended.
    if (end) return this.laneGone(child, lane, end);
    // A connection that closed with its worker still alive (dropped as broken here): stop that worker. A lane
    // its process does not know (opened by a process that is not ours any more) gets no word: gone after a while.
    child.send({ t: 'stop', laneId: lane.laneId });
    setTimeout(() => {
      if (child.lanes.get(lane.laneId) === lane) this.laneGone(child, lane, { reason: 'the worker\'s lane closed', writtenBytes: 0 });
    }, LANE_END_WAIT_MS).unref();
  }

  // The rest.

  private assertOpen(): void {
    if (this.closed) throw new SandboxError(SANDBOX_ERROR.closed, 'the sandbox is closed');
    if (this.broken) throw this.broken;
  }

  private spawn(): Child {
    const child = new Child(this.size, this.lanes.path, this.execArgv);
    this.mark(START_MARKS.forked);
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
    for (const run of child.running.values()) inUse.add(run.module.id);
    for (const run of this.queue) inUse.add(run.module.id);
    return inUse;
  }

  /** The child drops a compiled module (compiled again from its bytes if it is run later). */
  private forgetIn(child: Child, id: number): void {
    child.compiles.delete(id);
    child.compiled.delete(id);
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

  /**
   * Free workers take the runs waiting longest whose module the child has compiled; every waiting run's module
   * is compiled there (once: compileIn asks only the first time) and moves to the end of the order it forgets by.
   */
  private pump(): void {
    const child = this.child;
    if (child.exited) return;
    for (let i = 0; i < this.queue.length; ) {
      const run = this.queue[i];
      this.compileIn(child, run.module.id).catch(() => undefined);
      if (child.idle.length === 0 || !child.compiled.has(run.module.id)) {
        i += 1;
        continue;
      }
      this.queue.splice(i, 1);
      const lane = child.idle.pop()!;
      child.running.set(lane, run);
      run.send(lane);
    }
  }

  /** The lane's worker has ended and its connection is closed: its run learns why; the lane is gone. */
  private laneGone(child: Child, lane: Lane, end: LaneEnd): void {
    child.lanes.delete(lane.laneId);
    child.laneEnds.delete(lane.laneId);
    child.retiring.delete(lane);
    const at = child.idle.indexOf(lane);
    if (at >= 0) child.idle.splice(at, 1);
    const run = child.running.get(lane);
    child.running.delete(lane);
    run?.laneEnded(end.reason, end.writtenBytes);
    this.pump();
  }

  private onMessage(child: Child, message: FromSandbox): void {
    switch (message.t) {
      case 'ready':
        this.mark(START_MARKS.ready);
        child.ready = true;
        this.startFailures = 0;
        return;
      case 'compiled':
        child.compiled.add(message.moduleId);
        child.compileWaiters.get(message.moduleId)?.resolve(message.importsHttp);
        child.compileWaiters.delete(message.moduleId);
        this.pump();
        this.dropIdleModules(child);
        this.purgeReleased(child);
        return;
      case 'compile_failed': {
        child.compiles.delete(message.moduleId);
        const failed = new SandboxError(SANDBOX_ERROR.compile, message.message);
        child.compileWaiters.get(message.moduleId)?.reject(failed);
        child.compileWaiters.delete(message.moduleId);
        // Runs that waited for it cannot start.
        for (const run of this.queue.filter((queued) => queued.module.id === message.moduleId)) {
          this.dequeue(run);
          run.reject(failed);
        }
        return;
      }
      case 'lane_ended': {
        const end = { reason: message.reason, writtenBytes: message.writtenBytes };
        const lane = child.lanes.get(message.laneId);
        if (lane?.closedSocket) return this.laneGone(child, lane, end);
        // Its connection closes soon (or it never opened one): the end waits for it.
        child.laneEnds.set(message.laneId, end);
        if (!lane) {
          // A worker that died before its hello was read: kept so a late hello is refused, then let go.
          setTimeout(() => {
            if (!child.lanes.has(message.laneId)) child.laneEnds.delete(message.laneId);
          }, LANE_END_WAIT_MS).unref();
          return;
        }
        child.retiring.add(lane);
        const at = child.idle.indexOf(lane);
        if (at >= 0) child.idle.splice(at, 1);
        return;
      }
      case 'workers_failed':
        this.broken = new SandboxError(SANDBOX_ERROR.workerFailed, `sandbox workers fail to start: ${message.reason}`);
        for (const queued of this.queue.splice(0)) queued.reject(this.broken);
    }
  }

  private onExit(child: Child, code: number | null, signal: NodeJS.Signals | null): void {
    child.exited = true;
    for (const lane of child.lanes.values()) lane.destroy();
    if (this.closed) return;
    const reason = child.describeEnd(code, signal);
    this.crashes += 1;
    if (!child.ready) this.startFailures += 1;
    const crashed = new SandboxError(SANDBOX_ERROR.crashed, reason);
    for (const waiter of child.compileWaiters.values()) waiter.reject(crashed);
    child.compileWaiters.clear();
    const runs = [...child.running.values()];
    child.running.clear();
    child.idle.length = 0;
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

/** A run's outcome as a lane reported it, held to the shapes a RunOutcome may have. */
function checkedOutcome(value: unknown): RunOutcome {
  const outcome = value as RunOutcome | null;
  switch (typeof outcome === 'object' && outcome !== null ? outcome.kind : undefined) {
    case 'exit':
      if (Number.isInteger((outcome as { code: unknown }).code)) return outcome!;
      break;
    case 'trap':
    case 'out_of_memory':
      if (typeof (outcome as { message: unknown }).message === 'string') return outcome!;
      break;
    case 'killed':
      if (typeof (outcome as { reason: unknown }).reason === 'string') return outcome!;
      break;
    case 'timeout':
    case 'stdout_limit':
      return outcome!;
  }
  return { kind: 'trap', message: 'sandbox error: the worker reported an end this host does not know' };
}
