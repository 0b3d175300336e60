/**
 * Volume files for `file` bodies and outputs: a guest path under `/volume/tmp` or `/volume/data` (when
 * mounted) resolved against its host directory without ever leaving it. `..` is refused outright and no
 * component may be a symbolic link, so neither the text nor the tree can lead outside the volume.
 * The files are opened through the WASI room's confined host operations (wasi/host-files.ts): each
 * directory is held by descriptor and the file opened relative to it, so a second call of the session that
 * swaps a directory for a link mid-way redirects nothing. Anything refused is `bad_path`.
 */
import type { FileHandle } from 'node:fs/promises';
import {
  ENTRY_COST_BYTES, HostPathError, MAX_HOST_PATH_BYTES, openFileForReading, openFileForWriting, type HostPathProblem,
} from '../wasi/index.js';
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
  if (Buffer.byteLength(path) > MAX_HOST_PATH_BYTES) throw badPath(path, `is longer than ${MAX_HOST_PATH_BYTES} bytes`);
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

/** The words of a refusal on the directories above the file, the same for reading and writing. */
const ON_THE_WAY: Partial<Record<HostPathProblem, string>> = {
  missing_directory: 'has a missing directory',
  cannot_create_directory: 'cannot have its directory created',
  link_in_path: 'goes through a symbolic link',
  not_directory: 'goes through something that is not a directory',
  outside: 'leads outside the volume',
};

const READ_WORDS: Partial<Record<HostPathProblem, string>> = {
  ...ON_THE_WAY, missing: 'does not exist', link: 'is a symbolic link', not_file: 'is not a regular file',
};

const WRITE_WORDS: Partial<Record<HostPathProblem, string>> = {
  ...ON_THE_WAY, link: 'exists and is not a regular file', not_file: 'exists and is not a regular file',
};

function refusal(error: unknown, path: string, words: Partial<Record<HostPathProblem, string>>, otherwise: string): EgressError {
  const why = error instanceof HostPathError ? words[error.reason] : undefined;
  return badPath(path, why ?? otherwise);
}

const under = (resolved: ResolvedVolumePath) => ({
  root: resolved.mount.hostPath, path: resolved.segments.join('/'), links: 'refuse' as const,
});

/** Opens a volume file to stream a request body from; returns the handle and the file's size. */
export async function openVolumeFileForRead(
  path: string,
  mounts: readonly VolumeMount[],
): Promise<{ handle: FileHandle; size: number }> {
  const resolved = resolveVolumePath(path, mounts);
  try {
    return await openFileForReading(under(resolved));
  } catch (error) {
    throw refusal(error, path, READ_WORDS, 'cannot be opened');
  }
}

/** A volume file being written; `finish` closes it, removing it first when the download failed. */
export interface VolumeFileForWrite {
  handle: FileHandle;
  guestPath: string;
  /**
   * Closes the file. With `discard`, the file is removed first, relative to its held directory and only
   * while that name still is the file we wrote: never by path, never anything a guest put there meanwhile.
   */
  finish(discard: boolean): Promise<void>;
}

/**
 * Opens (creating parents, truncating) a volume file to stream a response body into. Each directory and the
 * file, when new, cost ENTRY_COST_BYTES of `budget` first, as the guest's own creations do; past it the
 * request fails with `write_budget`.
 */
export async function openVolumeFileForWrite(
  path: string, mounts: readonly VolumeMount[], budget?: { tryConsume(bytes: number): boolean },
): Promise<VolumeFileForWrite> {
  const resolved = resolveVolumePath(path, mounts);
  try {
    const chargeEntry = budget ? () => budget.tryConsume(ENTRY_COST_BYTES) : undefined;
    const file = await openFileForWriting(under(resolved), { createDirectories: true, chargeEntry });
    return {
      handle: file.handle,
      guestPath: resolved.guestPath,
      finish: async (discard) => {
        await file.finish(discard);
      },
    };
  } catch (error) {
    if (error instanceof HostPathError && error.reason === 'quota') {
      throw new EgressError('write_budget', `saving the response to ${quote(path)} would need more directory entries than this call's write budget holds`);
    }
    throw refusal(error, path, WRITE_WORDS, 'cannot be written');
  }
}
