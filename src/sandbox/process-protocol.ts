/**
 * The messages between the server's process and its sandbox process (Node's IPC channel, with the
 * structured-clone serialization so bytes cross as bytes). Runs and modules are named by ids the parent
 * gives; a message about a run the other side no longer knows is dropped.
 *
 * A call without `subako_http` costs two messages: `run` (with the request already on stdin, and end of
 * file given by the sandbox after the answer) and `done` (with the answer, when the guest exited in the same
 * turn of this process's event loop as it answered; else the answer comes first, as `stdout`).
 */
import type { PreopenSpec } from '../wasi/index.js';
import type { RunLimits, RunResult } from './types.js';

/** What the parent's bridge handler answered, and how much of the write budget it drew. */
export type ProcessBridgeReply =
  | { ok: Uint8Array; consumed: number }
  | { error: string; consumed: number };

/** Parent → sandbox process. */
export type ToSandbox =
  /** Compile these (already instrumented) bytes under this id; answered by `compiled`. */
  | { t: 'compile'; moduleId: number; bytes: Uint8Array; memoryBytes: number }
  | {
      t: 'run';
      runId: number;
      moduleId: number;
      args: string[];
      env: string[];
      preopens: PreopenSpec[];
      /** `timeoutMs` is what is left of the run's deadline when it is sent. */
      limits: RunLimits;
      stdin: Uint8Array | null;
      stdinClosed: boolean;
      /** The parent serves the `http` bridge channel for this run. */
      http: boolean;
      endStdinAfterAnswer?: string | number;
    }
  /** Drop this compiled module (the parent compiles it again before it is next run). */
  | { t: 'forget'; moduleId: number }
  | { t: 'stdin'; runId: number; bytes: Uint8Array }
  | { t: 'close'; runId: number }
  | { t: 'kill'; runId: number; reason: string }
  | { t: 'reply'; runId: number; callId: number; reply: ProcessBridgeReply };

/** Sandbox process → parent. */
export type FromSandbox =
  | { t: 'ready' }
  | { t: 'compiled'; moduleId: number; importsHttp: boolean }
  | { t: 'compile_failed'; moduleId: number; message: string }
  | { t: 'stdout'; runId: number; bytes: Uint8Array }
  /** The guest blocks in a bridged import until `reply`; `budgetLeft` is what its write budget still holds. */
  | { t: 'bridge'; runId: number; callId: number; channel: string; payload: Uint8Array; budgetLeft: number }
  /** `stdout`: what the guest wrote that was not sent on yet, delivered before the result. */
  | { t: 'done'; runId: number; result: RunResult; stdout?: Uint8Array }
  /** The pool refused the run outright (closed, or its workers cannot start). */
  | { t: 'refused'; runId: number; code: string; message: string };
