/**
 * The contract of function/: ABI 1 on top of the sandbox. A function package is discovered once (on upload)
 * and called many times; each call is one stateless MCP conversation with a fresh instance.
 *
 *   const host = new FunctionHost({ poolSize, limits });
 *   const loaded = await host.load({ name, version, moduleBytes, assetsDir });   // compiles once
 *   const discovery = await host.discover(loaded);          // { ok, problems, tools }
 *   const outcome = await host.call(loaded, 'greet', { name: 'Ada' }, ctx);   // FunctionCallOutcome
 *   const toolbox = host.toolbox(loaded, discovery.tools, () => ctx);          // Record<string, Tool>
 *   await host.close();
 */
import type { Problem } from '../errors.js';
import type { CallStatus, CallToolResult, ContentBlock, JsonSchema, ProgressReporter } from '../tool.js';
import type { CallLimits } from '../config.js';
import type { CompiledPolicy, EgressLogEntry } from '../egress/index.js';

/** A package as the runtime needs it: its module and, when it has assets, the directory behind /package. */
export interface PackageSource {
  name: string;
  version?: string;
  description?: string;
  moduleBytes: Uint8Array;
  assetsDir: string | null;
}

/** A tool as `tools/list` described it (validated against the ABI 1 tool rules). */
export interface ToolInfo {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  title?: string;
  annotations?: Record<string, unknown>;
}

export interface DiscoveryResult {
  ok: boolean;
  problems: Problem[];
  /** Null when discovery was refused. */
  tools: ToolInfo[] | null;
  durationMs: number;
}

/** The egress side of a call: who the function may reach, and the credentials the session's vaults hold. */
export interface EgressGrant {
  allow: string[];
  grants: string[];
  privateDestinations?: 'deny' | 'allow';
  credentials: { origin: string; headers: Record<string, string> }[];
  /** Extra trusted CA certificates (PEM), for tests and private deployments. */
  ca?: string | string[];
  /**
   * `allow`, `grants` and `privateDestinations` compiled once, when the caller compiles them for many calls (a
   * session's toolbox); compiled for the call when absent. Never travels (a worker compiles its own).
   */
  compiled?: CompiledPolicy;
}

export interface FunctionCallContext {
  /**
   * Host directory behind /volume/tmp; it must exist. The caller owns its volumes and makes them (the platform's
   * Volumes once per directory, `subako call` for its own): a call never asks the file system whether they do.
   */
  tmpDir: string;
  /** Host directory behind /volume/data, which must exist; mounted only when given. */
  dataDir?: string;
  /**
   * A host directory whose subdirectories are skills: mounted read-only at /skills, and each subdirectory
   * again at /skills/<name>, after the package (the page's preopen order).
   */
  skillsDir?: string;
  /** Absent: no network (every subako_http request answers host_not_allowed). */
  egress?: EgressGrant;
  /** Per-call limits. The memory cap is the host's, fixed when the module is compiled. */
  limits?: Partial<Omit<CallLimits, 'memoryBytes'>>;
  /**
   * What the volumes' quotas leave this call to write (reserved by the platform before the call): the run's
   * write budget is at most `bytes`, and `settle` is told what the run wrote when it ends.
   */
  volumeBudget?: { readonly bytes: number; settle(written: number): void };
  signal?: AbortSignal;
  /** The caller wants progress: the guest's `notifications/progress` lines are relayed here (rate-limited). */
  progress?: ProgressReporter;
  /** The W3C trace context of the request that made the call: the `traceparent` of the guest's HTTP requests. */
  traceparent?: string;
}

export interface CrashInfo {
  /** A stable reason code: jsonrpc_error, result_type, not_jsonrpc, unknown_id, module_request, exited_early,
   *  exit_status, no_exit, trap, out_of_memory, timeout, stdout_limit, bad_result, sandbox_crashed, stopped, unavailable, interrupted. */
  reason: string;
  message: string;
  /** The last 4 KiB of stderr, as text. */
  stderr: string;
}

export interface FunctionCallOutcome {
  /** `cancelled` when the call's signal aborted: the run was stopped (not a crash: `crash` is null). */
  status: CallStatus;
  result: CallToolResult | null;
  /** What the model sees: text, images (downscaled), notes. */
  model: ContentBlock[];
  crash: CrashInfo | null;
  durationMs: number;
  /** The call's egress log (method, url, status or error kind, bytes, time). */
  egress: EgressLogEntry[];
  /** The last 4 KiB of stderr, whatever the status (a crash also carries it in `crash`). */
  stderr: string;
}
