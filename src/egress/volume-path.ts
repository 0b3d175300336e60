/**
 * Volume files for `file` bodies and outputs: a guest path under `/volume/tmp` or `/volume/data` (when
 * mounted) resolved against its host directory without ever leaving it. `..` is refused outright and no
 * component may be a symbolic link, so neither the text nor the tree can lead outside the volume.
 * Anything else is `bad_path`.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { EgressError } from './errors.js';
import { quote } from './request.js';

export interface VolumeMount {
  /** `/volume/tmp` or `/volume/data`. */
  guestPath: string;
  /** The host directory behind it. */
  hostPath: string;
}

/** The only guest directories `subako_http` reads bodies from and writes outputs to. */
export const VOLUME_ROOTS: readonly string[] = ['/volume/tmp', '/volume/data'];

export interface ResolvedVolumePath {
  mount: VolumeMount;
  /** Components below the mount, at least one. */
  segments: string[];
  /** The guest path in normal form (`/volume/tmp/a/b`), as echoed to the guest. */
  guestPath: string;
}

function badPath(path: string, why: string): EgressError {
  return new EgressError('bad_path', `${quote(path)} ${why}`);
}

/** Splits a guest path onto its mount, pure. `.` and empty components are ignored, `..` is refused. */
export function resolveVolumePath(path: string, mounts: readonly VolumeMount[]): ResolvedVolumePath {
  if (!path.startsWith('/')) throw badPath(path, 'is not an absolute path under /volume/tmp or /volume/data');
  if (path.includes('\0')) throw badPath(path, 'contains a NUL character');
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw badPath(path, 'contains ".."');
  if (parts.some((p) => Buffer.byteLength(p) > 255)) throw badPath(path, 'has a component longer than 255 bytes');
  for (const mount of mounts) {
    if (!VOLUME_ROOTS.includes(mount.guestPath)) continue;
    const rootParts = mount.guestPath.split('/').filter((p) => p !== '');
    if (rootParts.every((p, i) => parts[i] === p)) {
      const segments = parts.slice(rootParts.length);
      if (segments.length === 0) throw badPath(path, 'names a volume directory, not a file');
      return { mount, segments, guestPath: `/${parts.join('/')}` };
    }
  }
  throw badPath(path, 'is not under a mounted /volume/tmp or /volume/data');
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Walks the directories above the file, refusing symbolic links; creates missing ones when asked. */
async function walkParents(resolved: ResolvedVolumePath, create: boolean): Promise<string> {
  let dir = resolved.mount.hostPath;
  for (const segment of resolved.segments.slice(0, -1)) {
    dir = join(dir, segment);
    let stats;
    try {
      stats = await lstat(dir);
    } catch (error) {
      if (codeOf(error) !== 'ENOENT' || !create) throw badPath(resolved.guestPath, 'has a missing directory');
      try {
        await mkdir(dir);
      } catch (mkdirError) {
        if (codeOf(mkdirError) !== 'EEXIST') throw badPath(resolved.guestPath, 'cannot have its directory created');
      }
      stats = await lstat(dir);
    }
    if (stats.isSymbolicLink()) throw badPath(resolved.guestPath, 'goes through a symbolic link');
    if (!stats.isDirectory()) throw badPath(resolved.guestPath, 'goes through something that is not a directory');
  }
  return join(dir, resolved.segments[resolved.segments.length - 1]);
}

/** Opens a volume file to stream a request body from; returns the handle and the file's size. */
export async function openVolumeFileForRead(
  path: string,
  mounts: readonly VolumeMount[],
): Promise<{ handle: FileHandle; size: number }> {
  const resolved = resolveVolumePath(path, mounts);
  const hostFile = await walkParents(resolved, false);
  let handle: FileHandle;
  try {
    handle = await open(hostFile, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = codeOf(error);
    throw badPath(path, code === 'ENOENT' ? 'does not exist' : code === 'ELOOP' ? 'is a symbolic link' : 'cannot be opened');
  }
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw badPath(path, 'is not a regular file');
  }
  return { handle, size: stats.size };
}

/** Opens (creating parents, truncating) a volume file to stream a response body into. */
export async function openVolumeFileForWrite(
  path: string,
  mounts: readonly VolumeMount[],
): Promise<{ handle: FileHandle; hostPath: string; guestPath: string }> {
  const resolved = resolveVolumePath(path, mounts);
  const hostFile = await walkParents(resolved, true);
  try {
    const existing = await lstat(hostFile);
    if (!existing.isFile()) throw badPath(path, 'exists and is not a regular file');
  } catch (error) {
    if (error instanceof EgressError) throw error;
  }
  try {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
    const handle = await open(hostFile, flags, 0o644);
    return { handle, hostPath: hostFile, guestPath: resolved.guestPath };
  } catch {
    throw badPath(path, 'cannot be written');
  }
}
