/**
 * A bounds-checked cursor over module bytes. Every read that would pass the end, or a LEB128 number
 * that is too long or too large, throws a `DecodeError` carrying the offset; the parser catches it and
 * turns it into a `format.malformed` problem, so nothing a module holds can escape as an exception.
 */
export class DecodeError extends Error {
  readonly offset: number;

  constructor(message: string, offset: number) {
    super(message);
    this.name = 'DecodeError';
    this.offset = offset;
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export class ByteReader {
  readonly bytes: Uint8Array;
  pos: number;
  /** Reads may not pass this offset (a section's or a body's end). */
  end: number;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = start;
    this.end = Math.min(end, bytes.length);
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  atEnd(): boolean {
    return this.pos >= this.end;
  }

  fail(message: string, offset = this.pos): never {
    throw new DecodeError(message, offset);
  }

  u8(): number {
    if (this.pos >= this.end) this.fail('unexpected end of data');
    return this.bytes[this.pos++];
  }

  peekU8(): number {
    if (this.pos >= this.end) this.fail('unexpected end of data');
    return this.bytes[this.pos];
  }

  skip(count: number): void {
    if (count < 0 || count > this.remaining) this.fail(`expected ${count} more bytes, ${this.remaining} left`);
    this.pos += count;
  }

  take(count: number): Uint8Array {
    const start = this.pos;
    this.skip(count);
    return this.bytes.subarray(start, start + count);
  }

  /** Unsigned LEB128 of at most 32 bits (5 bytes), as a non-negative number. */
  u32(): number {
    const start = this.pos;
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      const byte = this.u8();
      if (i === 4 && (byte & 0x70) !== 0) this.fail('unsigned 32-bit number too large', start);
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
    }
    return this.fail('unsigned 32-bit number longer than 5 bytes', start);
  }

  /** Signed LEB128 of at most 32 bits (the most common immediate: kept to plain number arithmetic). */
  s32(): number {
    const start = this.pos;
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      const byte = this.u8();
      result |= (byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) === 0) {
        // In the fifth byte, the sign bit and the three unused bits above it must agree.
        if (i === 4 && ((byte & 0x78) !== 0 && (byte & 0x78) !== 0x78)) this.fail('signed 32-bit number too large', start);
        if (shift < 32 && (byte & 0x40) !== 0) result |= -1 << shift;
        return result | 0;
      }
    }
    return this.fail('signed 32-bit number longer than 5 bytes', start);
  }

  /** Signed LEB128 of at most 33 bits (block types): negative values are one-byte type codes. */
  s33(): number {
    return Number(this.signed(33));
  }

  /** Signed LEB128 of at most 64 bits; only skipped or compared, so a bigint is fine. */
  s64(): bigint {
    return this.signed(64);
  }

  /** Unsigned LEB128 of at most 64 bits (memory64 offsets and limits). */
  u64(): bigint {
    const start = this.pos;
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      const byte = this.u8();
      if (i === 9 && (byte & 0x7e) !== 0) this.fail('unsigned 64-bit number too large', start);
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
    return this.fail('unsigned 64-bit number longer than 10 bytes', start);
  }

  private signed(bits: number): bigint {
    const start = this.pos;
    const maxBytes = Math.ceil(bits / 7);
    let result = 0n;
    let shift = 0;
    for (let i = 0; i < maxBytes; i++) {
      const byte = this.u8();
      result |= BigInt(byte & 0x7f) << BigInt(shift);
      shift += 7;
      if ((byte & 0x80) === 0) {
        if (i === maxBytes - 1) {
          // The unused high bits of the last byte must all copy the sign bit.
          const used = bits - 7 * (maxBytes - 1);
          const rest = byte & 0x7f;
          const signAndUnused = rest >> (used - 1);
          const allOnes = (1 << (8 - used)) - 1;
          if (signAndUnused !== 0 && signAndUnused !== allOnes) this.fail(`signed ${bits}-bit number too large`, start);
        }
        if (byte & 0x40) result -= 1n << BigInt(shift);
        return result;
      }
    }
    return this.fail(`signed ${bits}-bit number longer than ${maxBytes} bytes`, start);
  }

  /** A vector count, refused when it could not fit in what is left (each element takes a byte at least). */
  count(what: string): number {
    const start = this.pos;
    const n = this.u32();
    if (n > this.remaining) this.fail(`${what} count ${n} is larger than the ${this.remaining} bytes left`, start);
    return n;
  }

  /** A length-prefixed UTF-8 name. */
  name(): string {
    const start = this.pos;
    const length = this.u32();
    const raw = this.take(length);
    try {
      return UTF8.decode(raw);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // expected: a fatal TextDecoder throws TypeError on bytes that are not UTF-8
      return this.fail('a name is not valid UTF-8', start);
    }
  }
}
