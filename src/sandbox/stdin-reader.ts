/**
 * The guest's stdin, inside the worker: what was written before the run started comes with the run
 * message; later chunks arrive on a MessagePort that nobody listens to; the worker takes them with
 * receiveMessageOnPort and, while none is there, sleeps in Atomics.wait on a sequence counter the main
 * thread bumps after each post. End of file is a flag in the control block, set by the main thread
 * after its last post for the run. Waiting costs no CPU, and a terminate() from the main thread ends
 * the wait.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { StdinSource } from '../wasi/index.js';
import { STDIN_SEQ, isStdinClosed, type ControlBlock } from './control-block.js';
import type { StdinMessage } from './protocol.js';

const EMPTY = new Uint8Array(0);

export class StdinReader implements StdinSource {
  private readonly chunks: Uint8Array[] = [];
  /** Bytes of chunks[0] already read. */
  private offset = 0;
  private buffered = 0;
  private ended = false;

  constructor(
    private readonly port: MessagePort,
    private readonly control: ControlBlock,
    private readonly runId: number,
    initial: Uint8Array | null,
  ) {
    // The bytes of the run message come first: anything on the port for this run was written after them.
    if (initial && initial.length > 0) this.append(initial);
    // Drops what an earlier run on this worker left unread, so it is not held until some later read.
    this.drain();
  }

  /** End of file from now on, once what is buffered is read (the worker saw the conversation's last answer). */
  end(): void {
    this.ended = true;
  }

  read(max: number): Uint8Array {
    while (this.buffered === 0 && !this.ended) this.waitForMessage(Infinity);
    if (this.buffered === 0 || max <= 0) return EMPTY;
    const first = this.chunks[0];
    if (this.offset === 0 && first.length <= max) {
      // The common case (a whole request line in one read): hand the chunk over without copying.
      this.chunks.shift();
      this.buffered -= first.length;
      return first;
    }
    const out = new Uint8Array(Math.min(max, this.buffered));
    let filled = 0;
    while (filled < out.length) {
      const chunk = this.chunks[0];
      const take = Math.min(chunk.length - this.offset, out.length - filled);
      out.set(chunk.subarray(this.offset, this.offset + take), filled);
      filled += take;
      this.offset += take;
      if (this.offset === chunk.length) {
        this.chunks.shift();
        this.offset = 0;
      }
    }
    this.buffered -= filled;
    return out;
  }

  waitReadable(timeoutMs: number): boolean {
    if (this.readable()) return true;
    const deadline = Number.isFinite(timeoutMs) ? Date.now() + Math.max(0, timeoutMs) : Infinity;
    for (;;) {
      if (this.readable()) return true;
      const left = deadline - Date.now();
      if (left <= 0) return this.drain(), this.readable();
      this.waitForMessage(left);
    }
  }

  private readable(): boolean {
    return this.buffered > 0 || this.ended;
  }

  private append(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.buffered += bytes.length;
  }

  /** Takes every message already posted; drops those left over from earlier runs. */
  private drain(): void {
    if (this.ended) return;
    // Read the flag BEFORE taking messages: the main thread sets it only after posting this run's last
    // chunk, so when it is seen set here, every chunk is already on the port and is taken below.
    const closed = isStdinClosed(this.control, this.runId);
    for (;;) {
      const received = receiveMessageOnPort(this.port);
      if (!received) break;
      const message = received.message as StdinMessage;
      if (message.runId !== this.runId) continue;
      if (message.bytes.length > 0) this.append(message.bytes);
    }
    if (closed) this.ended = true;
  }

  private waitForMessage(timeoutMs: number): void {
    // Read the counter before looking at the port: a post that lands in between changes it, so the
    // wait returns at once instead of missing the message.
    const seen = Atomics.load(this.control.i32, STDIN_SEQ);
    this.drain();
    if (this.readable()) return;
    Atomics.wait(this.control.i32, STDIN_SEQ, seen, timeoutMs);
    this.drain();
  }
}
