/**
 * The guest's two streams: stdin read a line at a time (split on bytes, so a UTF-8 character that straddles
 * two reads stays whole), and stdout written one whole line per answer. Stderr is free for logs.
 */
import { fd_read, fd_write } from "bindings/wasi_snapshot_preview1";

const CHUNK: i32 = 65536;
const chunk = new ArrayBuffer(CHUNK);
const iov = memory.data(16);
let pending = new Uint8Array(0);
let pendingStart: i32 = 0;
let ended = false;

/** The next line of stdin without its `\n`, or null at end of file. */
export function readLine(): string | null {
  while (true) {
    for (let i = pendingStart; i < pending.length; i++) {
      if (pending[i] == 0x0a) {
        const line = String.UTF8.decodeUnsafe(pending.dataStart + <usize>pendingStart, <usize>(i - pendingStart));
        pendingStart = i + 1;
        return line;
      }
    }
    if (ended) {
      if (pendingStart < pending.length) {
        const rest = String.UTF8.decodeUnsafe(pending.dataStart + <usize>pendingStart, <usize>(pending.length - pendingStart));
        pendingStart = pending.length;
        return rest;
      }
      return null;
    }
    const n = readChunk();
    if (n <= 0) {
      ended = true;
      continue;
    }
    // Keep the unread tail and append the new bytes.
    const tail = pending.length - pendingStart;
    const next = new Uint8Array(tail + n);
    if (tail > 0) memory.copy(next.dataStart, pending.dataStart + <usize>pendingStart, <usize>tail);
    memory.copy(next.dataStart + <usize>tail, changetype<usize>(chunk), <usize>n);
    pending = next;
    pendingStart = 0;
  }
}

function readChunk(): i32 {
  store<usize>(iov, changetype<usize>(chunk));
  store<usize>(iov, <usize>CHUNK, sizeof<usize>());
  const err = fd_read(0, iov, 1, iov + 2 * sizeof<usize>());
  if (err != 0) return -1;
  return <i32>load<usize>(iov, 2 * sizeof<usize>());
}

function writeAll(fd: u32, data: ArrayBuffer): void {
  let offset: usize = 0;
  const total = <usize>data.byteLength;
  while (offset < total) {
    store<usize>(iov, changetype<usize>(data) + offset);
    store<usize>(iov, total - offset, sizeof<usize>());
    const err = fd_write(fd, iov, 1, iov + 2 * sizeof<usize>());
    if (err != 0) return;
    const written = load<usize>(iov, 2 * sizeof<usize>());
    if (written == 0) return;
    offset += written;
  }
}

/** Writes one protocol line (the text plus `\n`) to stdout. */
export function writeLine(text: string): void {
  writeAll(1, String.UTF8.encode(text + "\n"));
}

/** Writes a line to stderr: Subako keeps its last 4 KiB, shown when a call crashes. */
export function log(text: string): void {
  writeAll(2, String.UTF8.encode(text + "\n"));
}
