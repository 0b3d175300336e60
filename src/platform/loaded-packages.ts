/**
 * The function packages loaded into a FunctionHost, by bundle digest (one stored package version, or several
 * that are the same bytes): each is read from its directory and loaded once, then lent to every call of it —
 * the in-process runtime's sessions and a NATS worker's calls alike. A call borrows the package and gives it
 * back when it ends, so nothing else holds it for good.
 *
 * Two ways out: `release`, when the package is deleted, hands the module back to the host to be released at
 * once (after the calls in flight); and past `maxPackages` the package lent least recently is dropped, its
 * module left to the host's idle release (a later call reads and loads it again). function/ keeps modules by
 * the digest of their bytes; this file knows the packages they came from.
 */
import { ValidationError } from '../errors.js';
import type { DiscoveryResult, FunctionHost, FunctionHostStats, LentPackage, LoadedPackage } from '../function/index.js';
import { readPackageDir } from '../package/index.js';

/** Which package: its bundle digest is the key; its name and version are what its tools say they come from. */
export interface PackageKey {
  digest: string;
  name: string;
  version: string;
}

/** Package versions kept loaded by default: far more than a sandbox keeps compiled (its `heldModules`). */
export const DEFAULT_MAX_PACKAGES = 128;

interface Entry {
  digest: string;
  loading: Promise<LoadedPackage>;
  /** Calls that borrowed it and did not give it back yet. */
  lent: number;
  /** Dropped from the cache: given back to the host once the last call ends (`release`: released at once). */
  dropped: { release: boolean } | null;
}

/** The host's stats, and the package versions loaded now. */
export interface LoadedPackagesStats extends FunctionHostStats {
  loadedPackages: number;
}

export class LoadedPackages<K extends PackageKey = PackageKey> {
  /** Least recently lent first. */
  private readonly entries = new Map<string, Entry>();
  /**
   * Bundle digest to module digest of the last uploads discovered here (not loaded for calls yet, perhaps
   * never): only so that `release` can reach a module that discovery left idle in the host.
   */
  private readonly discovered = new Map<string, string>();
  /** Packages that left the cache while calls had them lent: given back to the host when the last call ends. */
  private readonly leaving = new Set<Entry>();
  private hits = 0;
  private readonly maxPackages: number;

  /** `directory(key)`: where the package's unpacked tree is (fetched first if need be). */
  constructor(
    private readonly host: FunctionHost,
    private readonly directory: (key: K) => string | Promise<string>,
    options: { maxPackages?: number } = {},
  ) {
    this.maxPackages = Math.max(1, options.maxPackages ?? DEFAULT_MAX_PACKAGES);
  }

  /** The package as a toolbox holds it: borrowed for each call. */
  lend(key: K): LentPackage {
    return { source: { name: key.name, version: key.version }, borrow: () => this.borrow(key) };
  }

  /** The package loaded for one call; `giveBack` once the call has ended (twice is once). */
  async borrow(key: K): Promise<{ loaded: LoadedPackage; giveBack(): void }> {
    let entry = this.entries.get(key.digest);
    if (entry) {
      this.hits += 1;
      // Lent last now: to the end of the order.
      this.entries.delete(key.digest);
      this.entries.set(key.digest, entry);
    } else {
      entry = { digest: key.digest, loading: this.load(key), lent: 0, dropped: null };
      const made = entry;
      this.entries.set(key.digest, made);
      // A package that failed to load is not kept: the next call reports the failure afresh.
      made.loading.catch(() => {
        if (this.entries.get(key.digest) === made) this.entries.delete(key.digest);
      });
      this.dropLeastRecent();
    }
    entry.lent += 1;
    let loaded: LoadedPackage;
    try {
      loaded = await entry.loading;
    } catch (error) {
      entry.lent -= 1;
      this.unloadIfDone(entry);
      throw error;
    }
    const lentTo = entry;
    let given = false;
    return {
      loaded,
      giveBack: () => {
        if (given) return;
        given = true;
        lentTo.lent -= 1;
        this.unloadIfDone(lentTo);
      },
    };
  }

  /**
   * Discovery on a package directory that is not stored yet (an upload's staging): loaded, discovered, and
   * given back at once. Its module stays compiled in the host a while, for the first call of an accepted
   * upload; if the version is deleted first, `release` lets it go.
   */
  async discover(key: K, dir: string): Promise<DiscoveryResult> {
    const loaded = await this.loadFrom(key, dir);
    try {
      return await this.host.discover(loaded);
    } finally {
      this.host.unload(loaded);
      this.discovered.delete(key.digest);
      this.discovered.set(key.digest, loaded.digest);
      for (const digest of this.discovered.keys()) {
        if (this.discovered.size <= this.maxPackages) break;
        this.discovered.delete(digest);
      }
    }
  }

  /**
   * The package (every version of these bytes) was deleted: it leaves the cache, and its module is released
   * in the sandbox as soon as no call runs it and no other package holds the same module.
   */
  release(digest: string): void {
    const entry = this.entries.get(digest);
    if (entry) {
      this.entries.delete(digest);
      this.drop(entry, true);
    }
    for (const left of this.leaving) if (left.digest === digest) left.dropped = { release: true };
    const discoveredModule = this.discovered.get(digest);
    this.discovered.delete(digest);
    if (discoveredModule !== undefined) this.host.releaseUnused(discoveredModule);
  }

  /** A borrow that found its package loaded found its module compiled too: it counts as a compile-cache hit. */
  stats(): LoadedPackagesStats {
    const host = this.host.stats();
    return { ...host, compileCacheHits: host.compileCacheHits + this.hits, loadedPackages: this.entries.size };
  }

  /** Past `maxPackages`, the packages lent least recently leave (their calls in flight finish first). */
  private dropLeastRecent(): void {
    for (const [digest, entry] of this.entries) {
      if (this.entries.size <= this.maxPackages) return;
      this.entries.delete(digest);
      this.drop(entry, false);
    }
  }

  private drop(entry: Entry, release: boolean): void {
    entry.dropped = { release };
    if (entry.lent > 0) this.leaving.add(entry);
    else this.unloadIfDone(entry);
  }

  private unloadIfDone(entry: Entry): void {
    if (entry.dropped === null || entry.lent > 0) return;
    this.leaving.delete(entry);
    const release = entry.dropped.release;
    entry.loading.then((loaded) => {
      this.host.unload(loaded);
      if (release) this.host.releaseUnused(loaded.digest);
    }, () => undefined);
  }

  private async load(key: K): Promise<LoadedPackage> {
    return this.loadFrom(key, await this.directory(key));
  }

  private async loadFrom(key: K, dir: string): Promise<LoadedPackage> {
    const read = await readPackageDir(dir);
    if (!read.ok) throw new ValidationError(read.problems);
    return this.host.load({
      name: key.name, version: key.version, description: read.manifest.description, moduleBytes: read.moduleBytes, assetsDir: read.assetsDir,
    });
  }
}
