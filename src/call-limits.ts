/**
 * The limits a function call runs under, and their defaults: a leaf beside common/ that any room imports
 * (config.ts re-exports them; the server's settings that change some of them are declared in settings.ts).
 */

/**
 * What a function call runs under: its deadlines, its memory, output and write caps, and the volume quotas its
 * writes count against. Not the caps on a module's shape (wasm/'s `ModuleLimits`), nor call admission
 * (platform/'s `CallAdmissionLimits`), nor connections (server/'s `ConnectionLimits`).
 */
export interface CallLimits {
  /** Wall-clock deadline of one call, in milliseconds. */
  callTimeoutMs: number;
  /** Discovery (server/discover + tools/list) deadline, in milliseconds. */
  discoveryTimeoutMs: number;
  /** How long a module may run after stdin closes before the call is a crash (`no_exit`). */
  exitGraceMs: number;
  /** Cap on a guest's linear memory, in bytes. */
  memoryBytes: number;
  /** Cap on what a guest may print to stdout in one call, in bytes. */
  stdoutBytes: number;
  /** How much of stderr's end is kept, in bytes. */
  stderrTailBytes: number;
  /** Bytes a call may write to files, counted across files (EDQUOT past it). */
  writeBudgetBytes: number;
  /** Bytes a session's /volume/tmp holds across its calls, each entry counted at a fixed cost (EDQUOT past it). */
  sessionVolumeBytes: number;
  /** Bytes an agent's /volume/data holds across all its sessions' calls, counted the same way. */
  agentVolumeBytes: number;
}

export const DEFAULT_CALL_LIMITS: Readonly<CallLimits> = Object.freeze({
  callTimeoutMs: 30_000,
  discoveryTimeoutMs: 10_000,
  exitGraceMs: 1_000,
  memoryBytes: 512 * 1024 * 1024,
  stdoutBytes: 1024 * 1024,
  stderrTailBytes: 4 * 1024,
  writeBudgetBytes: 1024 * 1024 * 1024,
  sessionVolumeBytes: 2 * 1024 ** 3,
  agentVolumeBytes: 8 * 1024 ** 3,
});
