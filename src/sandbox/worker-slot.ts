/**
 * One warm worker as the main thread sees it: the thread, its control block and ports, the ids of
 * the modules it holds (a mirror of its LRU), and the run it is serving. It forwards what the worker
 * says to its owner and acknowledges output bytes as they arrive (the worker's flow control).
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import {
  BRIDGE_SEQ,
  OUTPUT_ACKED,
  STDIN_SEQ,
  closeStdinOf,
  createControlBlock,
  offerNext,
  takeOffer,
  signal,
  type ControlBlock,
} from './control-block.js';
import type { BridgeReply, RunMessage, StdinMessage, WorkerBoot, WorkerMessage } from './protocol.js';

const WORKER_URL = new URL('./worker.js', import.meta.url);

export interface SlotEvents {
  message(slot: WorkerSlot, message: WorkerMessage): void;
  /** The thread ended without being asked to (a crash of the worker itself). */
  died(slot: WorkerSlot, reason: string): void;
}

export class WorkerSlot {
  readonly control: ControlBlock = createControlBlock();
  private readonly worker: Worker;
  private readonly stdinPort: MessagePort;
  private readonly bridgePort: MessagePort;
  private readonly heldModules = new Map<number, true>();
  private offers = 0;
  /** Set once the worker said it loaded; a worker that dies before that failed to start. */
  ready = false;
  private retired = false;
  /** Retired, with the output it had posted still passed on until the thread has ended. */
  private draining = false;

  constructor(
    private readonly events: SlotEvents,
    private readonly moduleCacheSize: number,
  ) {
    const stdin = new MessageChannel();
    const bridge = new MessageChannel();
    this.stdinPort = stdin.port1;
    this.bridgePort = bridge.port1;
    const boot: WorkerBoot = {
      control: this.control.buffer,
      stdinPort: stdin.port2,
      bridgePort: bridge.port2,
      moduleCacheSize,
    };
    this.worker = new Worker(WORKER_URL, { workerData: boot, transferList: [stdin.port2, bridge.port2] });
    // Idle workers must not keep the process alive; a running call keeps it alive with its deadline timer.
    this.worker.unref();
    this.stdinPort.unref();
    this.bridgePort.unref();
    this.worker.on('message', (message: WorkerMessage) => this.onMessage(message));
    this.worker.on('error', (error) => this.onDeath(`the sandbox worker failed: ${error.message}`));
    this.worker.on('exit', (code) => this.onDeath(`the sandbox worker exited with code ${code}`));
  }

  get threadId(): number {
    return this.worker.threadId;
  }

  /** Starts a run; posts the module only when this worker does not hold it yet. */
  start(message: Omit<RunMessage, 'module'>, module: WebAssembly.Module): void {
    const held = this.heldModules.has(message.moduleId);
    this.heldModules.delete(message.moduleId);
    this.heldModules.set(message.moduleId, true);
    while (this.heldModules.size > this.moduleCacheSize) {
      this.heldModules.delete(this.heldModules.keys().next().value as number);
    }
    this.worker.postMessage(held ? message : { ...message, module });
  }

  /**
   * Offers a run posted ahead (while this worker is busy): returns the token that goes in its run
   * message. `current` is the offer token of the worker's current run (0 if it was not posted ahead):
   * the worker may not have taken that one yet, so the new offer goes in the other slot.
   */
  offer(current: number): number {
    this.offers = (this.offers + 1) & 0x3fffffff || 1;
    const token = (this.offers << 1) | (current !== 0 ? 1 - (current & 1) : 0);
    offerNext(this.control, token);
    return token;
  }

  /** Takes an offer back: true when the worker had not taken it (and now never will). */
  takeBack(token: number): boolean {
    return takeOffer(this.control, token);
  }

  /** `message.bytes` must own its whole ArrayBuffer: it is transferred. */
  sendStdin(message: StdinMessage): void {
    if (this.retired) return;
    this.stdinPort.postMessage(message, [message.bytes.buffer as ArrayBuffer]);
    signal(this.control, STDIN_SEQ);
  }

  /** End of file on the run's stdin, after what was sent before. */
  closeStdin(runId: number): void {
    if (this.retired) return;
    closeStdinOf(this.control, runId);
  }

  sendBridgeReply(reply: BridgeReply): void {
    if (this.retired) return;
    this.bridgePort.postMessage(reply);
    signal(this.control, BRIDGE_SEQ);
  }

  /**
   * Stops the thread at once (a guest in a loop or a wait included); the slot is not used again. `drain`:
   * the output the worker posted before it stopped is still passed on (Node delivers a terminated worker's
   * queued messages before its exit), and the promise settles after it.
   */
  retire(options: { drain?: boolean } = {}): Promise<void> {
    if (this.retired) return Promise.resolve();
    this.retired = true;
    this.draining = options.drain === true;
    this.stdinPort.close();
    this.bridgePort.close();
    return this.worker.terminate().then(
      () => undefined,
      () => undefined,
    );
  }

  private onMessage(message: WorkerMessage): void {
    if (this.retired) {
      if (this.draining && (message.type === 'stdout' || message.type === 'stderr')) this.events.message(this, message);
      return;
    }
    if (message.type === 'stdout' || message.type === 'stderr') {
      signal(this.control, OUTPUT_ACKED, message.bytes.length);
    } else if (message.type === 'ready') {
      this.ready = true;
    }
    this.events.message(this, message);
  }

  private onDeath(reason: string): void {
    if (this.retired) return;
    this.retired = true;
    this.stdinPort.close();
    this.bridgePort.close();
    this.events.died(this, reason);
  }
}
