/**
 * Removing a directory tree that a guest may still be changing (a deleted session's volume, moved out of
 * every guest's path but perhaps still held open by a call that has not stopped). Nothing here ever
 * follows a symbolic link, so a guest that swaps a directory for a link to a host directory mid-way only
 * gets its link removed:
 * - every entry is named relative to a directory held by descriptor (resolver.ts's `at`, an openat);
 * - non-directories are unlinked (unlink never follows the final component: a link goes, its target stays);
 * - a directory is entered with O_DIRECTORY|O_NOFOLLOW and only if the opened directory is the one lstat
 *   saw (device and inode), never onto another file system;
 * - going back up re-opens `..` and checks it is the directory we came from (as resolver.ts's `ascend`),
 *   so a directory moved while we stood in it is left, and the walk starts again from the top.
 * Whatever a racing guest does, everything removed was reachable by that guest itself.
 *
 * One descriptor is held per walk (plus one while a directory is listed), whatever the depth: only each
 * level's device, inode, name and the names of (at most LISTING_BATCH) subdirectories still to visit are
 * remembered. The work is done in short synchronous slices between turns of the event loop. A guest that
 * keeps refilling the tree cannot keep the walk going: past MAX_EXTRA_PASSES re-listings of directories
 * already listed whole, or `maxEntries` entries handled, it stops and reports the tree incomplete; each
 * call makes progress, and a later sweep finishes it.
 */
import { closeSync, constants, fstatSync, lstatSync, opendirSync, openSync, rmdirSync, unlinkSync } from 'node:fs';
import { isSystemError } from '../common/lean.js';
import { at, type Anchor } from './resolver.js';

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** System calls made between two turns of the event loop. */
const SLICE = 256;

/** Listings of a directory after one that read it whole, and restarts from the top, allowed in one removal. */
export const MAX_EXTRA_PASSES = 16;

/** Entries read from one listing; a larger directory is listed again for the rest (not an extra pass). */
export const LISTING_BATCH = 4096;

/** Entries (files, links, directories) one removal handles before it stops, by default. */
export const DEFAULT_MAX_ENTRIES = 1_000_000;

export interface TreeRemoval {
  /** Nothing of the tree is left. */
  complete: boolean;
  /** Entries removed (files, links and directories). */
  removed: number;
}

export interface RemoveTreeOptions {
  /** Entries handled before the removal stops, incomplete (DEFAULT_MAX_ENTRIES). */
  maxEntries?: number;
  /** Entries read per listing (LISTING_BATCH); smaller only to test large directories cheaply. */
  listingBatch?: number;
}

interface Level {
  dev: bigint;
  ino: bigint;
  /** The name of this directory in its parent. */
  name: string;
  hostPath: string;
  /** Subdirectories still to visit, or null until the directory has been listed. */
  subdirs: string[] | null;
  /** The last listing stopped at LISTING_BATCH entries: the next one continues it. */
  cutOff: boolean;
  listings: number;
}

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch (error) {
    if (!isSystemError(error)) throw error; // expected: EBADF, EIO: the fd is released either way
    // Our own descriptor; nothing to undo.
  }
}

/** Opens `name` in `dir` as a directory, only if it is still the directory `expected` describes. */
function enter(dir: Anchor, name: string, expected: { dev: bigint; ino: bigint }): number | null {
  let fd: number;
  try {
    fd = openSync(at(dir, name), DIR_FLAGS);
  } catch (error) {
    if (!isSystemError(error)) throw error; // expected: ENOENT, ENOTDIR, ELOOP, EACCES, …
    return null; // a link or a file now, or gone
  }
  const stat = fstatSync(fd, { bigint: true });
  if (stat.dev !== expected.dev || stat.ino !== expected.ino) {
    closeQuietly(fd);
    return null;
  }
  return fd;
}

/**
 * Removes `<parentDir>/<name>` and everything below it. `parentDir` is the host's own directory (the
 * volumes' trash), outside every guest's reach.
 */
export async function removeTree(parentDir: string, name: string, options: RemoveTreeOptions = {}): Promise<TreeRemoval> {
  const parent: Anchor = { fd: openSync(parentDir, constants.O_RDONLY | constants.O_DIRECTORY), hostPath: parentDir };
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const listingBatch = options.listingBatch ?? LISTING_BATCH;
  let removed = 0;
  let handled = 0;
  let extraPasses = 0;
  let calls = 0;
  const tick = async (): Promise<void> => {
    if (++calls % SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  /** Unlinks a non-directory; answers 'directory' when it turns out to be one. */
  const unlinkEntry = (dir: Anchor, entry: string): 'done' | 'directory' | 'stuck' => {
    try {
      unlinkSync(at(dir, entry));
      removed++;
      return 'done';
    } catch (error) {
      const code = codeOf(error);
      if (code === 'ENOENT') return 'done';
      if (code === 'EISDIR' || code === 'EPERM') return 'directory';
      return 'stuck';
    }
  };

  let current: Anchor | null = null;
  try {
    const top = lstatSync(at(parent, name), { bigint: true, throwIfNoEntry: false });
    if (top === undefined) return { complete: true, removed };
    if (!top.isDirectory()) return { complete: unlinkEntry(parent, name) === 'done', removed };
    const rootDev = top.dev;
    const rootLevel = (): Level => ({
      dev: top.dev, ino: top.ino, name, hostPath: `${parentDir}/${name}`, subdirs: null, cutOff: false, listings: 0,
    });
    const openRoot = (): Anchor | null => {
      const fd = enter(parent, name, top);
      return fd === null ? null : { fd, hostPath: `${parentDir}/${name}` };
    };
    current = openRoot();
    if (current === null) return { complete: false, removed };
    const stack: Level[] = [rootLevel()];

    for (;;) {
      const level = stack[stack.length - 1];
      if (level.subdirs === null) {
        const continuing = level.cutOff;
        if (level.listings++ > 0 && !continuing && ++extraPasses > MAX_EXTRA_PASSES) return { complete: false, removed };
        level.subdirs = [];
        level.cutOff = false;
        // Non-directories go while the listing streams; only subdirectory names are kept.
        const listing = opendirSync(at(current, '.'), { bufferSize: 64 });
        try {
          for (let entry = listing.readSync(), read = 1; entry !== null; entry = listing.readSync(), read++) {
            if (++handled > maxEntries) return { complete: false, removed };
            if (entry.isDirectory() || unlinkEntry(current, entry.name) === 'directory') level.subdirs.push(entry.name);
            if (read >= listingBatch) {
              level.cutOff = true;
              break;
            }
            await tick();
          }
        } finally {
          listing.closeSync();
        }
      }

      const child = level.subdirs.pop();
      if (child !== undefined) {
        const stat = lstatSync(at(current, child), { bigint: true, throwIfNoEntry: false });
        if (stat === undefined) continue;
        if (!stat.isDirectory()) {
          unlinkEntry(current, child);
          continue;
        }
        if (stat.dev !== rootDev) continue; // another file system mounted here is never entered
        const fd = enter(current, child, stat);
        if (fd === null) continue; // replaced meanwhile: the next listing of this directory sees what is there
        closeQuietly(current.fd);
        current = { fd, hostPath: `${level.hostPath}/${child}` };
        stack.push({ dev: stat.dev, ino: stat.ino, name: child, hostPath: current.hostPath, subdirs: null, cutOff: false, listings: 0 });
        await tick();
        continue;
      }

      if (level.cutOff) {
        level.subdirs = null; // the rest of a large directory
        continue;
      }
      // Every entry seen is handled: the directory goes from its parent.
      if (stack.length === 1) {
        try {
          rmdirSync(at(parent, name));
          removed++;
          return { complete: true, removed };
        } catch (error) {
          if (codeOf(error) === 'ENOENT') return { complete: true, removed };
          if (codeOf(error) !== 'ENOTEMPTY' && codeOf(error) !== 'EEXIST') return { complete: false, removed };
          level.subdirs = null; // refilled meanwhile: list it again
          continue;
        }
      }
      const above = stack[stack.length - 2];
      const up = enter(current, '..', above);
      closeQuietly(current.fd);
      current = null;
      if (up === null) {
        // Moved while we stood in it: whatever it is now, start again from the top.
        if (++extraPasses > MAX_EXTRA_PASSES) return { complete: false, removed };
        current = openRoot();
        if (current === null) return { complete: false, removed };
        stack.length = 0;
        stack.push(rootLevel());
        continue;
      }
      current = { fd: up, hostPath: above.hostPath };
      stack.pop();
      try {
        rmdirSync(at(current, level.name)); // rmdir never follows a link: a swapped-in one fails ENOTDIR
        removed++;
      } catch (error) {
        if (!isSystemError(error)) throw error; // expected: ENOTEMPTY, ENOTDIR, ENOENT, …
        // Refilled or replaced meanwhile: the parent's next listing, when its own rmdir fails, sees it.
      }
      await tick();
    }
  } finally {
    if (current !== null) closeQuietly(current.fd);
    closeQuietly(parent.fd);
  }
}
