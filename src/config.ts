/**
 * One typed configuration with defaults. Flags override environment variables, which override
 * `subako.config.json`, which overrides these defaults.
 */
export interface Limits {
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
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  callTimeoutMs: 30_000,
  discoveryTimeoutMs: 10_000,
  exitGraceMs: 1_000,
  memoryBytes: 512 * 1024 * 1024,
  stdoutBytes: 1024 * 1024,
  stderrTailBytes: 4 * 1024,
  writeBudgetBytes: 1024 * 1024 * 1024,
});

export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  workers: number;
  limits: Limits;
}
