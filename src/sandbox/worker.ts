/**
 * A sandbox worker: runs one guest at a time, fully synchronously, for as long as the pool keeps it.
 * Compiled modules stay cached here by id; every run is a fresh instance. The WASI host (its import
 * object) is built once per worker and reset for each run: fresh descriptors, clocks and options.
 * Whatever the guest does ends in a `done` message: this thread never throws out of a run.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { WasiHost, type WasiOptions } from '../wasi/index.js';
import {
  SLEEP_SLOT, startRunBudget, takeOffer, tryConsumeWriteBudget, viewControlBlock, writeBudgetUsed,
} from './control-block.js';
import { makeBridgeCall } from './bridge-client.js';
import { classifyEnd, classifyInstantiateFailure, type GuestEnd } from './outcome.js';
import { OutputSink, type OutputFlow } from './output-sink.js';
import type { RunMessage, WorkerBoot, WorkerMessage } from './protocol.js';
import { StdinReader } from './stdin-reader.js';
import { AnswerWatch } from './answer-watch.js';
import { makeSubakoHttpImports } from './subako-http.js';
import { SUBAKO_HTTP_MODULE } from './subako-http-abi.js';
import { GROW_FAILED_EXPORT } from '../wasm/index.js';
import type { RunOutcome } from './types.js';

const port = parentPort;
if (!port) throw new Error('sandbox/worker.js must run as a worker thread');
const boot = workerData as WorkerBoot;
const control = viewControlBlock(boot.control);
const modules = new Map<number, WebAssembly.Module>();
const outputFlow: OutputFlow = { posted: 0 };

function post(message: WorkerMessage, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

/** Keeps the module LRU in step with the main thread's mirror of it (same operations, same order). */
function takeModule(message: RunMessage): WebAssembly.Module | undefined {
  const module = message.module ?? modules.get(message.moduleId);
  if (!module) return undefined;
  modules.delete(message.moduleId);
  modules.set(message.moduleId, module);
  while (modules.size > boot.moduleCacheSize) modules.delete(modules.keys().next().value as number);
  return module;
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

function growFailed(instance: WebAssembly.Instance): boolean {
  const flag = instance.exports[GROW_FAILED_EXPORT];
  return flag instanceof WebAssembly.Global && flag.value === 1;
}

function runGuest(message: RunMessage, module: WebAssembly.Module | undefined): RunOutcome {
  if (!module) return { kind: 'trap', message: 'sandbox error: the worker does not hold this module' };
  const output = new OutputSink(post, control, message.runId, message.stdoutBytes, outputFlow);
  const stdin = new StdinReader(boot.stdinPort, control, message.runId, message.stdin);
  const watch = message.endStdinAfterAnswer === undefined ? null : new AnswerWatch(message.endStdinAfterAnswer);
  const stdout = watch
    ? (bytes: Uint8Array): void => {
        output.stdout(bytes);
        if (watch.push(bytes)) stdin.end();
      }
    : output.stdout;
  let host: WasiHost;
  try {
    host = wasiFor({
      args: message.args,
      env: message.env,
      preopens: message.preopens,
      stdin,
      stdout,
      stderr: output.stderr,
      writeBudget: { tryConsume: (bytes) => tryConsumeWriteBudget(control, bytes) },
      sleep,
    });
  } catch (error) {
    return { kind: 'trap', message: `sandbox error: the WASI host could not be set up: ${String(error)}` };
  }
  let instance: WebAssembly.Instance | undefined;
  let imports = wasiImports!;
  if (message.linkHttp) {
    const bridge = makeBridgeCall(post, boot.bridgePort, control, message.runId);
    const memory = () => instance?.exports.memory as WebAssembly.Memory | undefined;
    imports = { wasi_snapshot_preview1: host.imports, [SUBAKO_HTTP_MODULE]: { ...makeSubakoHttpImports(memory, bridge) } };
  }
  try {
    instance = new WebAssembly.Instance(module, imports);
  } catch (error) {
    return classifyInstantiateFailure(error, message.memoryBytes);
  }
  let end: GuestEnd;
  try {
    end = { returned: host.start(instance) };
  } catch (error) {
    end = { threw: error };
  }
  return classifyEnd(end, {
    stdoutLimitHit: output.stdoutLimitHit,
    growFailed: growFailed(instance),
    memoryBytes: message.memoryBytes,
  });
}

/** Closes the run's host descriptors and lets go of its memory (every host descriptor is ours alone). */
function endRun(): void {
  // A close the host refuses (EBADF, EIO) is taken inside (the fd is released either way); anything else is a
  // bug that ends this worker, and the pool replaces it: better than a worker with descriptors in doubt.
  wasi?.close();
}

port.on('message', (message: RunMessage) => {
  // Every message touches the module cache, taken or not, so it stays in step with the main thread's mirror.
  const module = takeModule(message);
  // A run posted ahead that the main thread took back (to start it on another worker) is dropped unseen.
  if (message.offer !== 0 && !takeOffer(control, message.offer)) return;
  startRunBudget(control, message.runId, message.writeBudgetBytes);
  let outcome: RunOutcome;
  try {
    outcome = runGuest(message, module);
  } catch (error) {
    outcome = { kind: 'trap', message: `sandbox error: ${String(error)}` };
  }
  // The guest can do nothing more: the outcome goes first, the descriptors are closed right after (before
  // this worker takes another run), so closing them is not on the call's path.
  post({ type: 'done', runId: message.runId, outcome, writtenBytes: writeBudgetUsed(control) });
  endRun();
});

post({ type: 'ready' });
