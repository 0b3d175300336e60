/**
 * The messages between the main thread and a sandbox worker. Everything carries the run's id so that
 * a message left over from an earlier run on the same worker is recognised and dropped.
 */
import type { MessagePort } from 'node:worker_threads';
import type { PreopenSpec } from '../wasi/index.js';
import type { RunOutcome } from './types.js';

/** What the worker receives once, at start, in `workerData`. */
export interface WorkerBoot {
  control: SharedArrayBuffer;
  /** Stdin chunks for the running guest (main → worker), read with receiveMessageOnPort. */
  stdinPort: MessagePort;
  /** Replies to bridge calls (main → worker), read with receiveMessageOnPort. */
  bridgePort: MessagePort;
  /** How many compiled modules the worker keeps; the main thread mirrors the same LRU (pool workers only). */
  moduleCacheSize: number;
  /** Present for a lane's worker (inside the sandbox process): runs come on its own socket, not its port. */
  lane?: LaneBoot;
}

/** How a lane's worker reaches the server, and where its modules come from. */
export interface LaneBoot {
  /** The server's lane socket (a Unix socket in a directory only this user can enter). */
  path: string;
  /** Said in the worker's `hello`: the server takes lanes only from the process it started with this token. */
  token: string;
  laneId: number;
  /** The largest frame the worker accepts from the server. */
  maxFrameBytes: number;
  /**
   * Module notes from the sandbox process's main thread, taken with receiveMessageOnPort as a run starts:
   * each compiled module is posted here before the server is told it is compiled, so it is always there
   * by the time a run names it.
   */
  modulePort: MessagePort;
}

/** A compiled module for a lane's worker to keep (`module` present) or drop. */
export interface ModuleNote {
  moduleId: number;
  module?: WebAssembly.Module;
  premade: boolean;
}

/** What a worker needs to start a run, whichever way it comes (a pool's port, or a lane). */
export interface RunSpec {
  runId: number;
  moduleId: number;
  args: string[];
  env: string[];
  preopens: PreopenSpec[];
  stdoutBytes: number;
  memoryBytes: number;
  linkHttp: boolean;
  /**
   * Stdin written before the run started, carried here so that starting a run is one message. End of
   * file is not a message: see STDIN_CLOSED_RUN in control-block.ts.
   */
  stdin: Uint8Array | null;
  /** End of file was given before the run started. */
  stdinClosed: boolean;
  /** See RunRequest.endStdinAfterAnswer. */
  endStdinAfterAnswer?: string | number;
  /** Bytes the run may write to files; the worker starts the budget when it starts the run. */
  writeBudgetBytes: number;
}

/** Main → worker (on the worker's own port): start a run. */
export interface RunMessage extends RunSpec {
  type: 'run';
  /** Present only when the worker does not hold this module yet. */
  module?: WebAssembly.Module;
  /** See CompiledModule.premade. */
  premade: boolean;
  /**
   * Non-zero for a run posted ahead to a busy worker: the worker starts it only if it takes this
   * offer token first (see NEXT_OFFER in control-block.ts), and otherwise drops the message.
   */
  offer: number;
}

/** Main → worker (on the stdin port): stdin written while the run is going. */
export interface StdinMessage {
  runId: number;
  bytes: Uint8Array;
}

export type BridgeReply =
  | { runId: number; ok: Uint8Array }
  | { runId: number; error: string }
  | { runId: number; missing: true };

/** Worker → main. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'stdout' | 'stderr'; runId: number; bytes: Uint8Array }
  /** `budgetLeft`: what the run's write budget still holds (a lane's server is told; a pool reads it itself). */
  | { type: 'bridge'; runId: number; channel: string; payload: Uint8Array; budgetLeft?: number }
  | { type: 'done'; runId: number; outcome: RunOutcome; writtenBytes: number };
