/**
 * Host operations on a guest path for the rooms above the WASI host: egress file bodies and outputs, the
 * model view's volume:/// links. Each one walks the path with the WASI host's own resolver (resolver.ts:
 * directories held by descriptor component by component, `..` counted, links followed inside the root or
 * refused), then opens, stats or unlinks the final component relative to its held parent, with O_NOFOLLOW.
 * Nothing is ever re-opened by name after a check, so a guest that swaps a directory for a symlink between
 * two steps (another call of its session runs at the same time) redirects nothing.
 *
 * The walk is synchronous (a few system calls per component, and paths are at most MAX_HOST_PATH_BYTES);
 * the final open and every read or write of the file are asynchronous.
 */
import { closeSync, constants, lstatSync, openSync, readdirSync, unlinkSync, type BigIntStats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { isSystemError } from '../common/lean.js';
import { ReasonedError } from '../errors.js';
import { Errno, WasiErrno } from './errno.js';
import { at, release, resolveGuestPath, type Anchor, type Resolved } from './resolver.js';

/** Longer guest paths are refused before anything touches the disk (Linux's PATH_MAX). */
export const MAX_HOST_PATH_BYTES = 4096;

export const HOST_PATH_PROBLEMS = [
  /** The path is longer than MAX_HOST_PATH_BYTES, or has no component. */
  'bad_path',
  /** The walk would leave the root: `..` above it, or a link to an absolute path or above the root. */
  'outside',
  /** A directory on the way is a symbolic link, and links are refused. */
  'link_in_path',
  /** Something on the way is not a directory. */
  'not_directory',
  /** A directory on the way does not exist (and was not to be created). */
  'missing_directory',
  /** A missing directory on the way could not be created. */
  'cannot_create_directory',
  /** More links on the way than the resolver follows. */
  'too_many_links',
  /** The final component does not exist. */
  'missing',
  /** The final component is a symbolic link. */
  'link',
  /** The final component is not a regular file. */
  'not_file',
  /** The file is larger than the caller accepts. */
  'too_large',
  /** Creating the file or a directory on the way would pass the caller's entry budget. */
  'quota',
  /** The host refused for another reason (permissions, no descriptors left, …). */
  'host_refused',
] as const;

export type HostPathProblem = (typeof HOST_PATH_PROBLEMS)[number];

/** The `code` of every HostPathError (the family); its `reason` is one of HOST_PATH_PROBLEMS. */
export const HOST_PATH_ERROR_CODE = 'wasi.host_path';

/** Why a host operation on a guest path was refused; `reason` is the stable part. */
export class HostPathError extends ReasonedError<HostPathProblem> {
  constructor(reason: HostPathProblem, path: string, detail: string, options?: { cause?: unknown }) {
    super(HOST_PATH_ERROR_CODE, reason, `${JSON.stringify(path)} ${detail}`, options);
  }
}

/** A path beneath a host directory that it may never leave. */
export interface PathUnder {
  /** The host directory (chosen by the host, never by a guest): the root of the walk. */
  root: string;
  /** A relative, '/'-separated path beneath it, as the guest gave it. */
  path: string;
  /**
   * 'follow': symlinks are followed inside the root as the guest's own calls follow them.
   * 'refuse': no component, the final one included, may be a symlink.
   */
  links: 'follow' | 'refuse';
}

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;
/** O_NONBLOCK: a FIFO put where a file was expected never blocks the host (it is refused right after). */
const FINAL_FLAGS = constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The final component's directory, held open, and its name there. */
interface HeldParent {
  root: Anchor;
  resolved: Resolved;
}

/** Walks to the final component's directory. The caller must `letGo` of what it returns. */
function holdParent(
  target: PathUnder, options: { createDirectories?: boolean; followFinal?: boolean; chargeEntry?: () => boolean } = {},
): HeldParent {
  const { path } = target;
  if (Buffer.byteLength(path) > MAX_HOST_PATH_BYTES) {
    throw new HostPathError('bad_path', path, `is longer than ${MAX_HOST_PATH_BYTES} bytes`);
  }
  if (path.split('/').every((part) => part === '' || part === '.')) {
    throw new HostPathError('bad_path', path, 'names no file');
  }
  let fd: number;
  try {
    fd = openSync(target.root, DIRECTORY_FLAGS);
  } catch (cause) {
    throw new HostPathError('missing_directory', path, 'is under a directory that cannot be opened', { cause });
  }
  const root: Anchor = { fd, hostPath: target.root };
  try {
    const resolved = resolveGuestPath(root, path, options.followFinal ?? target.links === 'follow', false, {
      links: target.links, createDirectories: options.createDirectories, chargeEntry: options.chargeEntry,
    });
    if (resolved.name === '.') {
      release(resolved);
      throw new HostPathError('not_file', path, 'names a directory');
    }
    return { root, resolved };
  } catch (error) {
    closeSync(fd);
    throw walkError(error, target);
  }
}

function letGo(held: HeldParent): void {
  release(held.resolved);
  closeSync(held.root.fd);
}

/** The host path naming the final component relative to its held directory (an openat). */
const finalPath = (held: HeldParent): string => at(held.resolved.parent, held.resolved.name);

/** Maps what the resolver threw onto a problem; the errno values are the resolver's own. */
function walkError(error: unknown, target: PathUnder): unknown {
  if (error instanceof HostPathError) return error;
  const { path } = target;
  if (error instanceof WasiErrno) {
    switch (error.errno) {
      case Errno.NOTCAPABLE: return new HostPathError('outside', path, 'leads outside its directory');
      case Errno.DQUOT: return new HostPathError('quota', path, 'would need more entries than the budget holds');
      case Errno.NOENT: return new HostPathError('missing_directory', path, 'has a missing directory');
      case Errno.NOTDIR: return new HostPathError('not_directory', path, 'goes through something that is not a directory');
      case Errno.LOOP:
        return target.links === 'refuse'
          ? new HostPathError('link_in_path', path, 'goes through a symbolic link')
          : new HostPathError('too_many_links', path, 'goes through too many symbolic links');
      default: return new HostPathError('host_refused', path, 'cannot be reached');
    }
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const syscall = (error as NodeJS.ErrnoException | undefined)?.syscall;
  if (syscall === 'mkdir') return new HostPathError('cannot_create_directory', path, `cannot have its directory created (${code})`, { cause: error });
  if (code === 'ENOENT') return new HostPathError('missing_directory', path, 'has a missing directory', { cause: error });
  if (code === 'ENOTDIR') return new HostPathError('not_directory', path, 'goes through something that is not a directory', { cause: error });
  if (code === 'ELOOP') return new HostPathError('link_in_path', path, 'goes through a symbolic link', { cause: error });
  if (typeof syscall === 'string') return new HostPathError('host_refused', path, `cannot be reached (${code})`, { cause: error });
  return error;
}

/** Maps a failed final open onto a problem. */
function openError(error: unknown, path: string): HostPathError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return new HostPathError('missing', path, 'does not exist', { cause: error });
  if (code === 'ELOOP') return new HostPathError('link', path, 'is a symbolic link', { cause: error });
  if (code === 'EISDIR' || code === 'ENXIO' || code === 'ENOTDIR') return new HostPathError('not_file', path, 'is not a regular file', { cause: error });
  return new HostPathError('host_refused', path, `cannot be opened (${code ?? 'unknown error'})`, { cause: error });
}

async function openFinal(held: HeldParent, flags: number, path: string): Promise<{ handle: FileHandle; stat: BigIntStats }> {
  let handle: FileHandle;
  try {
    handle = await open(finalPath(held), flags | FINAL_FLAGS, 0o644);
  } catch (error) {
    throw openError(error, path);
  }
  try {
    const stat = await handle.stat({ bigint: true });
    if (!stat.isFile()) throw new HostPathError('not_file', path, 'is not a regular file');
    return { handle, stat };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/** Opens a regular file to read; the caller closes the handle. */
export async function openFileForReading(target: PathUnder): Promise<{ handle: FileHandle; size: number }> {
  const held = holdParent(target);
  try {
    const { handle, stat } = await openFinal(held, constants.O_RDONLY, target.path);
    return { handle, size: Number(stat.size) };
  } finally {
    letGo(held);
  }
}

/** A file opened to be written, with its directory still held so the file can be taken back. */
export interface WritableFile {
  handle: FileHandle;
  /**
   * Closes the file and lets go of its directory. With `discard`, the file is first unlinked from that
   * directory, but only while the name there still is the file we wrote (same device and inode): what a
   * guest renamed onto the name meanwhile stays, and nothing outside the directory is ever touched.
   * Answers whether the file was removed.
   */
  finish(discard: boolean): Promise<boolean>;
}

/**
 * Opens a regular file to write (created when missing, truncated when present); missing directories are
 * created on the way when asked. `chargeEntry` is asked before each new directory and before a new file is
 * made (false refuses with reason `quota`), so entries a guest's request creates draw on its budget too.
 */
export async function openFileForWriting(
  target: PathUnder, options: { createDirectories: boolean; chargeEntry?: () => boolean },
): Promise<WritableFile> {
  const held = holdParent(target, { createDirectories: options.createDirectories, followFinal: false, chargeEntry: options.chargeEntry });
  let opened: { handle: FileHandle; stat: BigIntStats };
  try {
    if (options.chargeEntry && lstatSync(finalPath(held), { throwIfNoEntry: false }) === undefined && !options.chargeEntry()) {
      throw new HostPathError('quota', target.path, 'would need more entries than the budget holds');
    }
    opened = await openFinal(held, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, target.path);
  } catch (error) {
    letGo(held);
    throw error;
  }
  let finished = false;
  return {
    handle: opened.handle,
    async finish(discard: boolean): Promise<boolean> {
      if (finished) return false;
      finished = true;
      await opened.handle.close().catch(() => {});
      try {
        return discard && unlinkIfSame(held, opened.stat);
      } finally {
        letGo(held);
      }
    },
  };
}

function unlinkIfSame(held: HeldParent, written: BigIntStats): boolean {
  const path = finalPath(held);
  const now = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  if (now === undefined || now.dev !== written.dev || now.ino !== written.ino) return false;
  try {
    unlinkSync(path); // relative to the held directory; unlink never follows the final component
    return true;
  } catch (error) {
    if (!isSystemError(error)) throw error; // expected: gone, or not ours to remove
    return false;
  }
}

/** The size of a regular file, looked up without opening it. */
export function statFile(target: PathUnder): { size: number } {
  const held = holdParent(target);
  try {
    const stat = lstatSync(finalPath(held), { throwIfNoEntry: false });
    if (stat === undefined) throw new HostPathError('missing', target.path, 'does not exist');
    if (stat.isSymbolicLink()) throw new HostPathError('link', target.path, 'is a symbolic link');
    if (!stat.isFile()) throw new HostPathError('not_file', target.path, 'is not a regular file');
    return { size: stat.size };
  } finally {
    letGo(held);
  }
}

/** Reads a whole regular file of at most `maxBytes` (its size when opened; later growth is not read). */
export async function readFileUnder(target: PathUnder, maxBytes: number): Promise<Buffer> {
  const { handle, size } = await openFileForReading(target);
  try {
    if (size > maxBytes) throw new HostPathError('too_large', target.path, `is over ${maxBytes} bytes`);
    const bytes = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await handle.read(bytes, filled, size - filled, filled);
      if (bytesRead === 0) break; // truncated meanwhile: what is there is what we show
      filled += bytesRead;
    }
    return bytes.subarray(0, filled);
  } finally {
    await handle.close().catch(() => {});
  }
}

/** One entry of a listed directory, as lstat sees it (a link is shown as a link, never followed). */
export interface DirectoryEntry {
  name: string;
  kind: 'file' | 'directory' | 'link' | 'other';
  /** Bytes, for files; 0 otherwise. */
  size: number;
}

/**
 * The entries of a directory beneath the root, sorted by name, at most `maxEntries` of them (`truncated` says
 * whether there were more). The path may be empty or '.' for the root itself; no component may be a link
 * (links: 'refuse' is forced: a listing for people follows nothing a guest made). The directory is opened
 * relative to its held parent with O_NOFOLLOW and listed through its descriptor.
 */
export async function listDirectoryUnder(target: PathUnder, maxEntries: number): Promise<{ entries: DirectoryEntry[]; truncated: boolean }> {
  const confined: PathUnder = { ...target, links: 'refuse' };
  const isRoot = target.path.split('/').every((part) => part === '' || part === '.');
  let fd: number;
  if (isRoot) {
    try {
      fd = openSync(target.root, DIRECTORY_FLAGS);
    } catch (cause) {
      throw new HostPathError('missing_directory', target.path, 'is under a directory that cannot be opened', { cause });
    }
  } else {
    const held = holdParent(confined, { followFinal: false });
    try {
      fd = openSync(finalPath(held), DIRECTORY_FLAGS | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException | undefined)?.code;
      if (code === 'ENOENT') throw new HostPathError('missing', target.path, 'does not exist', { cause: error });
      // O_DIRECTORY with O_NOFOLLOW answers ENOTDIR for a link on Linux: which one it was is told apart here.
      if (code === 'ELOOP' || lstatSync(finalPath(held), { throwIfNoEntry: false })?.isSymbolicLink()) {
        throw new HostPathError('link', target.path, 'is a symbolic link', { cause: error });
      }
      if (code === 'ENOTDIR') throw new HostPathError('not_directory', target.path, 'is not a directory', { cause: error });
      throw new HostPathError('host_refused', target.path, `cannot be opened (${code ?? 'unknown error'})`, { cause: error });
    } finally {
      letGo(held);
    }
  }
  try {
    const dir: Anchor = { fd, hostPath: target.root };
    const names = readdirSync(at(dir, '.')).sort();
    const entries: DirectoryEntry[] = [];
    for (const name of names.slice(0, maxEntries)) {
      const stat = lstatSync(at(dir, name), { throwIfNoEntry: false });
      if (stat === undefined) continue; // removed since the listing: not there any more
      const kind = stat.isFile() ? 'file' : stat.isDirectory() ? 'directory' : stat.isSymbolicLink() ? 'link' : 'other';
      entries.push({ name, kind, size: kind === 'file' ? stat.size : 0 });
    }
    return { entries, truncated: names.length > maxEntries };
  } finally {
    closeSync(fd);
  }
}
