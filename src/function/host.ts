/**
 * FunctionHost: the runtime of function packages. It owns a sandbox (a supervised sandbox process by
 * default, worker threads of this process for a one-shot local run), compiles each package's module once
 * (keyed by its bytes' digest), and runs discovery and calls on fresh instances.
 */
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { DEFAULT_CALL_LIMITS, type CallLimits } from '../config.js';
import { PreparedModuleCache, SandboxPool, SandboxProcess, type ModuleHandle, type Sandbox, type SandboxStats } from '../sandbox/index.js';
import type { HttpsConnectionPool } from '../egress/index.js';
import type { Tool, Toolbox } from '../tool.js';
import { callDeadlineMs, functionTool } from './function-tool.js';
import { discoverTools } from './discover.js';
import { callFunctionTool } from './call.js';
import { loadEgress } from './egress-room.js';
import type { DiscoveryResult, FunctionCallContext, FunctionCallOutcome, PackageSource, ToolInfo } from './types.js';

export interface LoadedPackage {
  readonly source: PackageSource;
  readonly digest: string;
  readonly module: ModuleHandle;
}

/**
 * A package a toolbox borrows for each call rather than holding it for good: whoever lends it (a cache of
 * loaded packages) may let the module go between calls, never during one.
 */
export interface LentPackage {
  /** What the package's tools say they come from. */
  readonly source: { name: string; version?: string };
  /** The package loaded for one call; `giveBack` when the call has ended. */
  borrow(): Promise<{ loaded: LoadedPackage; giveBack(): void }>;
}

export interface FunctionHostOptions {
  /** Sandbox worker threads; default: one per core, at least two. */
  poolSize?: number;
  limits?: Partial<CallLimits>;
  /**
   * Where guests run: `process` (the default) in a supervised sandbox process, so that a guest that takes
   * its V8 isolate down ends that process and not this one; `thread` in worker threads of this process
   * (for a one-shot local run, where the process is the person's own and a crash is theirs).
   */
  isolation?: 'process' | 'thread';
  /** Node flags for the sandbox process (isolation `process`). */
  sandboxExecArgv?: string[];
  /** Told when the sandbox process ends unexpectedly (a new one is started). */
  onSandboxCrash?: (reason: string) => void;
  /**
   * A directory of this host's own where modules instrumented for their caps are kept by digest, so a
   * restarted host does not instrument them again (sandbox/prepared-cache.ts). None when absent.
   */
  preparedCacheDir?: string;
}

export interface FunctionHostStats extends SandboxStats {
  compileCacheHits: number;
  compileCacheMisses: number;
  /** Modules compiled and kept: loaded now, or idle and kept in case they are loaded again. */
  modules: number;
}

/**
 * Modules nobody has loaded any more (every LoadedPackage of them unloaded) kept compiled anyway, the ones
 * unloaded last: a package is discovered at upload, unloaded, and loaded again by its first call. Past this,
 * the oldest is released in the sandbox, so refused uploads and replaced builds do not pile up.
 */
const IDLE_MODULES = 16;

interface CompiledEntry {
  handle: Promise<ModuleHandle>;
  /** LoadedPackages of this module not unloaded yet. */
  loads: number;
}

export class FunctionHost {
  readonly limits: CallLimits;
  private readonly sandbox: Sandbox;
  /**
   * Outgoing HTTPS connections of this host's calls, reused only where the connection would be the same: made by
   * the first call given egress (the egress room is loaded then, not with this host).
   */
  private connections: Promise<HttpsConnectionPool> | null = null;
  private readonly compiled = new Map<string, CompiledEntry>();
  /** Digests of compiled modules no load holds, oldest first (at most IDLE_MODULES). */
  private readonly idle = new Set<string>();
  private readonly unloaded = new WeakSet<LoadedPackage>();
  /** Loads that found their bytes compiled already, and loads that compiled them. */
  private readonly compileCache = { hits: 0, misses: 0 };

  constructor(options: FunctionHostOptions = {}) {
    this.limits = { ...DEFAULT_CALL_LIMITS, ...options.limits };
    const size = options.poolSize ?? Math.max(2, availableParallelism());
    const preparedCache = options.preparedCacheDir === undefined ? undefined : new PreparedModuleCache(options.preparedCacheDir);
    this.sandbox = options.isolation === 'thread'
      ? new SandboxPool({ size, preparedCache })
      : new SandboxProcess({ size, execArgv: options.sandboxExecArgv, onCrash: options.onSandboxCrash, preparedCache });
  }

  /**
   * Compiles the module once per distinct bytes; later loads of the same bytes share it. A load that will not
   * be called again is given back with `unload`, so the sandbox can let the module go.
   */
  async load(source: PackageSource): Promise<LoadedPackage> {
    const digest = createHash('sha256').update(source.moduleBytes).digest('hex');
    let entry = this.compiled.get(digest);
    if (entry) this.compileCache.hits += 1;
    else {
      this.compileCache.misses += 1;
      const handle = this.sandbox.compile(source.moduleBytes, { memoryBytes: this.limits.memoryBytes, digest });
      const made: CompiledEntry = { handle, loads: 0 };
      entry = made;
      this.compiled.set(digest, made);
      // A module that failed to compile is not cached: the next load reports the failure afresh.
      handle.catch(() => {
        if (this.compiled.get(digest) === made) this.compiled.delete(digest);
        this.idle.delete(digest);
      });
    }
    entry.loads += 1;
    this.idle.delete(digest);
    try {
      return { source, digest, module: await entry.handle };
    } catch (error) {
      entry.loads -= 1;
      throw error;
    }
  }

  /**
   * This load will not be called again. Its module stays compiled while another load holds it, and for a
   * while after the last is given back (IDLE_MODULES); then the sandbox releases it.
   */
  unload(loaded: LoadedPackage): void {
    const entry = this.compiled.get(loaded.digest);
    if (!entry || this.unloaded.has(loaded)) return;
    this.unloaded.add(loaded);
    entry.loads -= 1;
    if (entry.loads > 0) return;
    this.idle.add(loaded.digest);
    for (const digest of this.idle) {
      if (this.idle.size <= IDLE_MODULES) break;
      this.releaseModule(digest);
    }
  }

  /**
   * Nobody will load these bytes again for the package they came from (it was deleted): if no load holds the
   * module, the sandbox releases it now (after the runs that use it) instead of keeping it idle. A module
   * another load holds stays. Loading the bytes again later compiles them again.
   */
  releaseUnused(digest: string): void {
    const entry = this.compiled.get(digest);
    if (entry && entry.loads === 0) this.releaseModule(digest);
  }

  private releaseModule(digest: string): void {
    const entry = this.compiled.get(digest);
    if (!entry) return;
    this.idle.delete(digest);
    this.compiled.delete(digest);
    void entry.handle.then((module) => this.sandbox.release(module), () => undefined);
  }

  /** A read-only look at the sandbox's workers and the compile cache, for metrics. */
  stats(): FunctionHostStats {
    return {
      ...this.sandbox.stats(), compileCacheHits: this.compileCache.hits, compileCacheMisses: this.compileCache.misses, modules: this.compiled.size,
    };
  }

  discover(loaded: LoadedPackage): Promise<DiscoveryResult> {
    return discoverTools(this.sandbox, loaded.module, loaded.source, this.limits);
  }

  /** One call. Its status is `cancelled` when `ctx.signal` aborted: the run was stopped, its worker replaced. */
  async call(loaded: LoadedPackage, tool: string, args: Record<string, unknown>, ctx: FunctionCallContext): Promise<FunctionCallOutcome> {
    const limits = ctx.limits ? { ...this.limits, ...ctx.limits } : this.limits;
    try {
      return await callFunctionTool({ sandbox: this.sandbox, connections: () => this.connectionPool() }, loaded.module, loaded.source, tool, args, ctx, limits);
    } finally {
      // A call that failed before its run ended wrote nothing we know of; after the run's own settle, a no-op.
      ctx.volumeBudget?.settle(0);
    }
  }

  /**
   * The package's tools as Tools; `context()` gives each call its mounts and egress. A LoadedPackage is held
   * for the toolbox's life; a LentPackage is borrowed for each call and given back when it ends.
   */
  toolbox(pkg: LoadedPackage | LentPackage, tools: ToolInfo[], context: () => FunctionCallContext | Promise<FunctionCallContext>): Toolbox {
    const toolbox: Toolbox = {};
    for (const info of tools) toolbox[info.name] = this.tool(pkg, info, context);
    return toolbox;
  }

  private tool(pkg: LoadedPackage | LentPackage, info: ToolInfo, context: () => FunctionCallContext | Promise<FunctionCallContext>): Tool {
    return functionTool(pkg.source, info, async (args, callCtx) => {
      const base = await context();
      const ctx: FunctionCallContext = {
        ...base, signal: callCtx?.signal, ...(callCtx?.progress ? { progress: callCtx.progress } : {}),
        ...(callCtx?.traceparent !== undefined ? { traceparent: callCtx.traceparent } : {}),
      };
      if (callCtx?.timeoutMs !== undefined) {
        ctx.limits = { ...base.limits, callTimeoutMs: callDeadlineMs(base.limits?.callTimeoutMs ?? this.limits.callTimeoutMs, callCtx.timeoutMs) };
      }
      if (!('borrow' in pkg)) return this.call(pkg, info.name, args, ctx);
      const lent = await pkg.borrow();
      try {
        return await this.call(lent.loaded, info.name, args, ctx);
      } finally {
        lent.giveBack();
      }
    });
  }

  private connectionPool(): Promise<HttpsConnectionPool> {
    this.connections ??= loadEgress().then(({ HttpsConnectionPool }) => new HttpsConnectionPool());
    return this.connections;
  }

  async close(): Promise<void> {
    await Promise.all([this.sandbox.close(), this.connections?.then((pool) => pool.close())]);
  }
}
