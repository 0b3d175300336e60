/**
 * The PackageRuntime the server runs with: package/ reads and checks package directories, function/'s
 * FunctionHost discovers and calls them on its worker pool. Loaded packages are kept by digest, so a
 * package's module is compiled once however many sessions call it.
 */
import { FunctionHost, type FunctionHostStats, type LoadedPackage, type FunctionCallContext, type ToolInfo } from '../function/index.js';
import { checkPackage, readPackageDir } from '../package/index.js';
import type { CallLimits } from '../config.js';
import type { Toolbox } from '../tool.js';
import { ValidationError } from '../errors.js';
import type { InspectedPackage, PackageRuntime, StoredPackageRef } from './package-runtime.js';

export interface FunctionRuntimeOptions {
  poolSize?: number;
  limits?: Partial<CallLimits>;
  /** The sandbox process's V8 heap limit, in MiB (Node's default when absent). */
  sandboxHeapMiB?: number;
  onSandboxCrash?: (reason: string) => void;
  /** Where modules instrumented for their caps are kept across restarts (the data directory's cache). */
  preparedCacheDir?: string;
}

export class FunctionRuntime implements PackageRuntime {
  readonly host: FunctionHost;
  private readonly loaded = new Map<string, Promise<LoadedPackage>>();
  private loadedHits = 0;

  constructor(options: FunctionRuntimeOptions = {}) {
    this.host = new FunctionHost({
      poolSize: options.poolSize,
      limits: options.limits,
      sandboxExecArgv: options.sandboxHeapMiB ? [`--max-old-space-size=${options.sandboxHeapMiB}`] : [],
      onSandboxCrash: options.onSandboxCrash,
      preparedCacheDir: options.preparedCacheDir,
    });
  }

  async inspect(dir: string): Promise<InspectedPackage> {
    const check = await checkPackage(dir);
    const manifest = check.manifest;
    return {
      ok: check.ok,
      problems: check.problems,
      manifest: manifest
        ? { name: manifest.name, description: manifest.description, version: manifest.version ?? null, raw: { ...manifest } }
        : null,
    };
  }

  async discover(pkg: StoredPackageRef) {
    // Discovery runs on the upload's staging directory, so it is never cached by digest; its load is given
    // back at once (the module stays compiled a while, for the first call of a package that was accepted).
    const loaded = await this.loadFrom(pkg);
    try {
      return await this.host.discover(loaded);
    } finally {
      this.host.unload(loaded);
    }
  }

  async toolbox(pkg: StoredPackageRef, tools: ToolInfo[], context: () => FunctionCallContext | Promise<FunctionCallContext>): Promise<Toolbox> {
    let loading = this.loaded.get(pkg.digest);
    // A package loaded already is a compile-cache hit too: its module is the one compiled before.
    if (loading) this.loadedHits += 1;
    else {
      loading = this.loadFrom(pkg);
      this.loaded.set(pkg.digest, loading);
      loading.catch(() => this.loaded.delete(pkg.digest));
    }
    return this.host.toolbox(await loading, tools, context);
  }

  /** The sandbox's workers and queue, and how often a module was found compiled rather than compiled. */
  stats(): FunctionHostStats {
    const host = this.host.stats();
    return { ...host, compileCacheHits: host.compileCacheHits + this.loadedHits };
  }

  close(): Promise<void> {
    return this.host.close();
  }

  private async loadFrom(pkg: StoredPackageRef): Promise<LoadedPackage> {
    const read = await readPackageDir(pkg.dir);
    if (!read.ok) throw new ValidationError(read.problems);
    return this.host.load({
      name: pkg.name, version: pkg.version, description: read.manifest.description, moduleBytes: read.moduleBytes,
      assetsDir: read.assetsDir,
    });
  }
}
