/**
 * Writing a checked bundle to disk: into a fresh directory that appears by one rename, complete or not at all.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DEFAULT_BUNDLE_LIMITS, type BundleContents, type BundleLimits } from './bundle.js';
import { readBundle } from './bundle-read.js';

/**
 * Unpacks a bundle into `destDir`, which must not exist yet: reads and checks the whole archive first, and
 * writes only when it passes. Files are written with mode 0644 whatever the archive says (nothing in a bundle
 * is executable by the host).
 */
export async function unpackBundle(
  archive: Uint8Array,
  destDir: string,
  limits: BundleLimits = DEFAULT_BUNDLE_LIMITS,
): Promise<BundleContents> {
  const contents = await readBundle(archive, limits);
  await writeBundleTree(contents, destDir);
  return contents;
}

/** Writes already-checked contents to a fresh directory by way of a sibling staging directory. */
export async function writeBundleTree(contents: BundleContents, destDir: string): Promise<void> {
  const staging = `${destDir}.partial-${randomBytes(6).toString('hex')}`;
  await mkdir(dirname(destDir), { recursive: true });
  try {
    await mkdir(staging, { mode: 0o755 });
    for (const dir of contents.directories) await mkdir(join(staging, dir), { recursive: true, mode: 0o755 });
    for (const file of contents.files) {
      const target = join(staging, file.path);
      await mkdir(dirname(target), { recursive: true, mode: 0o755 });
      await writeFile(target, file.data, { mode: 0o644, flag: 'wx' });
    }
    await rename(staging, destDir);
  } catch (err) {
    // Any failure (a full disk, a name taken): leave no half-written tree behind, and let the caller see why.
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}
