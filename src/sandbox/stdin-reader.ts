/**
 * The guest's stdin, inside the worker: chunks arrive on a MessagePort that nobody listens to; the
 * worker takes them with receiveMessageOnPort and, while none is there, sleeps in Atomics.wait on a
 * sequence counter the main thread bumps after each post. Waiting costs no CPU, and a terminate()
 * from the main thread ends the wait.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { StdinSource } from '../wasi/types.js';
import { STDIN_SEQ, type ControlBlock } from './control-block.js';
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
  ) {
    // Drops what an earlier run on this worker left unread, so it is not held until some later read.
    this.drain();
  }

  read(max: number): Uint8Array {
    while (this.buffered === 0 && !this.ended) this.waitForMessage(Infinity);
    if (this.buffered === 0 || max <= 0) return EMPTY;
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

  /** Takes every message already posted; drops those left over from earlier runs. */
  private drain(): void {
    for (;;) {
      const received = receiveMessageOnPort(this.port);
      if (!received) return;
      const message = received.message as StdinMessage;
      if (message.runId !== this.runId || this.ended) continue;
      if ('eof' in message) this.ended = true;
      else if (message.bytes.length > 0) {
        this.chunks.push(message.bytes);
        this.buffered += message.bytes.length;
      }
    }
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
