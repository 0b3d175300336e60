/**
 * The contract between the WASI host (this folder) and whoever runs a module (sandbox/).
 * The host runs inside a worker thread and is fully synchronous: every blocking wait
 * (stdin, sleeping in poll_oneoff) is an Atomics.wait done by the functions given here.
 */

/** A host directory mapped to a guest path. Preopens get descriptors 3, 4, … in the order given. */
export interface PreopenSpec {
  /** Absolute guest path, e.g. `/volume/tmp`. */
  guestPath: string;
  /** Absolute host directory behind it. */
  hostPath: string;
  /** Writes, creations, removals and renames under a read-only preopen answer EROFS. */
  readOnly: boolean;
}

/** The guest's standard input: a byte stream fed by the main thread. */
export interface StdinSource {
  /**
   * Returns up to `max` bytes, blocking while nothing is buffered. Returns an empty array only at end
   * of file (stdin closed and drained).
   */
  read(max: number): Uint8Array;
  /** Waits up to `timeoutMs` (Infinity: forever) for data or end of file; true when a read would not block. */
  waitReadable(timeoutMs: number): boolean;
}

/** Bytes a run may write to files, counted across files and shared with the run's bridge handlers (egress file outputs). */
export interface WriteBudget {
  /** Takes `bytes` from the budget; false (and nothing taken) when that would exceed it. */
  tryConsume(bytes: number): boolean;
}

export interface WasiOptions {
  args: string[];
  /** `KEY=VALUE` entries, exactly as given to the guest. */
  env: string[];
  preopens: PreopenSpec[];
  stdin: StdinSource;
  /** Called synchronously for every write to fd 1; may throw to abort the run (a stdout limit). */
  stdout: (bytes: Uint8Array) => void;
  /** Called synchronously for every write to fd 2. */
  stderr: (bytes: Uint8Array) => void;
  writeBudget: WriteBudget;
  /** Sleeps the calling thread for `ms` milliseconds without spinning (Atomics.wait). */
  sleep: (ms: number) => void;
}

/** Thrown by proc_exit to unwind the guest; the runner catches it and reports `code`. */
export class ProcExit extends Error {
  constructor(readonly code: number) {
    super(`proc_exit(${code})`);
    this.name = 'ProcExit';
  }
}

/**
 * The host itself (implemented in `wasi/host.ts` as `export class WasiHost implements WasiHostApi`):
 *
 *   const host = new WasiHost(options);
 *   const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: host.imports, ... });
 *   const exitCode = host.start(instance); // binds instance.exports.memory, calls _start,
 *                                          // returns 0 on return, the code on proc_exit; traps propagate
 *   host.close();                          // closes every host file descriptor it opened
 *   host.reset(nextOptions);               // optional: the next run on the same `imports` object
 */
export interface WasiHostApi {
  /** The `wasi_snapshot_preview1` import object: every preview 1 function. */
  readonly imports: Record<string, (...args: never[]) => number | bigint | void>;
  start(instance: WebAssembly.Instance): number;
  /** Closes every host descriptor of the run and lets go of the guest's memory. */
  close(): void;
  /**
   * Starts another run with `options` on the same `imports` (after close, or instead of it): nothing
   * of the previous run stays reachable. Throws like the constructor when a preopen cannot be opened.
   */
  reset(options: WasiOptions): void;
}
