/**
 * The guest's stdout and stderr, inside the worker: every write goes out at once (it streams). The stdout
 * cap is enforced here, synchronously, so a flooding guest is stopped at its write. A pool's worker posts
 * to the main thread, bounded by acknowledgements: when the main thread has not yet received
 * OUTPUT_WINDOW bytes, the guest waits, so a flood can never pile up in the host's memory (a lane's
 * writer waits on the socket's buffer the same way: lane-writer.ts).
 */
import { OUTPUT_ACKED, type ControlBlock } from './control-block.js';
import { StdoutLimitReached } from './outcome.js';
import type { WorkerMessage } from './protocol.js';

/** Bytes posted but not yet received by the main thread before the guest is made to wait. */
const OUTPUT_WINDOW = 8 * 1024 * 1024;
/** Larger writes are posted in pieces of this size, so counters never come near 2^31. */
export const PIECE_BYTES = 1024 * 1024;

/**
 * Bytes this worker posted, over all its runs, wrapping like the Int32 acknowledgement counter (both
 * start at 0 with the worker). Kept across runs: a run may start before the main thread has received
 * the output of the previous one (a run posted ahead), so the window spans runs.
 */
export interface OutputFlow {
  posted: number;
}

/** Where a run's output goes: posted to the main thread (a pool's worker) or written to a lane. */
export interface OutputTransport {
  send(stream: 'stdout' | 'stderr', bytes: Uint8Array): void;
}

/** The stdout cap, enforced at the guest's write, in front of whichever transport carries the output. */
export class OutputSink {
  private stdoutSent = 0;
  stdoutLimitHit = false;

  constructor(
    private readonly transport: OutputTransport,
    private readonly stdoutLimit: number,
  ) {}

  readonly stdout = (bytes: Uint8Array): void => {
    if (this.stdoutLimitHit) throw new StdoutLimitReached();
    const room = this.stdoutLimit - this.stdoutSent;
    const allowed = bytes.length > room ? bytes.subarray(0, Math.max(0, room)) : bytes;
    this.stdoutSent += allowed.length;
    this.transport.send('stdout', allowed);
    if (allowed.length < bytes.length) {
      this.stdoutLimitHit = true;
      throw new StdoutLimitReached();
    }
  };

  readonly stderr = (bytes: Uint8Array): void => {
    this.transport.send('stderr', bytes);
  };
}

/** Output posted to the main thread in pieces, each waited for until the window has room. */
export class PortOutput implements OutputTransport {
  constructor(
    private readonly post: (message: WorkerMessage, transfer: ArrayBuffer[]) => void,
    private readonly control: ControlBlock,
    private readonly runId: number,
    private readonly flow: OutputFlow,
  ) {}

  send(type: 'stdout' | 'stderr', bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length; at += PIECE_BYTES) {
      const piece = bytes.slice(at, Math.min(bytes.length, at + PIECE_BYTES));
      this.waitForRoom(piece.length);
      this.flow.posted = (this.flow.posted + piece.length) | 0;
      this.post({ type, runId: this.runId, bytes: piece }, [piece.buffer]);
    }
  }

  private waitForRoom(bytes: number): void {
    for (;;) {
      const acked = Atomics.load(this.control.i32, OUTPUT_ACKED);
      if (((this.flow.posted - acked) | 0) + bytes <= OUTPUT_WINDOW) return;
      Atomics.wait(this.control.i32, OUTPUT_ACKED, acked);
    }
  }
}
