/**
 * Reading, writing and positioning: fd_read, fd_write, fd_pread, fd_pwrite, fd_seek, fd_tell.
 * Files use their host fd with an explicit offset kept in the descriptor (Node has no lseek).
 * Stdin reads block in the caller's StdinSource; stdout and stderr writes are copied and handed to the
 * caller's callbacks synchronously. Writes to files draw on the run's write budget (see `charge`).
 */
import { fdatasyncSync, fstatSync, fsyncSync, readvSync, writevSync } from 'node:fs';
import { Errno, fail } from './errno.js';
import { Fdflags, Right, Whence } from './constants.js';
import type { Descriptor, FileDescriptor, StdioDescriptor } from './descriptors.js';
import { callCaller, type FunctionFamily, type WasiContext } from './context.js';
import { toSafeNumber } from './stat.js';

export function fdIoFunctions(ctx: WasiContext): FunctionFamily {
  // `ctx.options` is read at call time: a reused host swaps it for each run.
  const { memory, table } = ctx;

  /** A descriptor that supports positioned I/O: files only (stdio is a pipe, a directory is not data). */
  function seekable(descriptor: Descriptor): FileDescriptor {
    if (descriptor.kind === 'file') return descriptor;
    return fail(descriptor.kind === 'stdio' ? Errno.SPIPE : Errno.ISDIR);
  }

  function readable(fd: number): Descriptor {
    const descriptor = table.get(fd);
    if (descriptor.kind === 'file' && (descriptor.rightsBase & Right.FD_READ) === 0) fail(Errno.BADF);
    return descriptor;
  }

  function writable(fd: number): Descriptor {
    const descriptor = table.get(fd);
    if (descriptor.kind === 'dir') fail(Errno.BADF);
    if (descriptor.kind === 'file' && (descriptor.rightsBase & Right.FD_WRITE) === 0) fail(Errno.BADF);
    return descriptor;
  }

  /**
   * Takes a file write from the write budget, or fails with EDQUOT and writes nothing. What counts:
   * the bytes written (overwriting counts too) plus any gap the write leaves between the current end
   * of file and `position` (so sparse files cannot dodge the budget). A short write still counts whole.
   */
  function charge(file: FileDescriptor, position: number, length: number): void {
    let cost = length;
    if (position > 0) {
      const size = fstatSync(file.hostFd).size;
      if (position > size) cost += position - size;
    }
    if (!ctx.options.writeBudget.tryConsume(cost)) fail(Errno.DQUOT);
  }

  function afterWrite(file: FileDescriptor): void {
    if (file.flags & Fdflags.SYNC) fsyncSync(file.hostFd);
    else if (file.flags & (Fdflags.DSYNC | Fdflags.RSYNC)) fdatasyncSync(file.hostFd);
  }

  /**
   * Fills the buffers from stdin: blocks only while nothing has been read yet, then takes what is
   * already buffered (so an iovec list whose first entry is empty, as wasi-libc's getline passes,
   * still gets its data). Returns 0 only at end of file.
   */
  function readStdin(descriptor: StdioDescriptor, buffers: Uint8Array[]): number {
    const stdin = ctx.options.stdin;
    if ((descriptor.flags & Fdflags.NONBLOCK) && !callCaller(() => stdin.waitReadable(0))) fail(Errno.AGAIN);
    let total = 0;
    for (const buffer of buffers) {
      let filled = 0;
      while (filled < buffer.length) {
        if (total + filled > 0 && !callCaller(() => stdin.waitReadable(0))) return total + filled;
        const chunk = callCaller(() => stdin.read(buffer.length - filled));
        if (chunk.length === 0) return total + filled; // end of file
        const taken = chunk.length <= buffer.length - filled ? chunk : chunk.subarray(0, buffer.length - filled);
        buffer.set(taken, filled);
        filled += taken.length;
      }
      total += filled;
    }
    return total;
  }

  /** Copies the guest's bytes (the callee may keep them) and hands them to stdout or stderr. */
  function writeStdio(stream: 1 | 2, buffers: Uint8Array[]): number {
    let total = 0;
    for (const buffer of buffers) total += buffer.length;
    if (total === 0) return 0;
    let bytes: Uint8Array;
    if (buffers.length === 1) bytes = buffers[0].slice();
    else {
      bytes = new Uint8Array(total);
      let offset = 0;
      for (const buffer of buffers) {
        bytes.set(buffer, offset);
        offset += buffer.length;
      }
    }
    const sink = stream === 1 ? ctx.options.stdout : ctx.options.stderr;
    callCaller(() => sink(bytes));
    return total;
  }

  function total(buffers: Uint8Array[]): number {
    let sum = 0;
    for (const buffer of buffers) sum += buffer.length;
    return sum;
  }

  function writeFile(file: FileDescriptor, buffers: Uint8Array[], position: number): number {
    const length = total(buffers);
    if (length === 0) return 0;
    charge(file, position, length);
    const written = writevSync(file.hostFd, buffers, position);
    afterWrite(file);
    return written;
  }

  return {
    fd_read(fd: number, iovs: number, iovsLen: number, nreadPtr: number): number {
      memory.check(nreadPtr >>> 0, 4);
      const descriptor = readable(fd);
      const buffers = memory.iovecs(iovs >>> 0, iovsLen >>> 0);
      let nread: number;
      if (descriptor.kind === 'stdio') {
        if (descriptor.stream !== 0) return Errno.BADF;
        nread = readStdin(descriptor, buffers);
      } else if (descriptor.kind === 'dir') {
        return Errno.ISDIR;
      } else {
        nread = readvSync(descriptor.hostFd, buffers, descriptor.position);
        descriptor.position += nread;
      }
      memory.setU32(nreadPtr >>> 0, nread);
      return Errno.SUCCESS;
    },

    fd_write(fd: number, iovs: number, iovsLen: number, nwrittenPtr: number): number {
      memory.check(nwrittenPtr >>> 0, 4);
      const descriptor = writable(fd);
      const buffers = memory.iovecs(iovs >>> 0, iovsLen >>> 0);
      let written: number;
      if (descriptor.kind === 'stdio') {
        if (descriptor.stream === 0) return Errno.BADF;
        written = writeStdio(descriptor.stream, buffers);
      } else {
        const file = descriptor as FileDescriptor;
        if (file.flags & Fdflags.APPEND) file.position = fstatSync(file.hostFd).size;
        written = writeFile(file, buffers, file.position);
        file.position += written;
      }
      memory.setU32(nwrittenPtr >>> 0, written);
      return Errno.SUCCESS;
    },

    fd_pread(fd: number, iovs: number, iovsLen: number, offset: bigint, nreadPtr: number): number {
      memory.check(nreadPtr >>> 0, 4);
      const file = seekable(readable(fd));
      const position = toSafeNumber(offset) ?? fail(Errno.INVAL);
      const buffers = memory.iovecs(iovs >>> 0, iovsLen >>> 0);
      memory.setU32(nreadPtr >>> 0, readvSync(file.hostFd, buffers, position));
      return Errno.SUCCESS;
    },

    fd_pwrite(fd: number, iovs: number, iovsLen: number, offset: bigint, nwrittenPtr: number): number {
      memory.check(nwrittenPtr >>> 0, 4);
      const file = seekable(writable(fd));
      const position = toSafeNumber(offset) ?? fail(Errno.INVAL);
      const buffers = memory.iovecs(iovs >>> 0, iovsLen >>> 0);
      memory.setU32(nwrittenPtr >>> 0, writeFile(file, buffers, position));
      return Errno.SUCCESS;
    },

    fd_seek(fd: number, offset: bigint, whence: number, newOffsetPtr: number): number {
      memory.check(newOffsetPtr >>> 0, 8);
      const descriptor = table.get(fd);
      if (descriptor.kind === 'dir') return Errno.BADF;
      const file = seekable(descriptor);
      let base: bigint;
      if (whence === Whence.SET) base = 0n;
      else if (whence === Whence.CUR) base = BigInt(file.position);
      else if (whence === Whence.END) base = BigInt(fstatSync(file.hostFd).size);
      else return Errno.INVAL;
      const target = toSafeNumber(base + offset) ?? fail(Errno.INVAL);
      file.position = target;
      memory.setU64(newOffsetPtr >>> 0, BigInt(target));
      return Errno.SUCCESS;
    },

    fd_tell(fd: number, offsetPtr: number): number {
      memory.check(offsetPtr >>> 0, 8);
      const descriptor = table.get(fd);
      if (descriptor.kind === 'dir') return Errno.BADF;
      memory.setU64(offsetPtr >>> 0, BigInt(seekable(descriptor).position));
      return Errno.SUCCESS;
    },
  };
}
