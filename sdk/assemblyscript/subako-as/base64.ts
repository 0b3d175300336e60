/** Base64 (RFC 4648, with padding): images travel inline as base64 text. */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

export namespace base64 {
  export function encode(bytes: Uint8Array): string {
    const out = new Uint8Array(((bytes.length + 2) / 3) * 4);
    let o = 0;
    let i = 0;
    for (; i + 2 < bytes.length; i += 3) {
      const n = (<u32>bytes[i] << 16) | (<u32>bytes[i + 1] << 8) | <u32>bytes[i + 2];
      out[o++] = <u8>ALPHABET.charCodeAt((n >> 18) & 63);
      out[o++] = <u8>ALPHABET.charCodeAt((n >> 12) & 63);
      out[o++] = <u8>ALPHABET.charCodeAt((n >> 6) & 63);
      out[o++] = <u8>ALPHABET.charCodeAt(n & 63);
    }
    const left = bytes.length - i;
    if (left > 0) {
      const n = (<u32>bytes[i] << 16) | (left == 2 ? <u32>bytes[i + 1] << 8 : 0);
      out[o++] = <u8>ALPHABET.charCodeAt((n >> 18) & 63);
      out[o++] = <u8>ALPHABET.charCodeAt((n >> 12) & 63);
      out[o++] = left == 2 ? <u8>ALPHABET.charCodeAt((n >> 6) & 63) : 0x3d;
      out[o++] = 0x3d;
    }
    return String.UTF8.decodeUnsafe(out.dataStart, <usize>o);
  }

  function sextet(c: i32): i32 {
    if (c >= 0x41 && c <= 0x5a) return c - 0x41;
    if (c >= 0x61 && c <= 0x7a) return c - 0x61 + 26;
    if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
    if (c == 0x2b || c == 0x2d) return 62; // + (and - of the URL alphabet)
    if (c == 0x2f || c == 0x5f) return 63; // / (and _)
    return -1;
  }

  /** Decodes base64 (padding optional, whitespace ignored); null when the text is not base64. */
  export function decode(text: string): Uint8Array | null {
    const out = new Uint8Array((text.length * 3) / 4 + 3);
    let o = 0;
    let acc: u32 = 0;
    let bits = 0;
    let padding = false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09) continue;
      if (c == 0x3d) {
        padding = true;
        continue;
      }
      const v = sextet(c);
      if (v < 0 || padding) return null;
      acc = (acc << 6) | <u32>v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[o++] = <u8>((acc >> bits) & 0xff);
      }
    }
    return out.slice(0, o);
  }
}
