/**
 * The contract of sandbox/: run one compiled module in a warm worker, within limits, with stdin fed
 * by the caller and stdout/stderr streamed back to it. It knows nothing of MCP or HTTP: host imports that
 * must wait for async work in the caller (the server's egress, say) go through named bridge channels.
 */
import type { PreopenSpec } from '../wasi/index.js';
import type { ModuleLimits } from '../wasm/index.js';

export interface RunLimits {
  /** Wall-clock deadline from the start of the run; past it the worker is terminated and replaced. */
  timeoutMs: number;
  /** The module's memory maximum is rewritten to this before compiling (see CompiledModule). */
  memoryBytes: number;
  /** Past this many stdout bytes the run stops with outcome `stdout_limit`. */
  stdoutBytes: number;
  /** How much of stderr's end is kept in the outcome. */
  stderrTailBytes: number;
  /** Bytes the run may write to files (EDQUOT past it), shared with bridge handlers via `writeBudget`. */
  writeBudgetBytes: number;
}

/**
 * A bridge handler runs on the caller's main thread while the guest blocks in the import that called it:
 * for a `SandboxProcess`, in the process that made it (the server), the request relayed from the child.
 * It receives the request bytes and resolves with the reply bytes; a rejection is reported to the guest
 * import as a failed call (the import decides what the guest sees).
 */
export type BridgeHandler = (payload: Uint8Array, run: RunContext) => Promise<Uint8Array>;

/** What a bridge handler may use of the run it serves. */
export interface RunContext {
  /** The same write budget the guest's file writes draw on. */
  writeBudget: { tryConsume(bytes: number): boolean; used(): number };
  /** Aborted when the run ends for any reason (deadline, kill, exit). */
  signal: AbortSignal;
  /** Milliseconds left before the run's deadline. */
  remainingMs(): number;
}

export interface RunRequest {
  args: string[];
  env: string[];
  preopens: PreopenSpec[];
  limits: RunLimits;
  /** Bytes written to stdin before the guest starts (more may follow through the handle). */
  stdin?: Uint8Array;
  /**
   * Line-delimited JSON: stdin reaches end of file as soon as the guest has written a complete stdout line
   * holding a JSON object whose `id` is this — the end `closeStdin` would give once the caller had read that
   * line, given in the worker without the round trip. Stdin written after that is not read.
   */
  endStdinAfterAnswer?: string | number;
  /** Called on the caller's main thread as stdout chunks arrive (a chunk may hold part of a line, or several). */
  onStdout?: (chunk: Uint8Array) => void;
  /**
   * Streams stderr as it is written. Only the in-process pool (`SandboxPool`, for `subako wasi`) streams it:
   * a sandbox process keeps stderr's tail for the result, so a guest's log flood never crosses the process
   * boundary.
   */
  onStderr?: (chunk: Uint8Array) => void;
  /**
   * Host imports bridged to the caller. `subako_http` maps to the channel `http`: when absent, every
   * request answers the JSON a handler for "no network" would give.
   */
  bridge?: Partial<Record<'http', BridgeHandler>>;
}

export type RunOutcome =
  | { kind: 'exit'; code: number }
  | { kind: 'trap'; message: string }
  | { kind: 'out_of_memory'; message: string }
  | { kind: 'timeout' }
  | { kind: 'stdout_limit' }
  | { kind: 'killed'; reason: string }
  /** The sandbox process ended under the run (a fatal error in a guest's isolate, or the process was killed). */
  | { kind: 'sandbox_crashed'; message: string };

export interface RunResult {
  outcome: RunOutcome;
  /** The last `stderrTailBytes` of stderr. */
  stderrTail: Uint8Array;
  stdoutBytes: number;
  writtenBytes: number;
  durationMs: number;
}

export interface RunHandle {
  /** Feeds the guest's stdin; ignored after closeStdin or the end of the run. */
  writeStdin(bytes: Uint8Array): void;
  /** End of file on stdin once what was written is read. */
  closeStdin(): void;
  /** Ends the run now (the worker is replaced); the outcome is `killed` with this reason. */
  kill(reason: string): void;
  readonly result: Promise<RunResult>;
}

/** How a module is compiled for the sandbox: its caps. */
export interface CompileOptions {
  /** The memory cap, in bytes (rounded down to whole 64 KiB pages). */
  memoryBytes: number;
  /** The caps on what the module declares (tables among them); wasm's MODULE_LIMITS when absent. */
  limits?: ModuleLimits;
  /** The sha-256 of the bytes, hex, when the caller has it already (so they are not hashed twice). */
  digest?: string;
}

/** A module a sandbox can run, by id: instrumented for its caps and compiled once where it runs. */
export interface ModuleHandle {
  readonly id: number;
  /** The memory cap this module was compiled with; runs must ask for the same `limits.memoryBytes`. */
  readonly memoryBytes: number;
  /** Whether the module imports `subako_http` (then it is linked, bridged to the `http` channel). */
  readonly importsHttp: boolean;
}

/**
 * A module compiled in this process (made by `SandboxPool.compile`). Workers keep it by `id`, so it is
 * posted to each worker at most once.
 */
export interface CompiledModule extends ModuleHandle {
  readonly module: WebAssembly.Module;
  /**
   * A worker may make this module's next instance while idle, ahead of the run that uses it: false when it
   * imports `subako_http` (linked per run) or has a start section (guest code would run outside a run).
   */
  readonly premade: boolean;
}

/**
 * What function/ runs guests on. `SandboxProcess` (guests in a supervised child process: the default) and
 * `SandboxPool` (guests in worker threads of this process: the engine inside that child, and `subako wasi`).
 */
export interface Sandbox {
  compile(bytes: Uint8Array, options: CompileOptions): Promise<ModuleHandle>;
  run(module: ModuleHandle, request: RunRequest): RunHandle;
  /**
   * The module will not be run again: what the sandbox keeps of it (its bytes, its compiled code) may go.
   * A run already started or waiting finishes first.
   */
  release(module: ModuleHandle): void;
  close(): Promise<void>;
  /** A read-only look at the workers and the runs waiting for one, for metrics. */
  stats(): SandboxStats;
}

export interface SandboxStats {
  /** Worker threads the sandbox runs guests on. */
  workers: number;
  /** Workers running a guest now. */
  busy: number;
  /** Runs waiting for a worker (posted ahead to a busy one or still queued). */
  queued: number;
}
