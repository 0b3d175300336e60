/**
 * The sandbox process: a child of the server that holds the guests' worker threads and nothing else, so
 * that a fatal error in a guest's isolate (a heap limit reached in V8, an abort) ends this process only. Its
 * parent (`SandboxProcess`) starts it and starts a new one when it dies. It holds no secrets of its own: what
 * a run needs (preopens, limits, stdin) comes with the run.
 *
 * Calls do not pass through this thread. Each worker opens its own lane to the server (a socket) and takes
 * its runs there; this thread compiles modules (once, for every worker), hands a worker what must reach a
 * guest blocked in a synchronous wait (more stdin, end of file, bridge replies: through the worker's shared
 * control block), stops workers when the server asks, and replaces every worker that ends.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import {
  BRIDGE_SEQ, STDIN_SEQ, closeStdinOf, createControlBlock, signal, tryConsumeWriteBudget, writeBudgetUsed,
  type ControlBlock,
} from './control-block.js';
import type { FromSandbox, ToSandbox } from './process-protocol.js';
import type { BridgeReply, ModuleNote, StdinMessage, WorkerBoot, WorkerMessage } from './protocol.js';
import type { CompiledModule } from './types.js';

if (typeof process.send !== 'function') throw new Error('sandbox/process-main.js must be started by SandboxProcess');

const WORKER_URL = new URL('./worker.js', import.meta.url);
/** Workers that die before they open their lane, in a row, before no new one is started. */
const MAX_START_FAILURES = 3;
/** The largest run frame a worker takes from the server (a run's stdin rides in it). */
const MAX_RUN_FRAME_BYTES = 256 * 1024 * 1024;

const size = Number(process.env.SUBAKO_SANDBOX_WORKERS ?? 2);
const lanePath = process.env.SUBAKO_SANDBOX_LANES ?? '';
const token = process.env.SUBAKO_SANDBOX_TOKEN ?? '';
// Nothing else here may read the token: it is the only thing that names this process to the server.
delete process.env.SUBAKO_SANDBOX_TOKEN;

/** Modules by the server's id, compiled and posted to every worker (the server asks for each id once at a time). */
const compiled = new Map<number, CompiledModule>();

function send(message: FromSandbox): void {
  process.send!(message);
}

/** One worker thread and its lane id, from start to exit. */
class LaneSlot {
  readonly control: ControlBlock = createControlBlock();
  readonly worker: Worker;
  private readonly stdinPort: MessagePort;
  private readonly bridgePort: MessagePort;
  private readonly modulePort: MessagePort;
  /** The worker opened its lane; one that dies before that failed to start. */
  ready = false;
  /** The server asked for this worker to stop. */
  stopping = false;
  private failure: string | null = null;

  constructor(readonly laneId: number) {
    const stdin = new MessageChannel();
    const bridge = new MessageChannel();
    const modules = new MessageChannel();
    this.stdinPort = stdin.port1;
    this.bridgePort = bridge.port1;
    this.modulePort = modules.port1;
    for (const [moduleId, module] of compiled) this.noteModule(moduleId, module);
    const boot: WorkerBoot = {
      control: this.control.buffer,
      stdinPort: stdin.port2,
      bridgePort: bridge.port2,
      moduleCacheSize: 0,
      lane: { path: lanePath, token, laneId, maxFrameBytes: MAX_RUN_FRAME_BYTES, modulePort: modules.port2 },
    };
    this.worker = new Worker(WORKER_URL, { workerData: boot, transferList: [stdin.port2, bridge.port2, modules.port2] });
    this.worker.on('message', (message: WorkerMessage) => {
      if (message.type !== 'ready') return;
      this.ready = true;
      startFailures = 0;
    });
    this.worker.on('error', (error) => {
      this.failure = `the sandbox worker failed: ${error.message}`;
    });
    this.worker.on('exit', (code) => ended(this, this.failure ?? `the sandbox worker exited with code ${code}`));
  }

  noteModule(moduleId: number, module: CompiledModule | null): void {
    const note: ModuleNote = module ? { moduleId, module: module.module, premade: module.premade } : { moduleId, premade: false };
    this.modulePort.postMessage(note);
  }

  stdin(message: StdinMessage): void {
    this.stdinPort.postMessage(message);
    signal(this.control, STDIN_SEQ);
  }

  closeStdin(runId: number): void {
    closeStdinOf(this.control, runId);
  }

  reply(message: BridgeReply, consumed: number): void {
    // The guest was blocked all along, so what the server's handler drew is still there to draw here.
    if (consumed > 0) tryConsumeWriteBudget(this.control, consumed);
    this.bridgePort.postMessage(message);
    signal(this.control, BRIDGE_SEQ);
  }

  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    void this.worker.terminate();
  }

  closePorts(): void {
    this.stdinPort.close();
    this.bridgePort.close();
    this.modulePort.close();
  }
}

const slots = new Map<number, LaneSlot>();
let nextLaneId = 0;
let startFailures = 0;
let closing = false;

function startSlot(): void {
  const slot = new LaneSlot(++nextLaneId);
  slots.set(slot.laneId, slot);
}

function ended(slot: LaneSlot, reason: string): void {
  slots.delete(slot.laneId);
  slot.closePorts();
  send({
    t: 'lane_ended',
    laneId: slot.laneId,
    stopped: slot.stopping,
    reason: slot.stopping ? 'stopped' : reason,
    writtenBytes: writeBudgetUsed(slot.control),
  });
  if (closing) return;
  if (!slot.ready && !slot.stopping && ++startFailures >= MAX_START_FAILURES) {
    send({ t: 'workers_failed', reason });
    return;
  }
  startSlot();
}

/**
 * Loaded at the first compile, not as this process starts: the workers are started first and boot while this
 * thread loads the compiler's modules (a fresh process's first answer waits on both).
 */
let compiler: Promise<typeof import('./compile.js')> | null = null;

function compile(moduleId: number, bytes: Uint8Array, memoryBytes: number): void {
  compiler ??= import('./compile.js');
  const compilation = compiler.then(({ compilePrepared }) => compilePrepared({ bytes: bytes as Uint8Array<ArrayBuffer>, memoryBytes }, moduleId));
  compilation.then(
    (module) => {
      compiled.set(moduleId, module);
      // Every worker has it on its port before the server learns it may send runs that name it.
      for (const slot of slots.values()) slot.noteModule(moduleId, module);
      send({ t: 'compiled', moduleId, importsHttp: module.importsHttp });
    },
    (error: unknown) => {
      send({ t: 'compile_failed', moduleId, message: error instanceof Error ? error.message : String(error) });
    },
  );
}

process.on('message', (message: ToSandbox) => {
  switch (message.t) {
    case 'compile':
      return compile(message.moduleId, message.bytes, message.memoryBytes);
    case 'forget':
      // The server forgets only modules it is not waiting on, so this one is compiled.
      if (!compiled.delete(message.moduleId)) return;
      for (const slot of slots.values()) slot.noteModule(message.moduleId, null);
      return;
    case 'stdin':
      return slots.get(message.laneId)?.stdin({ runId: message.runId, bytes: message.bytes });
    case 'close':
      return slots.get(message.laneId)?.closeStdin(message.runId);
    case 'reply': {
      const { reply } = message;
      const { runId } = message;
      const bridged: BridgeReply = 'ok' in reply ? { runId, ok: reply.ok } : 'error' in reply ? { runId, error: reply.error } : { runId, missing: true };
      return slots.get(message.laneId)?.reply(bridged, reply.consumed);
    }
    case 'stop':
      return slots.get(message.laneId)?.stop();
  }
});

// The parent going away (its IPC channel closed) ends this process: nobody is left to serve.
process.on('disconnect', () => {
  closing = true;
  process.exit(0);
});

for (let i = 0; i < size; i++) startSlot();
send({ t: 'ready' });
