/**
 * The content-addressed package store: every bundle is kept once, under the sha-256 of its bytes, with its
 * unpacked tree beside it. Records elsewhere (package and skill versions) name a digest; two versions with
 * the same bytes share one blob. Writes go to a temporary name and appear by rename, so a crash leaves either
 * the whole blob or nothing.
 */
import { randomBytes } from 'node:crypto';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundleDigest, DEFAULT_BUNDLE_LIMITS, writeBundleTree, type BundleContents, type BundleLimits, readBundle } from './bundle.js';

const DIGEST = /^[0-9a-f]{64}$/;

export class ContentStore {
  private readonly blobs: string;
  private readonly trees: string;

  /** `root` is a directory of its own (e.g. `<data-dir>/packages`). */
  constructor(readonly root: string, private readonly limits: BundleLimits = DEFAULT_BUNDLE_LIMITS) {
    this.blobs = join(root, 'blobs');
    this.trees = join(root, 'trees');
  }

  async init(): Promise<void> {
    await mkdir(this.blobs, { recursive: true });
    await mkdir(this.trees, { recursive: true });
  }

  archivePath(digest: string): string {
    return join(this.blobs, `${checkDigest(digest)}.tar.gz`);
  }

  treePath(digest: string): string {
    return join(this.trees, checkDigest(digest));
  }

  async has(digest: string): Promise<boolean> {
    return exists(this.archivePath(digest));
  }

  /**
   * Stores an archive whose contents were already checked, and its unpacked tree. Idempotent: storing the
   * same bytes twice keeps one copy.
   */
  async put(archive: Uint8Array, contents: BundleContents): Promise<string> {
    const digest = bundleDigest(archive);
    const blob = this.archivePath(digest);
    if (!(await exists(blob))) {
      const tmp = `${blob}.tmp-${randomBytes(6).toString('hex')}`;
      await writeFile(tmp, archive, { mode: 0o644 });
      await rename(tmp, blob);
    }
    const tree = this.treePath(digest);
    if (!(await exists(tree))) {
      await writeBundleTree(contents, tree).catch(async (err: unknown) => {
        // Another request storing the same bytes won the race: its tree is as good as ours.
        if (!(await exists(tree))) throw err;
      });
    }
    return digest;
  }

  /** The unpacked tree of a stored blob, re-created from the blob when it went missing. */
  async tree(digest: string): Promise<string> {
    const tree = this.treePath(digest);
    if (await exists(tree)) return tree;
    const archive = await readFile(this.archivePath(digest));
    const contents = await readBundle(archive, this.limits);
    await writeBundleTree(contents, tree).catch(async (err: unknown) => {
      if (!(await exists(tree))) throw err;
    });
    return tree;
  }

  async read(digest: string): Promise<Buffer> {
    return readFile(this.archivePath(digest));
  }

  async remove(digest: string): Promise<void> {
    await rm(this.treePath(digest), { recursive: true, force: true });
    await rm(this.archivePath(digest), { force: true });
  }
}

function checkDigest(digest: string): string {
  if (!DIGEST.test(digest)) throw new Error(`not a sha-256 digest: ${digest}`);
  return digest;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}
