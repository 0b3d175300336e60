/**
 * The path_* functions other than path_open: create/remove directories, unlink, rename, link, symlink,
 * readlink, filestat get and set_times. Each resolves through the sandboxed resolver and then hands the
 * kernel one final component relative to a pinned directory. Anything that would change a read-only
 * preopen answers EROFS before the path is even looked at; rename and link are refused when EITHER side
 * is read-only (a link out of a read-only tree would make its files writable).
 */
import {
  linkSync, lstatSync, lutimesSync, mkdirSync, readlinkSync, renameSync, rmdirSync, symlinkSync, unlinkSync,
} from 'node:fs';
import { Errno, fail } from './errno.js';
import { FILESTAT_SIZE, LOOKUP_SYMLINK_FOLLOW } from './constants.js';
import type { DirDescriptor } from './descriptors.js';
import type { FunctionFamily, WasiContext } from './context.js';
import { at, release, resolveGuestPath, type Resolved } from './resolver.js';
import { requestedTimes, writeFilestat } from './stat.js';

/**
 * Whether a relative link text, read from a directory `depth` levels below the root, climbs above the
 * root at some point (`..` counted against the components before it; `.` and empty ones ignored). Pure:
 * what the names on the way are on disk does not matter, the text alone must stay inside.
 */
export function climbsAboveRoot(target: string, depth: number): boolean {
  let level = depth;
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    level += part === '..' ? -1 : 1;
    if (level < 0) return true;
  }
  return false;
}

export function pathOpsFunctions(ctx: WasiContext): FunctionFamily {
  const { memory, table, clock } = ctx;

  function writableDir(fd: number): DirDescriptor {
    const dir = table.dir(fd);
    return dir.readOnly ? fail(Errno.ROFS) : dir;
  }

  /** Resolves a guest path under `dir`, runs `action` with the result and releases it. */
  function withPath<T>(
    dir: DirDescriptor, ptr: number, len: number, follow: boolean, action: (r: Resolved) => T, lookup = false,
  ): T {
    const resolved = resolveGuestPath(dir.anchor, memory.string(ptr >>> 0, len >>> 0), follow, lookup);
    try {
      return action(resolved);
    } finally {
      release(resolved);
    }
  }

  const target = (r: Resolved): string => at(r.parent, r.name);

  /** "name/" must name a directory; for operations that do not follow, a symlink is not one. */
  function requireDirectoryIfSlashed(r: Resolved): void {
    if (!r.trailingSlash) return;
    const stat = lstatSync(target(r), { throwIfNoEntry: false });
    if (stat !== undefined && !stat.isDirectory()) fail(Errno.NOTDIR);
  }

  /** A name that does not exist yet is about to be made: it is charged first (EDQUOT past the budget). */
  function chargeNewEntry(r: Resolved): void {
    if (lstatSync(target(r), { throwIfNoEntry: false }) === undefined) ctx.entries.charge(ctx.options.writeBudget);
  }

  return {
    path_create_directory(fd: number, ptr: number, len: number): number {
      const dir = writableDir(fd);
      return withPath(dir, ptr, len, false, (r) => {
        if (r.name === '.') return Errno.EXIST;
        chargeNewEntry(r);
        mkdirSync(target(r));
        return Errno.SUCCESS;
      });
    },

    path_remove_directory(fd: number, ptr: number, len: number): number {
      const dir = writableDir(fd);
      return withPath(dir, ptr, len, false, (r) => {
        if (r.name === '.') return Errno.INVAL;
        requireDirectoryIfSlashed(r);
        rmdirSync(target(r));
        return Errno.SUCCESS;
      });
    },

    path_unlink_file(fd: number, ptr: number, len: number): number {
      const dir = writableDir(fd);
      return withPath(dir, ptr, len, false, (r) => {
        if (r.name === '.') return Errno.ISDIR;
        if (r.trailingSlash) {
          const stat = lstatSync(target(r), { throwIfNoEntry: false });
          if (stat === undefined) return Errno.NOENT;
          return stat.isDirectory() ? Errno.ISDIR : Errno.NOTDIR;
        }
        unlinkSync(target(r));
        return Errno.SUCCESS;
      });
    },

    path_rename(fd: number, oldPtr: number, oldLen: number, newFd: number, newPtr: number, newLen: number): number {
      const from = writableDir(fd);
      const to = writableDir(newFd);
      return withPath(from, oldPtr, oldLen, false, (source) =>
        withPath(to, newPtr, newLen, false, (destination) => {
          if (source.name === '.' || destination.name === '.') return Errno.BUSY;
          if (source.trailingSlash || destination.trailingSlash) {
            const stat = lstatSync(target(source), { throwIfNoEntry: false });
            if (stat === undefined) return Errno.NOENT;
            if (!stat.isDirectory()) return Errno.NOTDIR;
          }
          renameSync(target(source), target(destination));
          return Errno.SUCCESS;
        }));
    },

    path_link(
      oldFd: number, oldFlags: number, oldPtr: number, oldLen: number, newFd: number, newPtr: number, newLen: number,
    ): number {
      const from = writableDir(oldFd);
      const to = writableDir(newFd);
      const follow = (oldFlags & LOOKUP_SYMLINK_FOLLOW) !== 0;
      return withPath(from, oldPtr, oldLen, follow, (source) =>
        withPath(to, newPtr, newLen, false, (destination) => {
          if (source.name === '.') return Errno.PERM;
          if (destination.name === '.') return Errno.EXIST;
          if (source.trailingSlash) return Errno.NOTDIR;
          if (destination.trailingSlash) return Errno.NOENT;
          chargeNewEntry(destination);
          linkSync(target(source), target(destination)); // link(2) never follows the source's final link
          return Errno.SUCCESS;
        }));
    },

    /**
     * Creates a symlink whose text is exactly what the guest gave, if that text stays inside the directory
     * descriptor's tree. Following a link is confined by the resolver anyway; refusing links that point
     * out keeps the host's own tools (backups, an operator's shell) from being led out of a volume by one.
     */
    path_symlink(oldPtr: number, oldLen: number, fd: number, newPtr: number, newLen: number): number {
      const contents = memory.string(oldPtr >>> 0, oldLen >>> 0);
      const dir = writableDir(fd);
      if (contents.length === 0) return Errno.NOENT;
      // A link to an absolute path could never be followed inside the sandbox (the resolver refuses it), and
      // on the host it would name the host's root: it is not made at all.
      if (contents.startsWith('/')) return Errno.NOTCAPABLE;
      return withPath(dir, newPtr, newLen, false, (r) => {
        if (r.name === '.') return Errno.EXIST;
        if (r.trailingSlash) {
          return lstatSync(target(r), { throwIfNoEntry: false }) === undefined ? Errno.NOENT : Errno.EXIST;
        }
        // A relative link that climbs above the root, counted from the link's own directory, is refused alike.
        if (climbsAboveRoot(contents, r.depth)) return Errno.NOTCAPABLE;
        chargeNewEntry(r);
        symlinkSync(contents, target(r));
        return Errno.SUCCESS;
      });
    },

    /** Copies as much of the link text as fits (like readlink(2), silently truncated). */
    path_readlink(fd: number, ptr: number, len: number, buf: number, bufLen: number, bufusedPtr: number): number {
      memory.check(bufusedPtr >>> 0, 4);
      memory.check(buf >>> 0, bufLen >>> 0);
      const dir = table.dir(fd);
      return withPath(dir, ptr, len, false, (r) => {
        if (r.name === '.' || r.trailingSlash) return Errno.INVAL;
        const text = readlinkSync(target(r), { encoding: 'buffer' });
        const copied = Math.min(text.length, bufLen >>> 0);
        memory.u8.set(text.subarray(0, copied), buf >>> 0);
        memory.setU32(bufusedPtr >>> 0, copied);
        return Errno.SUCCESS;
      });
    },

    path_filestat_get(fd: number, flags: number, ptr: number, len: number, buf: number): number {
      memory.check(buf >>> 0, FILESTAT_SIZE);
      const dir = table.dir(fd);
      return withPath(dir, ptr, len, (flags & LOOKUP_SYMLINK_FOLLOW) !== 0, (r) => {
        writeFilestat(memory, buf >>> 0, lstatSync(target(r), { bigint: true }));
        return Errno.SUCCESS;
      }, true);
    },

    path_filestat_set_times(
      fd: number, flags: number, ptr: number, len: number, atim: bigint, mtim: bigint, fstflags: number,
    ): number {
      const dir = writableDir(fd);
      return withPath(dir, ptr, len, (flags & LOOKUP_SYMLINK_FOLLOW) !== 0, (r) => {
        const path = target(r);
        const times = requestedTimes(fstflags, atim, mtim, clock.realtime(), () => lstatSync(path, { bigint: true }));
        if (times === undefined) return Errno.INVAL;
        lutimesSync(path, times[0], times[1]); // never follows: the resolver already did, inside the sandbox
        return Errno.SUCCESS;
      }, true);
    },
  };
}
