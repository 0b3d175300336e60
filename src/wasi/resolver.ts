/**
 * The sandboxed path resolver: the security core of the WASI host.
 *
 * A guest path is resolved one component at a time against a directory descriptor, which is the root
 * the path can never leave (wasmtime's rule too: every directory descriptor is its own sandbox root).
 * - Each component is looked up with lstat in a directory held open by descriptor, and the kernel is
 *   only ever handed ONE component relative to such a pinned directory (`/proc/self/fd/N/name`, the
 *   openat of a runtime without openat). Renaming or swapping directories mid-walk cannot redirect it.
 * - `..` is counted: it pops back to the directory we came from and fails with ENOTCAPABLE at the root.
 *   Re-opening a parent checks that it is the same directory (device and inode) we walked through.
 * - Symlinks are followed by us, never by the kernel (every open carries O_NOFOLLOW), at most
 *   MAX_SYMLINK_HOPS times (ELOOP). An absolute target is refused with ENOTCAPABLE: it names the
 *   guest's namespace, not this directory, and re-rooting it here would silently mean something else.
 *   Relative targets continue the walk from the link's directory and obey the same `..` counting.
 * - Absolute guest paths (ENOTCAPABLE), empty paths (ENOENT) and NUL bytes (EINVAL, in GuestMemory)
 *   are refused before anything touches the disk.
 *
 * At most two transient host fds are open at any moment, whatever the depth of the path.
 *
 * Host operations on guest paths outside the WASI host (egress file bodies and outputs, the model view's
 * volume:/// links) walk with the same function through host-files.ts; they may refuse links outright and
 * create missing directories, each made by mkdir relative to the held parent and then walked into like
 * any other.
 */
import { closeSync, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync, constants } from 'node:fs';
import { isSystemError } from '../common/lean.js';
import { Errno, fail } from './errno.js';

export const MAX_SYMLINK_HOPS = 40;

const DIR_OPEN_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Linux exposes every open descriptor as a directory handle under /proc/self/fd. Elsewhere we fall back
 * to host path strings, which keeps every check above but not the immunity to concurrent renames.
 */
const PROC_FD = existsSync('/proc/self/fd');

/** A host directory held open by descriptor. */
export interface Anchor {
  fd: number;
  hostPath: string;
}

/** The host path that names `name` inside the pinned directory `anchor` (name is one component or '.'). */
export function at(anchor: Anchor, name: string): string {
  return PROC_FD ? `/proc/self/fd/${anchor.fd}/${name}` : `${anchor.hostPath}/${name}`;
}

export interface Resolved {
  /** The pinned directory that holds the final component. */
  parent: Anchor;
  /** The final component: one name without '/', or '.' for `parent` itself. */
  name: string;
  /** The path ended with '/': the final component must be a directory. */
  trailingSlash: boolean;
  /** True when `parent` was opened by the resolver and must be released. */
  owned: boolean;
  /** How many directories `parent` lies below `base` (0: it is `base`). */
  depth: number;
}

/** How the walk treats what it meets on the way; the WASI host uses the defaults. */
export interface WalkOptions {
  /**
   * 'follow' (default): symlinks are followed inside `base` as described above. 'refuse': a symlink
   * anywhere before the final component fails with ELOOP, for callers that accept no links at all.
   */
  links?: 'follow' | 'refuse';
  /** A missing directory before the final component is created (mkdir relative to its held parent). */
  createDirectories?: boolean;
  /** Asked before each directory is created: false refuses it with EDQUOT (the caller's entry budget). */
  chargeEntry?: () => boolean;
}

interface Level {
  dev: bigint;
  ino: bigint;
  hostPath: string;
}

/** The WASI host's own walk: links followed inside, nothing created (shared, so the hot path allocates nothing). */
const GUEST_WALK: WalkOptions = Object.freeze({});

/**
 * Resolves `path` under `base`. With `followFinal`, a symlink in the last position is followed too
 * (the result then names a non-symlink or something that does not exist yet); otherwise the last
 * component is returned as is, so operations act on a link itself; `slashFollows` lets a lookup
 * follow it anyway when the path ends in '/'. A missing final component is not an error here:
 * creating operations need its parent.
 */
export function resolveGuestPath(
  base: Anchor, path: string, followFinal: boolean, slashFollows = false, walk: WalkOptions = GUEST_WALK,
): Resolved {
  if (path.length === 0) fail(Errno.NOENT);
  if (path.charCodeAt(0) === 47 /* '/' */) fail(Errno.NOTCAPABLE);
  // Components still to walk, last one first (so symlink targets are spliced in with push).
  const pending = path.split('/').reverse();
  const levels: Level[] = [];
  let current = base;
  let hops = 0;
  // Each component is created at most once; a directory removed again as fast as we make it is a race
  // we lose with ENOENT rather than a loop.
  let creations = pending.length;
  let done = false;
  try {
    while (pending.length > 0) {
      const component = pending.pop() as string;
      if (component === '' || component === '.') continue;
      if (component === '..') {
        current = ascend(base, current, levels);
        continue;
      }
      const last = onlyEmpty(pending);
      const trailingSlash = last && pending.length > 0;
      if (last && !followFinal && !trailingSlash) return finish(component, false);
      const stat = lstatSync(at(current, component), { bigint: true, throwIfNoEntry: false });
      if (stat === undefined) {
        if (last) return finish(component, trailingSlash);
        if (walk.createDirectories === true && creations-- > 0) {
          if (walk.chargeEntry && !walk.chargeEntry()) fail(Errno.DQUOT);
          makeDirectory(current, component);
          pending.push(component); // walked into like any other: lstat, then opened by descriptor
          continue;
        }
        return fail(Errno.NOENT);
      }
      if (stat.isSymbolicLink()) {
        if (walk.links === 'refuse') fail(Errno.LOOP); // no link is followed, wherever it stands
        // "link/" is followed by lookups (POSIX), but names no directory for rmdir, rename, unlink, …
        if (last && !followFinal && !slashFollows) fail(Errno.NOTDIR);
        if (++hops > MAX_SYMLINK_HOPS) fail(Errno.LOOP);
        const target = readlinkSync(at(current, component), 'utf8');
        if (target.length === 0) fail(Errno.NOENT);
        if (target.charCodeAt(0) === 47) fail(Errno.NOTCAPABLE);
        const parts = target.split('/');
        for (let i = parts.length - 1; i >= 0; i--) pending.push(parts[i]);
        continue;
      }
      if (last) {
        if (trailingSlash && !stat.isDirectory()) fail(Errno.NOTDIR);
        return finish(component, trailingSlash);
      }
      if (!stat.isDirectory()) fail(Errno.NOTDIR);
      current = descend(base, current, component, stat, levels);
    }
    // The path ended in '.' or '..': it names the directory we stand in.
    return finish('.', path.endsWith('/'));
  } finally {
    if (!done && current !== base) closeQuietly(current.fd);
  }

  function finish(name: string, trailingSlash: boolean): Resolved {
    done = true;
    return { parent: current, name, trailingSlash, owned: current !== base, depth: levels.length };
  }
}

/** mkdir of one component inside a held directory; one that appeared meanwhile is as good. */
function makeDirectory(parent: Anchor, name: string): void {
  try {
    mkdirSync(at(parent, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** Closes the parent the resolver opened, if any. */
export function release(resolved: Resolved): void {
  if (resolved.owned) closeQuietly(resolved.parent.fd);
}

function onlyEmpty(pending: string[]): boolean {
  for (let i = 0; i < pending.length; i++) if (pending[i] !== '') return false;
  return true;
}

function descend(
  base: Anchor, current: Anchor, name: string, stat: { dev: bigint; ino: bigint }, levels: Level[],
): Anchor {
  const fd = openSync(at(current, name), DIR_OPEN_FLAGS);
  if (current !== base) closeQuietly(current.fd);
  const hostPath = `${current.hostPath}/${name}`;
  levels.push({ dev: stat.dev, ino: stat.ino, hostPath });
  return { fd, hostPath };
}

function ascend(base: Anchor, current: Anchor, levels: Level[]): Anchor {
  if (levels.length === 0) fail(Errno.NOTCAPABLE); // `..` above the root
  levels.pop();
  if (levels.length === 0) {
    closeQuietly(current.fd);
    return base;
  }
  const expected = levels[levels.length - 1];
  const fd = openSync(at(current, '..'), DIR_OPEN_FLAGS);
  let stat;
  try {
    stat = fstatSync(fd, { bigint: true });
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
  if (stat.dev !== expected.dev || stat.ino !== expected.ino) {
    // The directory was moved while we stood in it: refuse rather than guess where we are.
    closeQuietly(fd);
    fail(Errno.NOENT);
  }
  closeQuietly(current.fd);
  return { fd, hostPath: expected.hostPath };
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch (error) {
    if (!isSystemError(error)) throw error; // expected: EBADF, EIO: the fd is released either way
    // Our own transient descriptor; nothing to undo.
  }
}
