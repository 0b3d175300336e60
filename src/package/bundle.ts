/**
 * Bundles: a package or skill directory as one `.tar.gz`. This file holds what reading, writing and packing
 * share — the limits, the problem codes, the error, the checked contents and the content address; each of
 * those jobs lives in its own file (`bundle-read.ts`, `bundle-write.ts`, `bundle-pack.ts`).
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.js';

export interface BundleLimits {
  /** The compressed archive, in bytes. */
  maxArchiveBytes: number;
  /** The sum of the files' sizes once unpacked, in bytes. */
  maxUnpackedBytes: number;
  /** Files and directories together. */
  maxEntries: number;
}

export const DEFAULT_BUNDLE_LIMITS: Readonly<BundleLimits> = Object.freeze({
  maxArchiveBytes: 64 * 1024 * 1024,
  maxUnpackedBytes: 256 * 1024 * 1024,
  maxEntries: 10_000,
});

/** Problem codes a bundle can raise, defined once. */
export const BUNDLE_PROBLEMS = {
  tooLarge: 'bundle.too_large',
  unpackedTooLarge: 'bundle.unpacked_too_large',
  tooManyEntries: 'bundle.too_many_entries',
  notGzip: 'bundle.not_gzip',
  corrupt: 'bundle.corrupt',
  empty: 'bundle.empty',
  path: 'bundle.path',
  entryType: 'bundle.entry_type',
  duplicate: 'bundle.duplicate',
  link: 'bundle.link',
} as const;

/** A bundle refused: every problem found, so the author fixes them in one go. */
export class BundleError extends ValidationError {}

export interface BundleFile {
  /** Relative POSIX path inside the bundle, without a leading `./`. */
  path: string;
  data: Buffer;
}

/** What a read found in a bundle that passed every check: nothing here has been written anywhere yet. */
export interface BundleContents {
  files: BundleFile[];
  directories: string[];
  unpackedBytes: number;
}

/** The sha-256 of an archive, as lowercase hex: the content address of a bundle. */
export function bundleDigest(archive: Uint8Array): string {
  return createHash('sha256').update(archive).digest('hex');
}
