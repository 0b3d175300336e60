/**
 * `volume:///tmp/chart.png` names a file beneath the guest's /volume: each path segment percent-encoded.
 * This maps such a URI to a file in a volume directory and reads it, never outside: the decoded segments
 * may not climb (`.`/`..`), hide a separator or a NUL, and the file is reached through the WASI room's
 * confined host operations (symlinks followed only inside the volume directory, every step relative to a
 * held directory), so a later call that swaps a directory for a link while the result is rendered leads
 * nowhere. A file that is refused, or gone by the time it is read, is a reason, never an exception.
 */
import { HostPathError, MAX_HOST_PATH_BYTES, readFileUnder, statFile, type HostPathProblem, type PathUnder } from '../wasi/first-call.js';

export interface VolumeMounts {
  tmp: string;
  data?: string;
}

/** A linked file found in a volume directory: where it is, to be read with `readVolumeFile`. */
export interface FoundVolumeFile {
  ok: true;
  guestPath: string;
  /** Its size when it was looked up. */
  size: number;
  /** The volume directory and the path beneath it. */
  location: PathUnder;
}

export type VolumeFile = FoundVolumeFile | { ok: false; why: string };

export function isVolumeUri(uri: string): boolean {
  return uri.startsWith('volume:');
}

/** Pure part: the decoded segments under /volume, or why the URI is not one we follow. */
export function parseVolumeUri(uri: string): { segments: string[] } | { why: string } {
  if (!uri.startsWith('volume:///')) return { why: 'a volume URI starts with volume:/// (no host part)' };
  const raw = uri.slice('volume:///'.length).split(/[?#]/, 1)[0];
  if (raw.length > MAX_HOST_PATH_BYTES) return { why: `the path is longer than ${MAX_HOST_PATH_BYTES} characters` };
  const parts = raw.split('/');
  const segments: string[] = [];
  for (const part of parts) {
    let segment: string;
    try {
      segment = decodeURIComponent(part);
    } catch (error) {
      if (!(error instanceof URIError)) throw error; // expected: not percent-encoding
      return { why: `the segment "${part}" is not valid percent-encoding` };
    }
    if (segment === '' || segment === '.' || segment === '..') return { why: 'the path has an empty, "." or ".." segment' };
    if (segment.includes('/') || segment.includes('\\') || segment.includes('\0')) return { why: 'a segment hides a separator or a NUL byte' };
    segments.push(segment);
  }
  if (segments.length < 2) return { why: 'the path names no file under /volume/tmp or /volume/data' };
  return { segments };
}

/** The reasons the model reads, by what the confined lookup refused. */
const WHY: Record<HostPathProblem, string> = {
  bad_path: 'the path names no file',
  outside: 'the file leads outside the volume',
  link_in_path: 'the file leads outside the volume',
  not_directory: 'the file does not exist',
  missing_directory: 'the file does not exist',
  cannot_create_directory: 'the file does not exist',
  too_many_links: 'the path goes through too many symbolic links',
  missing: 'the file does not exist',
  link: 'the file is a symbolic link',
  not_file: 'the file is not a regular file',
  too_large: 'the file is too large',
  quota: 'the file cannot be read',
  host_refused: 'the file cannot be read',
};

function why(error: unknown): string {
  return error instanceof HostPathError ? WHY[error.reason] : 'the file cannot be read';
}

/** Maps the URI to a regular file inside the mounted volume directories. */
export function resolveVolumeFile(uri: string, mounts: VolumeMounts): VolumeFile {
  const parsed = parseVolumeUri(uri);
  if ('why' in parsed) return { ok: false, why: parsed.why };
  const [top, ...rest] = parsed.segments;
  const root = top === 'tmp' ? mounts.tmp : top === 'data' ? mounts.data : undefined;
  if (!root) return { ok: false, why: `/volume/${top} is not mounted in this call` };
  const location: PathUnder = { root, path: rest.join('/'), links: 'follow' };
  try {
    const { size } = statFile(location);
    return { ok: true, guestPath: `/volume/${parsed.segments.join('/')}`, size, location };
  } catch (error) {
    return { ok: false, why: why(error) };
  }
}

/**
 * Reads a file `resolveVolumeFile` found, looked up again the same confined way (it may have changed since):
 * its bytes, or why it was left out (it vanished, turned into something else, or grew past `maxBytes`).
 */
export async function readVolumeFile(file: FoundVolumeFile, maxBytes: number): Promise<Uint8Array | string> {
  try {
    return await readFileUnder(file.location, maxBytes);
  } catch (error) {
    return why(error);
  }
}
