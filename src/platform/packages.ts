/**
 * Function packages on the platform: upload (bundle checks, manifest and module checks, discovery, then
 * storage), list, get, delete. A version, once stored, never changes: uploading the same bytes again
 * answers the stored version; other bytes under a taken version are refused.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { bundleDigest, readBundle, writeBundleTree, type BundleLimits, type ContentStore } from '../package/index.js';
import { ConflictError, InUseError, NotFoundError } from './errors.js';
import { nowIso } from './ids.js';
import type { PackageRuntime, StoredPackageRef } from './package-runtime.js';
import type { AgentStore, PackageRecord, PackageStore, PackageVersionSummary, Page, PageRequest } from './store/index.js';

export const PACKAGE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const VERSION_TEXT = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

export class PackageService {
  constructor(
    private readonly store: PackageStore & Pick<AgentStore, 'agentVersionsUsingPackage'>,
    private readonly blobs: ContentStore,
    private readonly runtime: PackageRuntime,
    private readonly scratchDir: string,
    private readonly limits: BundleLimits,
  ) {}

  /** Checks, discovers and stores a bundle; answers the stored record (and whether it was new). */
  async upload(archive: Uint8Array): Promise<{ record: PackageRecord; created: boolean }> {
    const contents = await readBundle(archive, this.limits);
    await mkdir(this.scratchDir, { recursive: true });
    const staging = join(this.scratchDir, `upload-${randomBytes(8).toString('hex')}`);
    await writeBundleTree(contents, staging);
    try {
      const inspected = await this.runtime.inspect(staging);
      if (!inspected.ok || inspected.manifest === null) {
        throw new ValidationError(inspected.problems.length > 0 ? inspected.problems : [{ code: 'package.invalid', message: 'the package could not be read' }]);
      }
      const manifest = inspected.manifest;
      if (!PACKAGE_NAME.test(manifest.name)) {
        throw new ValidationError([{ code: 'package.name', message: `package name ${JSON.stringify(manifest.name)} must be 1-64 characters of a-z, 0-9, "_" and "-", starting with a letter or digit` }]);
      }
      if (manifest.version !== null && !VERSION_TEXT.test(manifest.version)) {
        throw new ValidationError([{ code: 'package.version', message: `version ${JSON.stringify(manifest.version)} must be 1-64 characters of letters, digits, ".", "_", "+" and "-"` }]);
      }
      const digest = bundleDigest(archive);
      if (manifest.version !== null) {
        const existing = await this.store.getPackage(manifest.name, manifest.version);
        if (existing) {
          if (existing.digest === digest) return { record: existing, created: false };
          throw new ConflictError(`package ${manifest.name}@${manifest.version} already exists with other contents; versions are immutable, so raise the version`, 'version_exists');
        }
      }
      const discovery = await this.runtime.discover({ name: manifest.name, version: manifest.version ?? 'unpublished', digest, dir: staging });
      if (!discovery.ok || discovery.tools === null) {
        throw new ValidationError(discovery.problems.length > 0 ? discovery.problems : [{ code: 'discovery.failed', message: 'discovery did not list any tools' }]);
      }
      await this.blobs.put(archive, contents);
      // Unversioned (null): the store numbers it inside the transaction that adds it.
      const record = await this.store.addPackage({
        name: manifest.name, version: manifest.version, description: manifest.description, digest, manifest: manifest.raw,
        tools: discovery.tools, createdAt: nowIso(),
      });
      return { record, created: true };
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  async get(name: string, version: string): Promise<PackageRecord> {
    const rec = version === 'latest' ? await this.store.latestPackage(name) : await this.store.getPackage(name, version);
    if (!rec) throw new NotFoundError(`package ${name}@${version}`);
    return rec;
  }

  /** A package as a whole: every version (oldest first) and the latest one, whose tools it offers now. */
  async summary(name: string): Promise<{ latest: PackageRecord; versions: PackageVersionSummary[] }> {
    const latest = await this.store.latestPackage(name);
    if (!latest) throw new NotFoundError(`package ${name}`);
    return { latest, versions: await this.store.packageVersions(name) };
  }

  list(page: PageRequest): Promise<Page<PackageRecord>> {
    return this.store.listPackages(page);
  }

  async delete(name: string, version: string): Promise<void> {
    const rec = await this.get(name, version);
    const users = await this.store.agentVersionsUsingPackage(rec.name, rec.version);
    if (users.length > 0) {
      throw new InUseError(`package ${rec.name}@${rec.version} is used by agent version${users.length > 1 ? 's' : ''} ${users.slice(0, 5).join(', ')}${users.length > 5 ? ', …' : ''}`);
    }
    await this.store.deletePackage(rec.name, rec.version);
    if ((await this.store.countPackagesWithDigest(rec.digest)) === 0) {
      // No version has these bytes any more: the runtime lets their module go, and the blob goes.
      this.runtime.release(rec.digest);
      await this.blobs.remove(rec.digest);
    }
  }

  /** The stored package as the runtime loads it (its tree re-created from the blob if need be). */
  async ref(rec: PackageRecord): Promise<StoredPackageRef> {
    return { name: rec.name, version: rec.version, digest: rec.digest, dir: await this.blobs.tree(rec.digest) };
  }
}
