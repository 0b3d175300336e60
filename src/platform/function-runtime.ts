/**
 * The PackageRuntime the server runs with: package/ reads and checks package directories, function/'s
 * FunctionHost discovers and calls them on its worker pool. Loaded packages are kept by digest
 * (loaded-packages.ts), so a package's module is compiled once however many sessions call it, and released
 * when the package is deleted.
 */
import { FunctionHost, type FunctionCallContext, type ToolInfo } from '../function/index.js';
import { checkPackage } from '../package/index.js';
import type { CallLimits } from '../config.js';
import type { Toolbox } from '../tool.js';
import { LoadedPackages, type LoadedPackagesStats } from './loaded-packages.js';
import type { InspectedPackage, PackageRuntime, StoredPackageRef } from './package-runtime.js';

export interface FunctionRuntimeOptions {
  poolSize?: number;
  limits?: Partial<CallLimits>;
  /** The sandbox process's V8 heap limit, in MiB (Node's default when absent). */
  sandboxHeapMiB?: number;
  onSandboxCrash?: (reason: string) => void;
  /** Where modules instrumented for their caps are kept across restarts (the data directory's cache). */
  preparedCacheDir?: string;
  /** Package versions kept loaded (DEFAULT_MAX_PACKAGES by default): past it, the least recently called leaves. */
  maxLoadedPackages?: number;
}

export class FunctionRuntime implements PackageRuntime {
  readonly host: FunctionHost;
  private readonly packages: LoadedPackages<StoredPackageRef>;

  constructor(options: FunctionRuntimeOptions = {}) {
    this.host = new FunctionHost({
      poolSize: options.poolSize,
      limits: options.limits,
      sandboxExecArgv: options.sandboxHeapMiB ? [`--max-old-space-size=${options.sandboxHeapMiB}`] : [],
      onSandboxCrash: options.onSandboxCrash,
      preparedCacheDir: options.preparedCacheDir,
    });
    this.packages = new LoadedPackages(this.host, (pkg) => pkg.dir, { maxPackages: options.maxLoadedPackages });
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
    // Discovery runs on the upload's staging directory, so its load is not the one calls borrow; it is given
    // back at once (the module stays compiled a while, for the first call of a package that was accepted).
    return this.packages.discover(pkg, pkg.dir);
  }

  async toolbox(pkg: StoredPackageRef, tools: ToolInfo[], context: () => FunctionCallContext | Promise<FunctionCallContext>): Promise<Toolbox> {
    // Each call borrows the package: loaded at the first, found loaded by the next, let go once deleted.
    return this.host.toolbox(this.packages.lend(pkg), tools, context);
  }

  release(digest: string): void {
    this.packages.release(digest);
  }

  /** The sandbox's workers and queue, how often a module was found compiled rather than compiled, the packages loaded. */
  stats(): LoadedPackagesStats {
    return this.packages.stats();
  }

  close(): Promise<void> {
    return this.host.close();
  }
}
