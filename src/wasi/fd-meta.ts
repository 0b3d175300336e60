/**
 * Descriptor state and metadata: fdstat, filestat, sizes and times, sync, advise, allocate, close,
 * renumber and the preopen queries (fd_prestat_get / fd_prestat_dir_name).
 */
import { fdatasyncSync, fstatSync, fsyncSync, ftruncateSync, futimesSync } from 'node:fs';
import { Errno, fail } from './errno.js';
import { ADVICE_MAX, FDFLAGS_ALL, FDSTAT_SIZE, FILESTAT_SIZE, Filetype, PREOPENTYPE_DIR, PRESTAT_SIZE } from './constants.js';
import type { Descriptor } from './descriptors.js';
import type { FunctionFamily, WasiContext } from './context.js';
import { requestedTimes, toSafeNumber, writeFilestat } from './stat.js';

/** Every defined right: bits a guest passes beyond these are ignored. */
const RIGHTS_MASK = (1 << 30) - 1;

function filetypeOfDescriptor(descriptor: Descriptor): Filetype {
  if (descriptor.kind === 'stdio') return Filetype.CHARACTER_DEVICE;
  if (descriptor.kind === 'dir') return Filetype.DIRECTORY;
  return descriptor.filetype;
}

function hostFdOf(descriptor: Descriptor): number | undefined {
  if (descriptor.kind === 'stdio') return undefined;
  return descriptor.kind === 'dir' ? descriptor.anchor.fd : descriptor.hostFd;
}

export function fdMetaFunctions(ctx: WasiContext): FunctionFamily {
  // `ctx.options` is read at call time: a reused host swaps it for each run.
  const { memory, table, clock } = ctx;

  return {
    fd_fdstat_get(fd: number, ptr: number): number {
      ptr >>>= 0;
      memory.check(ptr, FDSTAT_SIZE);
      const descriptor = table.get(fd);
      const view = memory.view;
      memory.u8.fill(0, ptr, ptr + FDSTAT_SIZE);
      view.setUint8(ptr, filetypeOfDescriptor(descriptor));
      view.setUint16(ptr + 2, descriptor.flags, true);
      view.setBigUint64(ptr + 8, BigInt(descriptor.rightsBase), true);
      view.setBigUint64(ptr + 16, BigInt(descriptor.rightsInheriting), true);
      return Errno.SUCCESS;
    },

    fd_fdstat_set_flags(fd: number, flags: number): number {
      const descriptor = table.get(fd);
      if (flags & ~FDFLAGS_ALL) return Errno.INVAL;
      descriptor.flags = flags;
      return Errno.SUCCESS;
    },

    /** Rights can only be dropped; asking for one the descriptor lacks is ENOTCAPABLE. */
    fd_fdstat_set_rights(fd: number, base: bigint, inheriting: bigint): number {
      const descriptor = table.get(fd);
      const newBase = Number(BigInt.asUintN(64, base) & BigInt(RIGHTS_MASK));
      const newInheriting = Number(BigInt.asUintN(64, inheriting) & BigInt(RIGHTS_MASK));
      if ((newBase & ~descriptor.rightsBase) !== 0) return Errno.NOTCAPABLE;
      if ((newInheriting & ~descriptor.rightsInheriting) !== 0) return Errno.NOTCAPABLE;
      descriptor.rightsBase = newBase;
      descriptor.rightsInheriting = newInheriting;
      return Errno.SUCCESS;
    },

    fd_filestat_get(fd: number, ptr: number): number {
      ptr >>>= 0;
      memory.check(ptr, FILESTAT_SIZE);
      const hostFd = hostFdOf(table.get(fd));
      writeFilestat(memory, ptr, hostFd === undefined ? undefined : fstatSync(hostFd, { bigint: true }));
      return Errno.SUCCESS;
    },

    /** Growth counts against the write budget (shrinking is free); EROFS under a read-only preopen. */
    fd_filestat_set_size(fd: number, size: bigint): number {
      const descriptor = table.get(fd);
      if (descriptor.kind !== 'file') return descriptor.kind === 'dir' ? Errno.ISDIR : Errno.INVAL;
      if (descriptor.readOnly) return Errno.ROFS;
      const target = toSafeNumber(size) ?? fail(Errno.FBIG);
      const current = fstatSync(descriptor.hostFd).size;
      if (target > current && !ctx.options.writeBudget.tryConsume(target - current)) return Errno.DQUOT;
      ftruncateSync(descriptor.hostFd, target);
      return Errno.SUCCESS;
    },

    fd_filestat_set_times(fd: number, atim: bigint, mtim: bigint, fstflags: number): number {
      const descriptor = table.get(fd);
      if (descriptor.kind === 'stdio') return Errno.BADF;
      if (descriptor.readOnly) return Errno.ROFS;
      const hostFd = hostFdOf(descriptor) as number;
      const times = requestedTimes(fstflags, atim, mtim, clock.realtime(),
        () => fstatSync(hostFd, { bigint: true }));
      if (times === undefined) return Errno.INVAL;
      futimesSync(hostFd, times[0], times[1]);
      return Errno.SUCCESS;
    },

    fd_advise(fd: number, _offset: bigint, _len: bigint, advice: number): number {
      const descriptor = table.get(fd);
      if (advice < 0 || advice > ADVICE_MAX) return Errno.INVAL;
      if (descriptor.kind === 'stdio') return Errno.SPIPE;
      if (descriptor.kind === 'dir') return Errno.BADF;
      return Errno.SUCCESS; // advice only; Node offers no posix_fadvise and nothing depends on it
    },

    /** Preallocation is refused outright: it would bypass the write budget's accounting of real bytes. */
    /** Preallocation is not offered (ENOTSUP), but a directory is told apart as other runtimes do. */
    fd_allocate(fd: number): number {
      return table.get(fd).kind === 'dir' ? Errno.ISDIR : Errno.NOTSUP;
    },

    fd_close(fd: number): number {
      table.close(fd);
      return Errno.SUCCESS;
    },

    fd_sync(fd: number): number {
      const hostFd = hostFdOf(table.get(fd));
      if (hostFd === undefined) return Errno.INVAL;
      fsyncSync(hostFd);
      return Errno.SUCCESS;
    },

    fd_datasync(fd: number): number {
      const hostFd = hostFdOf(table.get(fd));
      if (hostFd === undefined) return Errno.INVAL;
      fdatasyncSync(hostFd);
      return Errno.SUCCESS;
    },

    fd_renumber(from: number, to: number): number {
      table.renumber(from, to);
      return Errno.SUCCESS;
    },

    fd_prestat_get(fd: number, ptr: number): number {
      ptr >>>= 0;
      memory.check(ptr, PRESTAT_SIZE);
      const descriptor = table.get(fd);
      if (descriptor.kind !== 'dir' || descriptor.preopenName === undefined) return Errno.BADF;
      memory.u8.fill(0, ptr, ptr + PRESTAT_SIZE);
      memory.view.setUint8(ptr, PREOPENTYPE_DIR);
      memory.view.setUint32(ptr + 4, descriptor.preopenName.length, true);
      return Errno.SUCCESS;
    },

    fd_prestat_dir_name(fd: number, ptr: number, len: number): number {
      const descriptor = table.get(fd);
      if (descriptor.kind !== 'dir' || descriptor.preopenName === undefined) return Errno.BADF;
      if ((len >>> 0) < descriptor.preopenName.length) return Errno.NAMETOOLONG;
      memory.write(ptr >>> 0, descriptor.preopenName);
      return Errno.SUCCESS;
    },
  };
}
