/**
 * Views on the guest's linear memory. The memory's buffer is replaced when the guest grows it, so the
 * views are refreshed once at the start of every import (the guest cannot run, and so cannot grow
 * memory, while an import runs). Every access is bounds-checked: a bad pointer is EFAULT, never a throw.
 */
import { Errno, fail } from './errno.js';
import { IOVEC_SIZE } from './constants.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const NO_BYTES = new Uint8Array(0);
const NO_VIEW = new DataView(new ArrayBuffer(0));

export class GuestMemory {
  private memory: WebAssembly.Memory | undefined;
  private buffer: ArrayBuffer | undefined;
  u8 = NO_BYTES;
  view = NO_VIEW;

  bind(memory: WebAssembly.Memory): void {
    this.memory = memory;
    this.refresh();
  }

  /** Lets go of the guest's memory (the run is over): every access fails with EFAULT until the next bind. */
  unbind(): void {
    this.memory = undefined;
    this.buffer = undefined;
    this.u8 = NO_BYTES;
    this.view = NO_VIEW;
  }

  /** Re-reads the views if the guest grew its memory since the last import. */
  refresh(): void {
    const memory = this.memory;
    if (memory === undefined) return;
    const buffer = memory.buffer as ArrayBuffer;
    if (buffer === this.buffer) return;
    this.buffer = buffer;
    this.u8 = new Uint8Array(buffer);
    this.view = new DataView(buffer);
  }

  /** Fails with EFAULT unless [ptr, ptr+len) lies inside memory. `ptr` is an unsigned i32. */
  check(ptr: number, len: number): void {
    if (ptr + len > this.u8.length) fail(Errno.FAULT);
  }

  u32(ptr: number): number {
    this.check(ptr, 4);
    return this.view.getUint32(ptr, true);
  }

  u64(ptr: number): bigint {
    this.check(ptr, 8);
    return this.view.getBigUint64(ptr, true);
  }

  setU8(ptr: number, value: number): void {
    this.check(ptr, 1);
    this.view.setUint8(ptr, value);
  }

  setU16(ptr: number, value: number): void {
    this.check(ptr, 2);
    this.view.setUint16(ptr, value, true);
  }

  setU32(ptr: number, value: number): void {
    this.check(ptr, 4);
    this.view.setUint32(ptr, value, true);
  }

  setU64(ptr: number, value: bigint): void {
    this.check(ptr, 8);
    this.view.setBigUint64(ptr, value, true);
  }

  /** A view (not a copy) of guest bytes. */
  bytes(ptr: number, len: number): Uint8Array {
    this.check(ptr, len);
    return this.u8.subarray(ptr, ptr + len);
  }

  /** Copies host bytes into guest memory. */
  write(ptr: number, data: Uint8Array): void {
    this.check(ptr, data.length);
    this.u8.set(data, ptr);
  }

  /** A guest path or string: UTF-8 (EILSEQ otherwise), without NUL bytes (EINVAL). */
  string(ptr: number, len: number): string {
    const raw = this.bytes(ptr, len);
    if (raw.includes(0)) fail(Errno.INVAL);
    try {
      return utf8.decode(raw);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // expected: a fatal TextDecoder throws TypeError on bytes that are not UTF-8
      return fail(Errno.ILSEQ);
    }
  }

  /** The buffers of an iovec list, as views on guest memory (each one bounds-checked). */
  iovecs(ptr: number, count: number): Uint8Array[] {
    this.check(ptr, count * IOVEC_SIZE);
    const views: Uint8Array[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const base = ptr + i * IOVEC_SIZE;
      views[i] = this.bytes(this.view.getUint32(base, true), this.view.getUint32(base + 4, true));
    }
    return views;
  }
}
