/** Keeps the last `capacity` bytes of a stream without holding the rest. */
export class ByteTail {
  /** Allocated on the first push: most runs write nothing to stderr. */
  private buffer: Uint8Array | null = null;
  private readonly size: number;
  /** Where the next byte goes. */
  private end = 0;
  private filled = 0;

  constructor(readonly capacity: number) {
    this.size = Math.max(0, Math.floor(capacity));
  }

  push(chunk: Uint8Array): void {
    const cap = this.size;
    if (cap === 0 || chunk.length === 0) return;
    const buffer = (this.buffer ??= new Uint8Array(cap));
    const kept = chunk.length > cap ? chunk.subarray(chunk.length - cap) : chunk;
    const first = Math.min(kept.length, cap - this.end);
    buffer.set(kept.subarray(0, first), this.end);
    buffer.set(kept.subarray(first), 0);
    this.end = (this.end + kept.length) % cap;
    this.filled = Math.min(cap, this.filled + kept.length);
  }

  /** The kept bytes, oldest first (a copy). */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.filled);
    const buffer = this.buffer;
    if (!buffer || this.filled === 0) return out;
    const start = (this.end - this.filled + buffer.length) % buffer.length;
    const first = Math.min(this.filled, buffer.length - start);
    out.set(buffer.subarray(start, start + first), 0);
    out.set(buffer.subarray(0, this.filled - first), first);
    return out;
  }
}

/**
 * A tail as text: the bytes decoded as UTF-8 after the continuation bytes of a character cut at the tail's
 * start are dropped, so the text is a suffix of what was written (when that was UTF-8) and no longer than
 * the tail, never starting with a replacement character the guest did not write.
 */
export function tailText(tail: Uint8Array): string {
  let start = 0;
  while (start < Math.min(3, tail.length) && (tail[start] & 0xc0) === 0x80) start += 1;
  return Buffer.from(tail.buffer, tail.byteOffset + start, tail.byteLength - start).toString('utf8');
}
