/**
 * The ways a function call (or discovery) crashes, each a stable reason code that logs, the CLI and
 * tests match on. The ABI page lists them; `bad_result` is ours (an answer that is not a CallToolResult).
 */
export const CrashReason = {
  jsonrpcError: 'jsonrpc_error',
  resultType: 'result_type',
  notJsonRpc: 'not_jsonrpc',
  unknownId: 'unknown_id',
  moduleRequest: 'module_request',
  exitedEarly: 'exited_early',
  exitStatus: 'exit_status',
  noExit: 'no_exit',
  trap: 'trap',
  outOfMemory: 'out_of_memory',
  timeout: 'timeout',
  stdoutLimit: 'stdout_limit',
  badResult: 'bad_result',
  /** Ours: the sandbox process holding the run ended (a guest's fatal error in V8, or it was killed). */
  sandboxCrashed: 'sandbox_crashed',
  /**
   * Ours: the run was stopped from outside before it ended (a kill that is not the guest's doing). A call
   * whose caller went away is not a crash but its own status, `cancelled` (call.ts); the platform logs a call
   * stopped because its session or agent was deleted with this reason.
   */
  stopped: 'stopped',
  /**
   * Ours (calls dispatched to workers over NATS): no worker took the call within its deadline (every worker
   * busy, none running, or the bus unreachable). The call never started.
   */
  unavailable: 'unavailable',
  /**
   * Ours: what ran the call went away mid-call — the worker stopped answering (its process or machine ended),
   * or the server holding the call died (marked at its next start, or by another replica once its lease ran
   * out). The call is never retried: it may have had side effects.
   */
  interrupted: 'interrupted',
} as const;

export type CrashReasonCode = (typeof CrashReason)[keyof typeof CrashReason];

export interface Crash {
  reason: CrashReasonCode;
  message: string;
}

export const crash = (reason: CrashReasonCode, message: string): Crash => ({ reason, message });
