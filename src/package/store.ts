/**
 * The content-addressed package store: every bundle is kept once, under the sha-256 of its bytes, with its
 * unpacked tree beside it. Records elsewhere (package and skill versions) name a digest; two versions with
 * the same bytes share one blob. The blobs live behind a BlobStore (blob-store.ts: the directory `<root>/blobs` by
 * default, a NATS object store bucket in scale-out); the trees are always this machine's own, made again from
 * the blob when missing. A crash leaves either the whole blob or nothing — and a temporary name, or a blob
 * stored just before the crash and never recorded, which `sweep` removes at start-up.
 */
import { access, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { removeTree } from '../wasi/index.js';
import { checkDigest, DirectoryBlobStore, type BlobStore } from './blob-store.js';
import { bundleDigest, DEFAULT_BUNDLE_LIMITS, type BundleContents, type BundleLimits } from './bundle.js';
import { readBundle } from './bundle-read.js';
import { writeBundleTree } from './bundle-write.js';

const DIGEST = /^[0-9a-f]{64}$/;
/** A tree (or a skill set, under `sets/`) being written: bundle.ts's and skills.ts's staging names. */
const TREE_BEING_WRITTEN = /^[0-9a-f]{64}\.partial-[0-9a-f]{12}$/;

export interface SweepReport {
  /** Temporary blobs and partial trees an interrupted write left. */
  partial: number;
  /** Blobs and trees no record refers to. */
  orphans: number;
}

export class ContentStore {
  readonly blobs: BlobStore;
  private readonly trees: string;

  /** `root` is a directory of its own (e.g. `<data-dir>/packages`); `blobs` defaults to `<root>/blobs`. */
  constructor(readonly root: string, private readonly limits: BundleLimits = DEFAULT_BUNDLE_LIMITS, blobs?: BlobStore) {
    this.blobs = blobs ?? new DirectoryBlobStore(join(root, 'blobs'));
    this.trees = join(root, 'trees');
  }

  async init(): Promise<void> {
    if (this.blobs instanceof DirectoryBlobStore) await this.blobs.init();
    await mkdir(this.trees, { recursive: true });
  }

  treePath(digest: string): string {
    return join(this.trees, checkDigest(digest));
  }

  has(digest: string): Promise<boolean> {
    return this.blobs.has(digest);
  }

  /**
   * Stores an archive whose contents were already checked, and its unpacked tree. Idempotent: storing the
   * same bytes twice keeps one copy.
   */
  async put(archive: Uint8Array, contents: BundleContents): Promise<string> {
    const digest = bundleDigest(archive);
    await this.blobs.put(archive);
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
    const archive = await this.blobs.get(digest);
    const contents = await readBundle(archive, this.limits);
    await writeBundleTree(contents, tree).catch(async (err: unknown) => {
      if (!(await exists(tree))) throw err;
    });
    return tree;
  }

  /** The blob's bytes, verified against its digest. */
  read(digest: string): Promise<Buffer> {
    return this.blobs.get(digest);
  }

  /**
   * Removes what interrupted writes left (temporary blobs, partial trees and sets) and the blobs and trees
   * whose digest is not in `referenced`. Only names this store writes are touched. Run when the store
   * opens, before any write can be in progress: a write under way looks exactly like a leftover.
   */
  async sweep(referenced: ReadonlySet<string>): Promise<SweepReport> {
    const report: SweepReport = await this.blobs.sweep(referenced);
    for (const dir of [this.trees, join(this.root, 'sets')]) {
      for (const name of await namesIn(dir)) {
        if (TREE_BEING_WRITTEN.test(name)) report.partial++;
        else if (dir === this.trees && DIGEST.test(name) && !referenced.has(name)) report.orphans++;
        else continue;
        await removeTree(dir, name);
      }
    }
    return report;
  }

  async remove(digest: string): Promise<void> {
    await rm(this.treePath(digest), { recursive: true, force: true });
    await this.blobs.remove(digest);
  }
}

async function namesIn(dir: string): Promise<string[]> {
  return readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}
