/** LEB128 and vector encoding for the few places that write module bytes (the memory rewrite). */

export function encodeU32(value: number): number[] {
  const out: number[] = [];
  let rest = value >>> 0;
  do {
    let byte = rest & 0x7f;
    rest >>>= 7;
    if (rest !== 0) byte |= 0x80;
    out.push(byte);
  } while (rest !== 0);
  return out;
}

export function encodeS32(value: number): number[] {
  const out: number[] = [];
  let rest = value | 0;
  for (;;) {
    const byte = rest & 0x7f;
    rest >>= 7;
    const done = (rest === 0 && (byte & 0x40) === 0) || (rest === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

export function encodeName(name: string): number[] {
  const utf8 = new TextEncoder().encode(name);
  return [...encodeU32(utf8.length), ...utf8];
}

/** Joins byte chunks into one array. */
export function concatBytes(parts: ReadonlyArray<Uint8Array | readonly number[]>): Uint8Array<ArrayBuffer> {
  const total = parts.reduce((sum, p) => sum + p.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** A section: its id, its content size, its content. */
export function encodeSection(id: number, content: Uint8Array): Uint8Array<ArrayBuffer> {
  return concatBytes([[id, ...encodeU32(content.length)], content]);
}

/**
 * An output buffer that grows by doubling: the rewrite writes a module of tens of megabytes through it
 * without keeping a chunk object per rewritten instruction.
 */
export class ByteWriter {
  private buffer = new Uint8Array(1024);
  private used = 0;

  get length(): number {
    return this.used;
  }

  write(bytes: ArrayLike<number>): void {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
  }

  u32(value: number): void {
    this.write(encodeU32(value));
  }

  clear(): void {
    this.used = 0;
  }

  /** The bytes written so far (a view, valid until the next write). */
  view(): Uint8Array {
    return this.buffer.subarray(0, this.used);
  }

  private reserve(more: number): void {
    if (this.used + more <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.used + more) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.used));
    this.buffer = next;
  }
}
