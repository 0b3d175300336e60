/**
 * path_open: resolve under the directory descriptor (see resolver.ts), then open the final component
 * relative to its pinned parent with O_NOFOLLOW, so the kernel never follows a link we did not check.
 * Only regular files and directories are handed out; every host open carries O_NONBLOCK so that a
 * FIFO or device placed in a host directory can never block the worker.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync } from 'node:fs';
import { Errno, fail } from './errno.js';
import {
  DIR_READ_RIGHTS, DIR_WRITE_RIGHTS, FDFLAGS_ALL, FILE_READ_RIGHTS, FILE_WRITE_RIGHTS, Fdflags,
  LOOKUP_SYMLINK_FOLLOW, OFLAGS_ALL, Oflags, Right, WRITE_INTENT_RIGHTS,
} from './constants.js';
import type { DirDescriptor } from './descriptors.js';
import type { FunctionFamily, WasiContext } from './context.js';
import { at, release, resolveGuestPath } from './resolver.js';
import { filetypeOf } from './stat.js';

const RIGHTS_MASK = BigInt((1 << 30) - 1);

/**
 * The rights a new directory descriptor gets: never more than its parent could pass on. Under a read-only
 * preopen the file write rights stay inheritable (see the preopens in host.ts): wasi-libc asks for no more
 * than them, and path_open must see a write to refuse it with EROFS rather than open the file read-only.
 */
function directoryRights(parent: DirDescriptor, requested: number, inheriting: number): [number, number] {
  const possible = parent.readOnly ? DIR_READ_RIGHTS : DIR_READ_RIGHTS | DIR_WRITE_RIGHTS;
  return [requested & possible, inheriting & (possible | FILE_READ_RIGHTS | FILE_WRITE_RIGHTS)];
}

function fileRights(requested: number, read: boolean, write: boolean): number {
  const always = Right.FD_SEEK | Right.FD_TELL | Right.FD_ADVISE | Right.FD_FILESTAT_GET |
    Right.FD_FDSTAT_SET_FLAGS | Right.POLL_FD_READWRITE | Right.FD_SYNC;
  let possible = always;
  if (read) possible |= FILE_READ_RIGHTS;
  if (write) possible |= FILE_WRITE_RIGHTS;
  let granted = requested & possible;
  // A raw call that asked for neither reading nor writing gets a file it can read, as the host opened it.
  if (!write && (requested & (Right.FD_READ | Right.FD_READDIR)) === 0) granted |= Right.FD_READ;
  return granted;
}

export function pathOpenFunctions(ctx: WasiContext): FunctionFamily {
  const { memory, table } = ctx;

  return {
    path_open(
      fd: number, dirflags: number, pathPtr: number, pathLen: number, oflags: number,
      rightsBase: bigint, rightsInheriting: bigint, fdflags: number, fdPtr: number,
    ): number {
      fdPtr >>>= 0;
      memory.check(fdPtr, 4);
      const parent = table.dir(fd);
      const path = memory.string(pathPtr >>> 0, pathLen >>> 0);
      if (oflags & ~OFLAGS_ALL || fdflags & ~FDFLAGS_ALL) return Errno.INVAL;
      const requested = Number(BigInt.asUintN(64, rightsBase) & RIGHTS_MASK);
      const inheriting = Number(BigInt.asUintN(64, rightsInheriting) & RIGHTS_MASK);
      const create = (oflags & Oflags.CREAT) !== 0;
      const exclusive = (oflags & Oflags.EXCL) !== 0;
      const truncate = (oflags & Oflags.TRUNC) !== 0;
      const directory = (oflags & Oflags.DIRECTORY) !== 0;
      const write = (requested & WRITE_INTENT_RIGHTS) !== 0;
      // A directory is never opened for writing, but syncing one is fine: a guest that reopens a directory with
      // the rights its preopen reports (FD_DATASYNC among them) must get it, as in other runtimes.
      const writeData = (requested & (WRITE_INTENT_RIGHTS & ~Right.FD_DATASYNC)) !== 0;
      const read = (requested & (Right.FD_READ | Right.FD_READDIR)) !== 0 || !write;
      if (parent.readOnly && (write || create || truncate)) return Errno.ROFS;
      // The directory descriptor's own rights bound what may be done through it (fd_fdstat_set_rights drops them).
      if ((parent.rightsBase & Right.PATH_OPEN) === 0) return Errno.NOTCAPABLE;
      if (create && (parent.rightsBase & Right.PATH_CREATE_FILE) === 0) return Errno.NOTCAPABLE;
      if (truncate && (parent.rightsBase & Right.PATH_FILESTAT_SET_SIZE) === 0) return Errno.NOTCAPABLE;
      if (directory && (writeData || create)) return directory && create ? Errno.INVAL : Errno.ISDIR;

      // O_CREAT|O_EXCL never follows a final symlink (POSIX): the link itself makes it EEXIST.
      const follow = (dirflags & LOOKUP_SYMLINK_FOLLOW) !== 0 && !(create && exclusive);
      const resolved = resolveGuestPath(parent.anchor, path, follow, true);
      try {
        if (resolved.trailingSlash && create) return Errno.ISDIR;
        let flags = constants.O_NOFOLLOW | constants.O_NONBLOCK;
        if (directory || resolved.trailingSlash) flags |= constants.O_DIRECTORY | constants.O_RDONLY;
        else flags |= writeData ? (read ? constants.O_RDWR : constants.O_WRONLY) : constants.O_RDONLY;
        if (create) flags |= constants.O_CREAT;
        if (exclusive) flags |= constants.O_EXCL;
        if (truncate) flags |= constants.O_TRUNC;
        if (fdflags & Fdflags.SYNC) flags |= constants.O_SYNC;
        else if (fdflags & (Fdflags.DSYNC | Fdflags.RSYNC)) flags |= constants.O_DSYNC;

        // A file about to be created is an entry, charged before it exists (EDQUOT past the budget).
        if (create && lstatSync(at(resolved.parent, resolved.name), { throwIfNoEntry: false }) === undefined) {
          ctx.entries.charge(ctx.options.writeBudget);
        }
        const hostFd = openSync(at(resolved.parent, resolved.name), flags, 0o666);
        let newFd = -1;
        try {
          const stat = fstatSync(hostFd);
          if (stat.isDirectory()) {
            if (writeData) fail(Errno.ISDIR);
            const [base, inherit] = directoryRights(parent, requested, inheriting);
            newFd = table.add({
              kind: 'dir', anchor: { fd: hostFd, hostPath: `${resolved.parent.hostPath}/${resolved.name}` },
              readOnly: parent.readOnly, flags: fdflags, rightsBase: base, rightsInheriting: inherit,
            });
          } else if (stat.isFile()) {
            newFd = table.add({
              kind: 'file', hostFd, filetype: filetypeOf(stat), position: 0, readOnly: parent.readOnly,
              flags: fdflags, rightsBase: fileRights(requested, read, write), rightsInheriting: 0,
            });
          } else {
            fail(Errno.ACCES); // devices, FIFOs and sockets are never handed to a guest
          }
        } catch (error) {
          closeSync(hostFd);
          throw error;
        }
        memory.setU32(fdPtr, newFd);
        return Errno.SUCCESS;
      } finally {
        release(resolved);
      }
    },
  };
}
