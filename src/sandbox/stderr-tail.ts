/** Keeps the last `capacity` bytes of a stream without holding the rest. */
export class ByteTail {
  private readonly buffer: Uint8Array;
  /** Where the next byte goes. */
  private end = 0;
  private filled = 0;

  constructor(readonly capacity: number) {
    this.buffer = new Uint8Array(Math.max(0, Math.floor(capacity)));
  }

  push(chunk: Uint8Array): void {
    const cap = this.buffer.length;
    if (cap === 0 || chunk.length === 0) return;
    const kept = chunk.length > cap ? chunk.subarray(chunk.length - cap) : chunk;
    const first = Math.min(kept.length, cap - this.end);
    this.buffer.set(kept.subarray(0, first), this.end);
    this.buffer.set(kept.subarray(first), 0);
    this.end = (this.end + kept.length) % cap;
    this.filled = Math.min(cap, this.filled + kept.length);
  }

  /** The kept bytes, oldest first (a copy). */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.filled);
    const start = (this.end - this.filled + this.buffer.length) % Math.max(1, this.buffer.length);
    const first = Math.min(this.filled, this.buffer.length - start);
    out.set(this.buffer.subarray(start, start + first), 0);
    out.set(this.buffer.subarray(0, this.filled - first), first);
    return out;
  }
}
