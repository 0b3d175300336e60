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
