/**
 * The first eight bytes: the magic `\0asm`, then a version and a layer. A core module has version 1,
 * layer 0 (`01 00 00 00`); a component has layer 1 (bytes 6–7 `01 00`).
 */
export type HeaderKind = 'module' | 'component' | 'not-wasm' | 'truncated' | 'unknown-version';

export const MAGIC = [0x00, 0x61, 0x73, 0x6d] as const;
export const HEADER_SIZE = 8;

export interface Header {
  kind: HeaderKind;
  version?: number;
}

export function readHeader(bytes: Uint8Array): Header {
  if (bytes.length < MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b)) return { kind: 'not-wasm' };
  if (bytes.length < HEADER_SIZE) return { kind: 'truncated' };
  const version = bytes[4] | (bytes[5] << 8);
  const layer = bytes[6] | (bytes[7] << 8);
  if (layer === 1) return { kind: 'component', version };
  if (layer !== 0 || version !== 1) return { kind: 'unknown-version', version };
  return { kind: 'module', version };
}

/** A short guess at what a non-WebAssembly file is, so the message can say what to do. */
export function describeNonWasm(bytes: Uint8Array): string {
  if (bytes.length === 0) return 'the file is empty';
  // Skip leading whitespace and WAT comments (`;; line`, `(; block ;)`) before looking for `(module`.
  const head = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, 4096))
    .replace(/^(?:\s|;;[^\n]*(?:\n|$)|\(;[\s\S]*?;\))*/, '');
  if (head.startsWith('(module') || head.startsWith('(component')) {
    return 'it is WebAssembly text (WAT), not a binary; compile it first (for example with wat2wasm)';
  }
  if (bytes[0] === 0x7f && bytes[1] === 0x45 && bytes[2] === 0x4c && bytes[3] === 0x46) {
    return 'it is a native ELF executable, not WebAssembly; build for wasm32-wasip1';
  }
  if (bytes[0] === 0x50 && bytes[1] === 0x4b) return 'it is a zip archive; pass the module.wasm inside it';
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'it is gzip-compressed; decompress it first';
  if (head.startsWith('{')) return 'it looks like JSON; pass the .wasm module or the package directory';
  const shown = [...bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  return `it starts with the bytes ${shown}, not the WebAssembly magic 00 61 73 6d`;
}
