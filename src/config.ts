/**
 * One typed configuration with defaults. Flags override environment variables, which override
 * `subako.config.json`, which overrides these defaults. Resolving is pure (`resolveServerConfig`); only
 * `readConfigFile` touches the file system.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { subakoHome, systemErrorCode } from './common/index.js';
import { ValidationError, type Problem } from './errors.js';

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

export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  /** Worker threads for function calls; undefined: one per core (at least two). */
  workers?: number;
  /** Load the example packages at first start. */
  examples: boolean;
  /** Browser origins allowed to reach MCP endpoints. */
  allowedOrigins: string[];
  /** The URL clients reach the server at (behind a proxy); URLs in answers are built from it. */
  publicUrl?: string;
  /** Call limits a server may set: the deadline and the memory cap. The ABI fixes the rest. */
  callTimeoutMs: number;
  memoryMiB: number;
  /**
   * Call admission (platform/call-admission.ts): calls one session, and all sessions of one agent, may run
   * at once and may have waiting. Undefined: sized from the workers (a session half of them, an agent all),
   * queues of 16 per session and 64 per agent.
   */
  sessionConcurrency?: number;
  sessionQueue?: number;
  agentConcurrency?: number;
  agentQueue?: number;
  /**
   * Connection limits (server/connection-limits.ts). Undefined: half the process's file-descriptor limit (at
   * most 4096) connections, 256 per client address (0: none), 10 s to send headers, 300 s to send a whole
   * request, 5 s idle keep-alive.
   */
  maxConnections?: number;
  maxConnectionsPerAddress?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  /** Quotas across calls, in MiB: a session's /volume/tmp, an agent's /volume/data (defaults: DEFAULT_CALL_LIMITS). */
  sessionVolumeMiB?: number;
  agentVolumeMiB?: number;
  /** The sandbox process's V8 heap limit, in MiB (undefined: Node's default). */
  sandboxHeapMiB?: number;
  /**
   * For local development only: function packages may reach loopback and private addresses that their
   * allowlist names (a test server on this machine). Off by default; never on a shared server.
   */
  allowPrivateDestinations?: boolean;
}

/** The fairness and connection limits: each setting's environment variable. */
export const LIMIT_ENV_NAMES: Readonly<Record<string, string>> = Object.freeze({
  sessionConcurrency: 'SUBAKO_SESSION_CONCURRENCY',
  sessionQueue: 'SUBAKO_SESSION_QUEUE',
  agentConcurrency: 'SUBAKO_AGENT_CONCURRENCY',
  agentQueue: 'SUBAKO_AGENT_QUEUE',
  maxConnections: 'SUBAKO_MAX_CONNECTIONS',
  maxConnectionsPerAddress: 'SUBAKO_MAX_CONNECTIONS_PER_ADDRESS',
  headersTimeoutMs: 'SUBAKO_HEADERS_TIMEOUT_MS',
  requestTimeoutMs: 'SUBAKO_REQUEST_TIMEOUT_MS',
  keepAliveTimeoutMs: 'SUBAKO_KEEP_ALIVE_TIMEOUT_MS',
  sessionVolumeMiB: 'SUBAKO_SESSION_VOLUME_MIB',
  agentVolumeMiB: 'SUBAKO_AGENT_VOLUME_MIB',
  sandboxHeapMiB: 'SUBAKO_SANDBOX_HEAP_MIB',
});

/** What any one source (the file, the environment, the flags) may say: every key optional. */
export type ServerConfigInput = Partial<ServerConfig>;

export const CONFIG_FILE = 'subako.config.json';

export function defaultServerConfig(home = homedir()): ServerConfig {
  return {
    port: 7070,
    host: '127.0.0.1',
    dataDir: join(subakoHome(process.env, home), 'server'),
    examples: true,
    allowedOrigins: [],
    callTimeoutMs: DEFAULT_CALL_LIMITS.callTimeoutMs,
    memoryMiB: DEFAULT_CALL_LIMITS.memoryBytes / (1024 * 1024),
  };
}

type Check = (value: unknown) => string | null;
const wholeNumber = (min: number, max: number): Check => (v) =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max ? null : `a whole number from ${min} to ${max}`;
const text: Check = (v) => (typeof v === 'string' && v.length > 0 ? null : 'a non-empty string');
const flag: Check = (v) => (typeof v === 'boolean' ? null : 'true or false');
const texts: Check = (v) => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? null : 'an array of strings');
const httpUrl: Check = (v) => {
  try {
    const url = new URL(String(v));
    return typeof v === 'string' && (url.protocol === 'https:' || url.protocol === 'http:') && !url.search && !url.hash
      ? null : 'an http(s) URL without query or fragment';
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    return 'an http(s) URL without query or fragment';
  }
};

const FIELDS: Record<keyof ServerConfig, Check> = {
  port: wholeNumber(0, 65535),
  host: text,
  dataDir: text,
  workers: wholeNumber(1, 256),
  examples: flag,
  allowedOrigins: texts,
  publicUrl: httpUrl,
  callTimeoutMs: wholeNumber(100, 3_600_000),
  memoryMiB: wholeNumber(16, 4096),
  sessionConcurrency: wholeNumber(1, 1024),
  sessionQueue: wholeNumber(0, 10_000),
  agentConcurrency: wholeNumber(1, 4096),
  agentQueue: wholeNumber(0, 100_000),
  maxConnections: wholeNumber(1, 1_000_000),
  maxConnectionsPerAddress: wholeNumber(0, 1_000_000),
  headersTimeoutMs: wholeNumber(100, 3_600_000),
  requestTimeoutMs: wholeNumber(0, 86_400_000),
  keepAliveTimeoutMs: wholeNumber(100, 3_600_000),
  sessionVolumeMiB: wholeNumber(1, 16 * 1024 * 1024),
  agentVolumeMiB: wholeNumber(1, 16 * 1024 * 1024),
  sandboxHeapMiB: wholeNumber(64, 65_536),
  allowPrivateDestinations: flag,
};

/** Checks one source; `where` names it in every problem ("subako.config.json", "SUBAKO_PORT", "--port"). */
export function checkConfigInput(input: Record<string, unknown>, where: (key: string) => string): Problem[] {
  const problems: Problem[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const check = FIELDS[key as keyof ServerConfig];
    if (!check) {
      problems.push({ code: 'config.unknown', message: `${where(key)} is not a setting; known settings: ${Object.keys(FIELDS).join(', ')}` });
      continue;
    }
    const wanted = check(value);
    if (wanted) problems.push({ code: 'config.value', message: `${where(key)} is ${JSON.stringify(value)}; it takes ${wanted}` });
  }
  return problems;
}

/**
 * The environment's say: SUBAKO_PORT, SUBAKO_HOST, SUBAKO_DATA_DIR, SUBAKO_WORKERS, SUBAKO_CALL_TIMEOUT_MS,
 * SUBAKO_MEMORY_MIB, and the limits' SUBAKO_SESSION_CONCURRENCY, SUBAKO_MAX_CONNECTIONS, … (LIMIT_ENV_NAMES).
 */
export function configFromEnv(env: NodeJS.ProcessEnv): { input: ServerConfigInput; names: Record<string, string> } {
  const names: Record<string, string> = {
    port: 'SUBAKO_PORT', host: 'SUBAKO_HOST', dataDir: 'SUBAKO_DATA_DIR', workers: 'SUBAKO_WORKERS', publicUrl: 'SUBAKO_PUBLIC_URL',
    callTimeoutMs: 'SUBAKO_CALL_TIMEOUT_MS', memoryMiB: 'SUBAKO_MEMORY_MIB', ...LIMIT_ENV_NAMES,
  };
  const numeric = new Set(['port', 'workers', 'callTimeoutMs', 'memoryMiB', ...Object.keys(LIMIT_ENV_NAMES)]);
  const input: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(names)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    input[key] = numeric.has(key) && /^[0-9]+$/.test(raw) ? Number(raw) : raw;
  }
  return { input: input as ServerConfigInput, names };
}

/**
 * Layers the sources, later ones winning: defaults, the config file, the environment, the flags. Every
 * problem in every source is reported at once (a ValidationError), each naming its source.
 */
export function resolveServerConfig(sources: {
  defaults: ServerConfig;
  file?: { path: string; input: Record<string, unknown> };
  env?: NodeJS.ProcessEnv;
  flags?: { input: Record<string, unknown>; names: Record<string, string> };
}): ServerConfig {
  const fromEnv = configFromEnv(sources.env ?? {});
  const problems = [
    ...(sources.file ? checkConfigInput(sources.file.input, (k) => `"${k}" in ${sources.file!.path}`) : []),
    ...checkConfigInput(fromEnv.input, (k) => fromEnv.names[k] ?? k),
    ...(sources.flags ? checkConfigInput(sources.flags.input, (k) => sources.flags!.names[k] ?? `--${k}`) : []),
  ];
  if (problems.length > 0) throw new ValidationError(problems);
  const defined = (input: Record<string, unknown> | undefined) =>
    Object.fromEntries(Object.entries(input ?? {}).filter(([, v]) => v !== undefined));
  const merged = { ...sources.defaults, ...defined(sources.file?.input), ...defined(fromEnv.input), ...defined(sources.flags?.input) } as ServerConfig;
  return { ...merged, dataDir: resolve(merged.dataDir) };
}

/** Reads `subako.config.json` (or the path given); a missing default file is no error, a missing named one is. */
export function readConfigFile(path: string | undefined, cwd = process.cwd()): { path: string; input: Record<string, unknown> } | undefined {
  const file = resolve(cwd, path ?? CONFIG_FILE);
  let textContent: string;
  try {
    textContent = readFileSync(file, 'utf8');
  } catch (error) {
    // Only the default file's absence is quiet; one that is there but unreadable (EACCES, EISDIR) is refused.
    const code = systemErrorCode(error);
    if (code === undefined) throw error;
    if (path === undefined && code === 'ENOENT') return undefined;
    throw new ValidationError([{ code: 'config.file', message: `the config file ${file} cannot be read (${code})` }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(textContent);
  } catch (err) {
    throw new ValidationError([{ code: 'config.file', message: `${file} is not valid JSON (${(err as Error).message})` }]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError([{ code: 'config.file', message: `${file} must hold a JSON object of settings` }]);
  }
  return { path: file, input: value as Record<string, unknown> };
}
