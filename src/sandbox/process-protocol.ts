/**
 * The messages between the server's process and its sandbox process. Two kinds of channel:
 *
 * - **Lanes**, one socket per sandbox worker, straight from the worker to the server (no thread of the
 *   sandbox process relays them). A call's hot path is here: `run` in, `out` frames and `done` back. A call
 *   without `subako_http` is one frame each way (the request is already on stdin and the worker gives end of
 *   file after the answer; the answer rides in `done` when the guest exits as it answers). A worker opens
 *   its lane with `hello` and the token its process was started with; the server serves no other.
 * - **The control channel** (Node's IPC with the structured-clone serialization): modules to compile, and
 *   what must reach a worker while its guest is blocked in a synchronous wait — more stdin, end of file,
 *   bridge replies — which the sandbox process's main thread hands over through the worker's shared
 *   control block. Stopping a worker (deadline, kill) is asked here too, and the main thread reports every
 *   worker's end (`lane_ended`), asked for or not.
 *
 * Runs are named by ids the server gives, lanes by ids the sandbox process gives; a message about a run or
 * lane the other side no longer knows is dropped.
 */
import type { RunSpec } from './protocol.js';
import type { RunOutcome } from './types.js';

/** What the parent's bridge handler answered, and how much of the write budget it drew. */
export type ProcessBridgeReply =
  | { ok: Uint8Array; consumed: number }
  | { error: string; consumed: number }
  /** The run has no handler for that channel (the guest is told it has no network access). */
  | { missing: true; consumed: 0 };

/** Server → sandbox process, on the control channel. */
export type ToSandbox =
  /** Compile these (already instrumented) bytes under this id; answered by `compiled`. */
  | { t: 'compile'; moduleId: number; bytes: Uint8Array; memoryBytes: number }
  /** Drop this compiled module (the server compiles it again before it is next run). */
  | { t: 'forget'; moduleId: number }
  | { t: 'stdin'; laneId: number; runId: number; bytes: Uint8Array }
  | { t: 'close'; laneId: number; runId: number }
  /** Stop the lane's worker now, whatever it runs; answered by `lane_ended` once the thread has gone. */
  | { t: 'stop'; laneId: number }
  | { t: 'reply'; laneId: number; runId: number; reply: ProcessBridgeReply };

/** Sandbox process → server, on the control channel. */
export type FromSandbox =
  | { t: 'ready' }
  | { t: 'compiled'; moduleId: number; importsHttp: boolean }
  | { t: 'compile_failed'; moduleId: number; message: string }
  /**
   * The lane's worker has ended: `stopped` when the server asked, else `reason` says how it died.
   * `writtenBytes` is what its last run drew from the write budget (read from the control block).
   */
  | { t: 'lane_ended'; laneId: number; stopped: boolean; reason: string; writtenBytes: number }
  /** Workers keep dying before they open their lanes: no run can be served. */
  | { t: 'workers_failed'; reason: string };

/** Server → worker, on its lane. */
export interface LaneRun extends RunSpec {
  t: 'run';
}

/** Worker → server, on its lane. */
export type FromLane =
  | { t: 'hello'; token: string; laneId: number }
  /** `stream` 1 is stdout, 2 is stderr. */
  | { t: 'out'; runId: number; stream: 1 | 2; bytes: Uint8Array }
  /** The guest blocks in a bridged import until its reply comes (control channel); `budgetLeft`: what its write budget still holds. */
  | { t: 'bridge'; runId: number; channel: string; payload: Uint8Array; budgetLeft: number }
  | { t: 'done'; runId: number; outcome: RunOutcome; writtenBytes: number };
