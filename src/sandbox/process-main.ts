/**
 * The sandbox process: a child of the server that holds the worker pool and nothing else, so that a fatal
 * error in a guest's isolate (a heap limit reached in V8, an abort) ends this process only. Its parent
 * (`SandboxProcess`) starts it, gives it modules and runs over IPC, serves bridged imports, and starts a new
 * one when it dies. It holds no secrets of its own: what a run needs (preopens, limits, stdin) comes with it.
 */
import { SubakoError } from '../errors.js';
import { compilePrepared } from './compile.js';
import { SandboxPool } from './pool.js';
import type { FromSandbox, ProcessBridgeReply, ToSandbox } from './process-protocol.js';
import type { CompiledModule, RunContext, RunHandle } from './types.js';

if (typeof process.send !== 'function') throw new Error('sandbox/process-main.js must be started by SandboxProcess');

const size = Number(process.env.SUBAKO_SANDBOX_WORKERS ?? 2);
const moduleCacheSize = Number(process.env.SUBAKO_SANDBOX_MODULE_CACHE ?? 32);
const pool = new SandboxPool({ size, moduleCacheSize });

/** Modules by the parent's id: compiling, then compiled. */
const modules = new Map<number, Promise<CompiledModule>>();
const compiled = new Map<number, CompiledModule>();

/** A run as this process holds it: before its module is compiled, what the parent asked is kept in order. */
interface ChildRun {
  handle: RunHandle | null;
  stdin: Uint8Array[];
  stdinClosed: boolean;
  killed: string | null;
  /** The run's write budget, which bridged imports are told the rest of. */
  budgetBytes: number;
  bridgeCalls: Map<number, (reply: ProcessBridgeReply) => void>;
  /** Stdout received from the worker and not yet sent on (see `holdStdout`). */
  heldStdout: Uint8Array[];
  flushScheduled: boolean;
}

const runs = new Map<number, ChildRun>();
let nextCallId = 0;

/** The bridge handler's failure text reaches the guest as is: it was already made safe by the parent. */
class BridgeFailure extends SubakoError {
  constructor(message: string) {
    super('sandbox.bridge', message);
  }
}

function send(message: FromSandbox): void {
  process.send!(message);
}

function compile(moduleId: number, bytes: Uint8Array, memoryBytes: number): void {
  const compiling = compilePrepared({ bytes: bytes as Uint8Array<ArrayBuffer>, memoryBytes }, moduleId);
  modules.set(moduleId, compiling);
  compiling.then(
    (module) => {
      compiled.set(moduleId, module);
      send({ t: 'compiled', moduleId, importsHttp: module.importsHttp });
    },
    (error: unknown) => {
      modules.delete(moduleId);
      send({ t: 'compile_failed', moduleId, message: error instanceof Error ? error.message : String(error) });
    },
  );
}

function start(message: Extract<ToSandbox, { t: 'run' }>, module: CompiledModule, run: ChildRun): void {
  const { runId } = message;
  let handle: RunHandle;
  try {
    handle = pool.run(module, {
      args: message.args,
      env: message.env,
      preopens: message.preopens,
      limits: message.limits,
      stdin: message.stdin ?? undefined,
      endStdinAfterAnswer: message.endStdinAfterAnswer,
      onStdout: (bytes) => holdStdout(runId, run, bytes),
      bridge: message.http ? { http: (payload, context) => bridged(runId, run, payload, context) } : undefined,
    });
  } catch (error) {
    runs.delete(runId);
    const code = error instanceof SubakoError ? error.code : 'sandbox.error';
    send({ t: 'refused', runId, code, message: error instanceof Error ? error.message : String(error) });
    return;
  }
  run.handle = handle;
  for (const bytes of run.stdin.splice(0)) handle.writeStdin(bytes);
  if (run.stdinClosed || message.stdinClosed) handle.closeStdin();
  if (run.killed !== null) handle.kill(run.killed);
  handle.result.then(
    (result) => {
      runs.delete(runId);
      const stdout = takeHeldStdout(run);
      send(stdout ? { t: 'done', runId, result, stdout } : { t: 'done', runId, result });
    },
    (error: unknown) => {
      runs.delete(runId);
      const code = error instanceof SubakoError ? error.code : 'sandbox.error';
      send({ t: 'refused', runId, code, message: error instanceof Error ? error.message : String(error) });
    },
  );
}

/**
 * Stdout is sent on at the end of the event loop's turn, not as each chunk comes: a guest's answer and its
 * exit usually reach this thread together, and then the answer travels inside the `done` message — one
 * message across the process boundary per call instead of two. A guest still running (waiting for stdin,
 * or past its answer) has its output sent on within the same turn, so the parent's conversation sees it as
 * before (to stop a guest that broke the protocol, to start the grace period after the answer).
 */
function holdStdout(runId: number, run: ChildRun, bytes: Uint8Array): void {
  run.heldStdout.push(bytes);
  if (run.flushScheduled) return;
  run.flushScheduled = true;
  setImmediate(() => {
    run.flushScheduled = false;
    const held = takeHeldStdout(run);
    if (held && runs.get(runId) === run) send({ t: 'stdout', runId, bytes: held });
  });
}

function takeHeldStdout(run: ChildRun): Uint8Array | null {
  const held = run.heldStdout;
  if (held.length === 0) return null;
  run.heldStdout = [];
  return held.length === 1 ? held[0] : Buffer.concat(held);
}

/** A bridged import: the guest waits in its worker while the parent serves the request. */
function bridged(runId: number, run: ChildRun, payload: Uint8Array, context: RunContext): Promise<Uint8Array> {
  // What the guest wrote before it called reaches the parent before the request does.
  const held = takeHeldStdout(run);
  if (held) send({ t: 'stdout', runId, bytes: held });
  const callId = ++nextCallId;
  const budgetLeft = Math.max(0, run.budgetBytes - context.writeBudget.used());
  return new Promise<Uint8Array>((resolve, reject) => {
    run.bridgeCalls.set(callId, (reply) => {
      // The guest was blocked all along, so what the parent drew is still there to draw here.
      if (reply.consumed > 0) context.writeBudget.tryConsume(reply.consumed);
      if ('ok' in reply) resolve(reply.ok);
      else reject(new BridgeFailure(reply.error));
    });
    send({ t: 'bridge', runId, callId, channel: 'http', payload, budgetLeft });
  });
}

function onRun(message: Extract<ToSandbox, { t: 'run' }>): void {
  const run: ChildRun = {
    handle: null, stdin: [], stdinClosed: false, killed: null, budgetBytes: message.limits.writeBudgetBytes, bridgeCalls: new Map(),
    heldStdout: [], flushScheduled: false,
  };
  runs.set(message.runId, run);
  const ready = compiled.get(message.moduleId);
  if (ready) return start(message, ready, run);
  const compiling = modules.get(message.moduleId);
  if (!compiling) {
    runs.delete(message.runId);
    send({ t: 'refused', runId: message.runId, code: 'sandbox.error', message: 'the sandbox process does not hold this module' });
    return;
  }
  compiling.then(
    (module) => start(message, module, run),
    (error: unknown) => {
      runs.delete(message.runId);
      send({ t: 'refused', runId: message.runId, code: 'sandbox.compile', message: error instanceof Error ? error.message : String(error) });
    },
  );
}

process.on('message', (message: ToSandbox) => {
  switch (message.t) {
    case 'compile':
      return compile(message.moduleId, message.bytes, message.memoryBytes);
    case 'run':
      return onRun(message);
    case 'forget':
      // A compile still under way is left to finish: its waiter in the parent was never dropped.
      if (compiled.delete(message.moduleId)) modules.delete(message.moduleId);
      return;
    case 'stdin': {
      const run = runs.get(message.runId);
      if (!run) return;
      if (run.handle) run.handle.writeStdin(message.bytes);
      else run.stdin.push(message.bytes);
      return;
    }
    case 'close': {
      const run = runs.get(message.runId);
      if (!run) return;
      if (run.handle) run.handle.closeStdin();
      else run.stdinClosed = true;
      return;
    }
    case 'kill': {
      const run = runs.get(message.runId);
      if (!run) return;
      if (run.handle) run.handle.kill(message.reason);
      else run.killed = message.reason;
      return;
    }
    case 'reply': {
      const calls = runs.get(message.runId)?.bridgeCalls;
      const settle = calls?.get(message.callId);
      if (!settle) return;
      calls!.delete(message.callId);
      settle(message.reply);
    }
  }
});

// The parent going away (its IPC channel closed) ends this process: nobody is left to serve.
process.on('disconnect', () => {
  void pool.close().finally(() => process.exit(0));
});

send({ t: 'ready' });
