/**
 * `volume:///tmp/chart.png` names a file beneath the guest's /volume: each path segment percent-encoded.
 * This maps such a URI to a host file, never outside the volume directories: the decoded segments may not
 * climb (`.`/`..`), hide a separator or a NUL, and the real path (symlinks followed) must stay inside.
 */
import { realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';

export interface VolumeMounts {
  tmp: string;
  data?: string;
}

export type VolumeFile = { ok: true; hostPath: string; guestPath: string; size: number } | { ok: false; why: string };

export function isVolumeUri(uri: string): boolean {
  return uri.startsWith('volume:');
}

/** Pure part: the decoded segments under /volume, or why the URI is not one we follow. */
export function parseVolumeUri(uri: string): { segments: string[] } | { why: string } {
  if (!uri.startsWith('volume:///')) return { why: 'a volume URI starts with volume:/// (no host part)' };
  const raw = uri.slice('volume:///'.length).split(/[?#]/, 1)[0];
  const parts = raw.split('/');
  const segments: string[] = [];
  for (const part of parts) {
    let segment: string;
    try {
      segment = decodeURIComponent(part);
    } catch {
      return { why: `the segment "${part}" is not valid percent-encoding` };
    }
    if (segment === '' || segment === '.' || segment === '..') return { why: 'the path has an empty, "." or ".." segment' };
    if (segment.includes('/') || segment.includes('\\') || segment.includes('\0')) return { why: 'a segment hides a separator or a NUL byte' };
    segments.push(segment);
  }
  if (segments.length < 2) return { why: 'the path names no file under /volume/tmp or /volume/data' };
  return { segments };
}

/** Maps the URI to a regular file inside the mounted volume directories. */
export function resolveVolumeFile(uri: string, mounts: VolumeMounts): VolumeFile {
  const parsed = parseVolumeUri(uri);
  if ('why' in parsed) return { ok: false, why: parsed.why };
  const [top, ...rest] = parsed.segments;
  const root = top === 'tmp' ? mounts.tmp : top === 'data' ? mounts.data : undefined;
  if (!root) return { ok: false, why: `/volume/${top} is not mounted in this call` };
  const guestPath = `/volume/${parsed.segments.join('/')}`;
  try {
    const realRoot = realpathSync(root);
    const real = realpathSync(join(root, ...rest));
    if (!real.startsWith(realRoot + sep)) return { ok: false, why: `${guestPath} leads outside the volume` };
    const stat = statSync(real);
    if (!stat.isFile()) return { ok: false, why: `${guestPath} is not a regular file` };
    return { ok: true, hostPath: real, guestPath, size: stat.size };
  } catch {
    return { ok: false, why: `${guestPath} does not exist` };
  }
}
