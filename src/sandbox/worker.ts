/**
 * A sandbox worker: runs one guest at a time, fully synchronously, for as long as its owner keeps it.
 * Every run is a fresh instance. The WASI host (its import object) is built once per worker and reset for
 * each run: fresh descriptors, clocks and options. Whatever the guest does ends in a `done` message: this
 * thread never throws out of a run.
 *
 * Two ways in, one way to run:
 * - a pool's worker (`SandboxPool`, guests in the caller's process) takes runs and modules from its main
 *   thread and posts everything back to it;
 * - a lane's worker (inside the sandbox process) takes runs straight from the server on its own socket and
 *   writes its output and its end there, and takes modules from its process's main thread, which compiles
 *   them once for all workers. Only what must reach a guest blocked in a synchronous wait (more stdin, a
 *   bridge reply) still comes through that main thread.
 *
 * Between runs the worker makes the next instance of the module it just ran (a fresh one, never one a guest
 * touched), so the next run of it starts on an instance that already exists.
 */
import { connect } from 'node:net';
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { WasiHost, type WasiOptions } from '../wasi/index.js';
import {
  SLEEP_SLOT, startRunBudget, takeOffer, tryConsumeWriteBudget, viewControlBlock, writeBudgetLeft, writeBudgetUsed,
} from './control-block.js';
import { makeBridgeCall } from './bridge-client.js';
import { classifyEnd, classifyInstantiateFailure, type GuestEnd } from './outcome.js';
import { OutputSink, PIECE_BYTES, PortOutput, type OutputFlow, type OutputTransport } from './output-sink.js';
import type { LaneBoot, ModuleNote, RunMessage, RunSpec, WorkerBoot, WorkerMessage } from './protocol.js';
import type { FromLane, LaneRun } from './process-protocol.js';
import { StdinReader } from './stdin-reader.js';
import { AnswerWatch } from './answer-watch.js';
import { makeSubakoHttpImports } from './subako-http.js';
import { SUBAKO_HTTP_MODULE } from './subako-http-abi.js';
import { FrameReader } from './lane-frames.js';
import { LaneWriter } from './lane-writer.js';
import { GROW_FAILED_EXPORT } from '../wasm/lean.js';
import type { RunOutcome } from './types.js';

const port = parentPort;
if (!port) throw new Error('sandbox/worker.js must run as a worker thread');
const boot = workerData as WorkerBoot;
const control = viewControlBlock(boot.control);

/** How a run's output, bridge calls and end leave this worker. */
interface RunIo {
  output(runId: number): OutputTransport;
  bridgePost: (message: WorkerMessage, transfer?: ArrayBuffer[]) => void;
  done(runId: number, outcome: RunOutcome, writtenBytes: number): void;
}

function sleep(ms: number): void {
  const wait = Number.isNaN(ms) ? 0 : Math.max(0, ms);
  // Nobody ever changes this slot: the wait lasts the full time (or until the worker is terminated).
  Atomics.wait(control.i32, SLEEP_SLOT, 0, wait);
}

/** The worker's WASI host, made by the first run that sets one up, reset by every later one. */
let wasi: WasiHost | null = null;
let wasiImports: WebAssembly.Imports | null = null;

function wasiFor(options: WasiOptions): WasiHost {
  if (wasi) {
    wasi.reset(options);
    return wasi;
  }
  wasi = new WasiHost(options);
  wasiImports = { wasi_snapshot_preview1: wasi.imports };
  return wasi;
}

/** The next run's instance, made while the worker was idle: only for a module that allows it (`premade`). */
let premade: { moduleId: number; instance: WebAssembly.Instance } | null = null;

function premake(moduleId: number, module: WebAssembly.Module): void {
  premade = null;
  // Made with the host's own import object, which every run resets and keeps.
  if (!wasiImports) return;
  try {
    premade = { moduleId, instance: new WebAssembly.Instance(module, wasiImports!) };
  } catch {
    // Whatever failed here fails again in the run, where it is classified and reported.
  }
}

function takePremade(moduleId: number): WebAssembly.Instance | null {
  const ready = premade;
  premade = null;
  return ready && ready.moduleId === moduleId ? ready.instance : null;
}

function growFailed(instance: WebAssembly.Instance): boolean {
  const flag = instance.exports[GROW_FAILED_EXPORT];
  return flag instanceof WebAssembly.Global && flag.value === 1;
}

function runGuest(spec: RunSpec, module: WebAssembly.Module | undefined, io: RunIo): RunOutcome {
  if (!module) return { kind: 'trap', message: 'sandbox error: the worker does not hold this module' };
  const output = new OutputSink(io.output(spec.runId), spec.stdoutBytes);
  const stdin = new StdinReader(boot.stdinPort, control, spec.runId, spec.stdin);
  if (spec.stdinClosed) stdin.end();
  const watch = spec.endStdinAfterAnswer === undefined ? null : new AnswerWatch(spec.endStdinAfterAnswer);
  const stdout = watch
    ? (bytes: Uint8Array): void => {
        output.stdout(bytes);
        if (watch.push(bytes)) stdin.end();
      }
    : output.stdout;
  let host: WasiHost;
  try {
    host = wasiFor({
      args: spec.args,
      env: spec.env,
      preopens: spec.preopens,
      stdin,
      stdout,
      stderr: output.stderr,
      writeBudget: { tryConsume: (bytes) => tryConsumeWriteBudget(control, bytes) },
      sleep,
    });
  } catch (error) {
    return { kind: 'trap', message: `sandbox error: the WASI host could not be set up: ${String(error)}` };
  }
  let instance: WebAssembly.Instance | null = spec.linkHttp ? null : takePremade(spec.moduleId);
  if (!instance) {
    let imports = wasiImports!;
    if (spec.linkHttp) {
      const bridge = makeBridgeCall(io.bridgePost, boot.bridgePort, control, spec.runId, () => writeBudgetLeft(control));
      const memory = () => instance?.exports.memory as WebAssembly.Memory | undefined;
      imports = { wasi_snapshot_preview1: host.imports, [SUBAKO_HTTP_MODULE]: { ...makeSubakoHttpImports(memory, bridge) } };
    }
    try {
      instance = new WebAssembly.Instance(module, imports);
    } catch (error) {
      return classifyInstantiateFailure(error, spec.memoryBytes);
    }
  }
  let end: GuestEnd;
  try {
    end = { returned: host.start(instance) };
  } catch (error) {
    end = { threw: error };
  }
  return classifyEnd(end, { stdoutLimitHit: output.stdoutLimitHit, growFailed: growFailed(instance), memoryBytes: spec.memoryBytes });
}

/** Runs one guest start to end and reports it; then closes its descriptors and makes the next instance. */
function serve(spec: RunSpec, module: WebAssembly.Module | undefined, premadeAfter: boolean, io: RunIo): void {
  startRunBudget(control, spec.runId, spec.writeBudgetBytes);
  let outcome: RunOutcome;
  try {
    outcome = runGuest(spec, module, io);
  } catch (error) {
    outcome = { kind: 'trap', message: `sandbox error: ${String(error)}` };
  }
  // The guest can do nothing more: the outcome goes first; closing its descriptors and making the next
  // instance come after, off the call's path (before this worker takes another run).
  io.done(spec.runId, outcome, writeBudgetUsed(control));
  // A close the host refuses (EBADF, EIO) is taken inside (the fd is released either way); anything else is a
  // bug that ends this worker, and its owner replaces it: better than a worker with descriptors in doubt.
  wasi?.close();
  if (premadeAfter && module) premake(spec.moduleId, module);
}

if (boot.lane) serveLane(boot.lane);
else servePool(port);

/** A pool's worker: runs and modules come from the main thread, everything goes back to it. */
function servePool(main: typeof port & object): void {
  const modules = new Map<number, { module: WebAssembly.Module; premade: boolean }>();
  const flow: OutputFlow = { posted: 0 };
  const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []): void => main.postMessage(message, transfer);
  const io: RunIo = {
    output: (runId) => new PortOutput(post, control, runId, flow),
    bridgePost: post,
    done: (runId, outcome, writtenBytes) => post({ type: 'done', runId, outcome, writtenBytes }),
  };

  /** Keeps the module LRU in step with the main thread's mirror of it (same operations, same order). */
  function takeModule(message: RunMessage): { module: WebAssembly.Module; premade: boolean } | undefined {
    const held = message.module ? { module: message.module, premade: message.premade } : modules.get(message.moduleId);
    if (!held) return undefined;
    modules.delete(message.moduleId);
    modules.set(message.moduleId, held);
    while (modules.size > boot.moduleCacheSize) modules.delete(modules.keys().next().value as number);
    return held;
  }

  main.on('message', (message: RunMessage) => {
    // Every message touches the module cache, taken or not, so it stays in step with the main thread's mirror.
    const held = takeModule(message);
    // A run posted ahead that the main thread took back (to start it on another worker) is dropped unseen.
    if (message.offer !== 0 && !takeOffer(control, message.offer)) return;
    serve(message, held?.module, held?.premade === true, io);
  });
  post({ type: 'ready' });
}

/** A lane's worker: runs come on its own socket from the server; modules from its process's main thread. */
function serveLane(lane: LaneBoot): void {
  const modules = new Map<number, { module: WebAssembly.Module; premade: boolean }>();
  const modulePort: MessagePort = lane.modulePort;
  /** Takes the module notes the main thread posted (each before the server could ask for the module). */
  const takeModuleNotes = (): void => {
    for (;;) {
      const received = receiveMessageOnPort(modulePort);
      if (!received) return;
      const note = received.message as ModuleNote;
      if (note.module) modules.set(note.moduleId, { module: note.module, premade: note.premade });
      else modules.delete(note.moduleId);
    }
  };
  const socket = connect(lane.path);
  let writer: LaneWriter | null = null;
  const write = (message: FromLane): void => writer!.write(message);
  const io: RunIo = {
    output: (runId) => ({
      send: (stream, bytes) => {
        for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
          write({ t: 'out', runId, stream: stream === 'stdout' ? 1 : 2, bytes: bytes.subarray(at, Math.min(bytes.length, at + PIECE_BYTES)) });
        }
      },
    }),
    bridgePost: (message) => {
      if (message.type !== 'bridge') return;
      write({ t: 'bridge', runId: message.runId, channel: message.channel, payload: message.payload, budgetLeft: message.budgetLeft ?? 0 });
    },
    done: (runId, outcome, writtenBytes) => write({ t: 'done', runId, outcome, writtenBytes }),
  };
  const frames = new FrameReader(lane.maxFrameBytes);
  socket.on('connect', () => {
    const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) throw new Error('the lane socket has no descriptor to write to');
    writer = new LaneWriter(fd, sleep);
    write({ t: 'hello', token: lane.token, laneId: lane.laneId });
    port!.postMessage({ type: 'ready' } satisfies WorkerMessage);
  });
  socket.on('data', (chunk: Buffer) => {
    frames.push(chunk, (value) => {
      const run = value as LaneRun;
      if (run.t !== 'run') return;
      takeModuleNotes();
      const held = modules.get(run.moduleId);
      serve(run, held?.module, held?.premade === true, io);
    });
  });
  // The server closed the lane (or it broke): nobody is left to serve; the main thread reports the end.
  socket.on('close', () => process.exit(0));
  socket.on('error', (error) => {
    // Thrown, so the main thread reports why this worker never took a run (its 'error' event carries this).
    if (!writer) throw new Error(`the worker could not open its lane to the server (${lane.path}): ${error.message}`);
  });
}
