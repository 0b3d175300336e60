/**
 * What the platform needs from the package and function layers, in one narrow interface: read and check a
 * package directory, discover its tools, and hand out its tools bound to a call context. The real
 * implementation (function-runtime.ts) joins package/ (readPackageDir, checkPackage) and function/
 * (FunctionHost); the platform itself never touches WASM.
 */
import type { Problem } from '../errors.js';
import type { DiscoveryResult, FunctionCallContext, FunctionCallOutcome, ToolInfo } from '../function/index.js';
import type { Toolbox } from '../tool.js';

export interface PackageManifestInfo {
  name: string;
  description: string;
  /** The manifest's own version, when it declares one. */
  version: string | null;
  /** The manifest as read, for the package view. */
  raw: Record<string, unknown>;
}

export interface InspectedPackage {
  ok: boolean;
  problems: Problem[];
  manifest: PackageManifestInfo | null;
}

/** One stored package version, as the runtime loads it. */
export interface StoredPackageRef {
  name: string;
  version: string;
  digest: string;
  /** The unpacked package directory. */
  dir: string;
}

/** How a runtime that sends calls elsewhere (scale-out) sees the bus and the fleet, for `/v1/health`. */
export interface RuntimeHealth {
  /** Connected to the bus now. */
  connected: boolean;
  /** The live workers of this replica's protocol, their slots and how many run a call; workers of another protocol. */
  fleet: { workers: number; slots: number; busy: number; otherProtocol: number };
  /** Why no call could be sent now (no worker running, none of this protocol); null while one could. */
  noWorker: string | null;
}

export interface PackageRuntime {
  /** Reads the manifest and runs the module checks on an unpacked package directory. */
  inspect(dir: string): Promise<InspectedPackage>;
  /** Runs discovery (server/discover + tools/list) on a checked package. */
  discover(pkg: StoredPackageRef): Promise<DiscoveryResult>;
  /**
   * The package's tools, built once; each call runs with the context `context()` gives at that moment (fresh
   * credentials, the volume quota's reservation).
   */
  toolbox(pkg: StoredPackageRef, tools: ToolInfo[], context: () => FunctionCallContext | Promise<FunctionCallContext>): Promise<Toolbox>;
  /**
   * No stored package version has these bytes any more (the last was deleted): what was loaded for them is let
   * go (after the calls in flight). Calls of other packages are untouched.
   */
  release(digest: string): void;
  /** Waits for calls in flight, then stops the workers. */
  close(): Promise<void>;
  /** The bus and the fleet, for a runtime that sends its calls to workers elsewhere; absent when they run here. */
  health?(): RuntimeHealth;
  /**
   * The course of a durable call (ToolCallContext.durableKey) as its worker kept it, read through any replica:
   * null when none was kept (the call never reached a worker). Absent when calls run in this process.
   */
  durableCourse?(durableKey: string): Promise<DurableCallCourse | null>;
}

/** A durable call's course: running (and whether its worker is still live), or done with its outcome. */
export type DurableCallCourse = { state: 'running'; workerLive: boolean } | { state: 'done'; outcome: FunctionCallOutcome };
