/**
 * One typed configuration with defaults. Flags override environment variables, which override
 * `subako.config.json`, which overrides these defaults. Resolving is pure (`resolveServerConfig` for
 * `subako serve`, `resolveWorkerConfig` for `subako worker`); only `readConfigFile` touches the file system.
 *
 * A deployment shares one file. What replicas and workers must agree on sits at its top level and both read
 * it (`nats`, `natsPrefix`, `volumesDir`, `callTimeoutMs`, `memoryMiB`); what only a worker has, or what means
 * something else on a worker (its slots, its own data directory, its metrics listener), sits in the file's
 * `worker` object, so `"dataDir"` is never read as both the server's records and a worker's cache.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { Secret, subakoHome, systemErrorCode, withoutUndefined } from './common/index.js';
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
   * at once and may have waiting. Undefined: sized from the workers (a session half of them, an agent all but
   * one, all of them at one or two workers), queues of 16 per session and 64 per agent.
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
   * How long this server's lease in the database lasts, in ms (undefined: 30 s); a replica that died has its
   * running calls marked `interrupted` by another once its lease ran out. Longer than an hour would leave them
   * `running` that long; shorter than a second, a busy process could miss its own renewals.
   */
  instanceLeaseMs?: number;
  /**
   * The most read of one message a remote MCP server answers (a JSON body or one SSE event), in MiB (undefined:
   * 8); past it the call fails naming this setting, and the rest is not read.
   */
  remoteAnswerMiB?: number;
  /**
   * Where the records live: a `postgres://` URL (several replicas share it), or undefined for the SQLite file
   * in the data directory. A Secret from the moment it is read: the URL may hold a password.
   */
  database?: Secret;
  /**
   * Scale-out: the NATS server calls go to `subako worker` processes over, package bundles to its object store.
   * A Secret from the moment it is read: the URL may hold a user and password.
   */
  nats?: Secret;
  /** Names the deployment's NATS subjects and bucket (the rule of platform/nats-calls.ts's `natsSubjects`). */
  natsPrefix: string;
  /** The volumes root (undefined: `<dataDir>/volumes`); with NATS, a shared mount the workers see too. */
  volumesDir?: string;
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
  instanceLeaseMs: 'SUBAKO_INSTANCE_LEASE_MS',
  remoteAnswerMiB: 'SUBAKO_REMOTE_ANSWER_MIB',
});

/** What any one source (the file, the environment, the flags) may say: every key optional, the URLs as read. */
export type ServerConfigInput = Partial<Omit<ServerConfig, 'database' | 'nats'>> & { database?: string | Secret; nats?: string | Secret };

/** Settings whose values are never repeated in a problem (or anywhere): they may hold a password. */
const SECRET_SETTINGS: ReadonlySet<string> = new Set(['database', 'nats']);

/** The NATS prefix when none is given. */
export const DEFAULT_NATS_PREFIX = 'subako';

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
    natsPrefix: DEFAULT_NATS_PREFIX,
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

/** A PostgreSQL URL; the URL parser's own error is dropped, as it carries the input (and so the password). */
const postgresUrl: Check = (v) => {
  const wanted = 'a postgres:// (or postgresql://) URL';
  const value = v instanceof Secret ? v.reveal() : v;
  if (typeof value !== 'string' || !URL.canParse(value)) return wanted;
  return ['postgres:', 'postgresql:'].includes(new URL(value).protocol) ? null : wanted;
};

/**
 * A NATS server URL (`nats://`, or `tls://` for TLS from the first byte); as for the database, the parser's
 * own error is dropped because it carries the input.
 */
const natsUrl: Check = (v) => {
  const wanted = 'a nats:// (or tls://) URL';
  const value = v instanceof Secret ? v.reveal() : v;
  if (typeof value !== 'string' || !URL.canParse(value)) return wanted;
  const url = new URL(value);
  return ['nats:', 'tls:'].includes(url.protocol) && url.hostname !== '' ? null : wanted;
};

/**
 * The rule of platform/nats-calls.ts's `natsSubjects` (this leaf imports no room, so it is repeated here;
 * test/config-scale-out.test.ts holds the two to the same answers).
 */
const NATS_PREFIX = /^[A-Za-z0-9_-]{1,64}$/;
const natsPrefix: Check = (v) => (typeof v === 'string' && NATS_PREFIX.test(v) ? null : '1-64 of A-Z, a-z, 0-9, "_" and "-"');

const FIELDS: Record<keyof ServerConfig | 'worker', Check> = {
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
  instanceLeaseMs: wholeNumber(1_000, 3_600_000),
  remoteAnswerMiB: wholeNumber(1, 1024),
  allowPrivateDestinations: flag,
  database: postgresUrl,
  nats: natsUrl,
  natsPrefix,
  volumesDir: text,
  // subako worker's own settings, in the same file; serve checks what is in it too (resolveServerConfig), so a
  // typo there is caught by whichever starts first.
  worker: (v) => (isObject(v) ? null : `an object of subako worker's settings (${Object.keys(WORKER_SECTION).join(', ')})`),
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks one source; `where` names it in every problem ("subako.config.json", "SUBAKO_PORT", "--port"). */
export function checkConfigInput(input: Record<string, unknown>, where: (key: string) => string): Problem[] {
  return checkSettings(input, where, FIELDS);
}

function checkSettings(input: Record<string, unknown>, where: (key: string) => string, fields: Record<string, Check>): Problem[] {
  const problems: Problem[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const check = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (!check) {
      problems.push({ code: 'config.unknown', message: `${where(key)} is not a setting; known settings: ${Object.keys(fields).join(', ')}` });
      continue;
    }
    const wanted = check(value);
    const shown = SECRET_SETTINGS.has(key) ? 'not valid (its value is not shown)' : JSON.stringify(value);
    if (wanted) problems.push({ code: 'config.value', message: `${where(key)} is ${shown}; it takes ${wanted}` });
  }
  return problems;
}

/**
 * The environment's say: SUBAKO_PORT, SUBAKO_HOST, SUBAKO_DATA_DIR, SUBAKO_WORKERS, SUBAKO_CALL_TIMEOUT_MS,
 * SUBAKO_MEMORY_MIB, SUBAKO_DATABASE, and the limits' SUBAKO_SESSION_CONCURRENCY, SUBAKO_MAX_CONNECTIONS, … (LIMIT_ENV_NAMES).
 */
export function configFromEnv(env: NodeJS.ProcessEnv): { input: ServerConfigInput; names: Record<string, string> } {
  const names: Record<string, string> = {
    port: 'SUBAKO_PORT', host: 'SUBAKO_HOST', dataDir: 'SUBAKO_DATA_DIR', workers: 'SUBAKO_WORKERS', publicUrl: 'SUBAKO_PUBLIC_URL',
    callTimeoutMs: 'SUBAKO_CALL_TIMEOUT_MS', memoryMiB: 'SUBAKO_MEMORY_MIB', database: 'SUBAKO_DATABASE', ...SCALE_OUT_ENV_NAMES, ...LIMIT_ENV_NAMES,
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
  const section = sources.file?.input.worker;
  const problems = [
    ...(sources.file ? checkConfigInput(sources.file.input, (k) => `"${k}" in ${sources.file!.path}`) : []),
    ...(isObject(section) ? checkSettings(section, (k) => `"worker.${k}" in ${sources.file!.path}`, WORKER_SECTION) : []),
    ...checkConfigInput(fromEnv.input, (k) => fromEnv.names[k] ?? k),
    ...(sources.flags ? checkConfigInput(sources.flags.input, (k) => sources.flags!.names[k] ?? `--${k}`) : []),
  ];
  if (problems.length > 0) throw new ValidationError(problems);
  const merged = { ...sources.defaults, ...withoutUndefined(sources.file?.input), ...withoutUndefined(fromEnv.input), ...withoutUndefined(sources.flags?.input) } as
    Omit<ServerConfig, 'database' | 'nats'> & { database?: string | Secret; nats?: string | Secret; worker?: unknown };
  // The file's worker object is subako worker's (resolveWorkerConfig); serve only checked it.
  const { database, nats, worker: _worker, ...rest } = merged;
  return {
    ...rest, dataDir: resolve(merged.dataDir),
    ...(merged.volumesDir === undefined ? {} : { volumesDir: resolve(merged.volumesDir) }),
    ...(database === undefined ? {} : { database: Secret.from(database) }),
    ...(nats === undefined ? {} : { nats: Secret.from(nats) }),
  };
}

/** The scale-out settings' environment variables, the same for serve and worker. */
export const SCALE_OUT_ENV_NAMES: Readonly<Record<string, string>> = Object.freeze({
  nats: 'SUBAKO_NATS_URL',
  natsPrefix: 'SUBAKO_NATS_PREFIX',
  volumesDir: 'SUBAKO_VOLUMES_DIR',
});

/** `subako worker`'s settings, resolved. */
export interface WorkerConfig {
  /** The NATS server the API replicas use; required. A Secret: the URL may hold a user and password. */
  nats: Secret;
  natsPrefix: string;
  /** Slots: calls run at once. */
  pool: number;
  /** This worker's own directory: unpacked packages and the compiled-module cache. */
  dataDir: string;
  /** The shared volumes root (default `<dataDir>/volumes`). */
  volumesDir: string;
  /** The longest a call may run here, whatever the deadline it came with. */
  callTimeoutMs: number;
  memoryMiB: number;
  /** `/metrics` on this port when given (no API key: it binds `metricsHost`, loopback by default). */
  metricsPort?: number;
  metricsHost: string;
}

/** What a source may say of a worker: every key optional, the NATS URL as read. */
export type WorkerConfigInput = Partial<Omit<WorkerConfig, 'nats'>> & { nats?: string | Secret };

/** The keys of the file's `worker` object: only a worker has them, or they mean something else on serve. */
const WORKER_SECTION: Record<string, Check> = {
  pool: wholeNumber(1, 256),
  dataDir: text,
  metricsPort: wholeNumber(0, 65535),
  metricsHost: text,
};

/** The top-level keys of the file a worker reads: what it must agree on with the replicas. */
const WORKER_SHARED: Record<string, Check> = {
  nats: natsUrl,
  natsPrefix,
  volumesDir: text,
  callTimeoutMs: FIELDS.callTimeoutMs,
  memoryMiB: FIELDS.memoryMiB,
};

const WORKER_FIELDS: Record<keyof WorkerConfig, Check> = { ...WORKER_SHARED, ...WORKER_SECTION } as Record<keyof WorkerConfig, Check>;

/** A worker's environment variables; SUBAKO_WORKERS sizes its pool as it sizes serve's. */
export const WORKER_ENV_NAMES: Readonly<Record<keyof WorkerConfig, string>> = Object.freeze({
  ...(SCALE_OUT_ENV_NAMES as Record<'nats' | 'natsPrefix' | 'volumesDir', string>),
  pool: 'SUBAKO_WORKERS',
  dataDir: 'SUBAKO_WORKER_DATA_DIR',
  callTimeoutMs: 'SUBAKO_CALL_TIMEOUT_MS',
  memoryMiB: 'SUBAKO_MEMORY_MIB',
  metricsPort: 'SUBAKO_WORKER_METRICS_PORT',
  metricsHost: 'SUBAKO_WORKER_METRICS_HOST',
});

/** A worker's defaults; its volumes root follows its data directory unless set. */
export function defaultWorkerConfig(home = homedir(), cores = availableParallelism()): Omit<WorkerConfig, 'nats' | 'volumesDir'> {
  return {
    natsPrefix: DEFAULT_NATS_PREFIX,
    pool: Math.max(2, cores),
    dataDir: join(subakoHome(process.env, home), 'worker'),
    callTimeoutMs: DEFAULT_CALL_LIMITS.callTimeoutMs,
    memoryMiB: DEFAULT_CALL_LIMITS.memoryBytes / (1024 * 1024),
    metricsHost: '127.0.0.1',
  };
}

/**
 * `subako worker`'s layers, as serve's: defaults, the file (its top-level shared keys and its `worker`
 * object; serve's other keys are serve's business), the environment, the flags. Every problem at once; a
 * missing NATS URL is one of them, naming the three places it may be given.
 */
export function resolveWorkerConfig(sources: {
  defaults: Omit<WorkerConfig, 'nats' | 'volumesDir'>;
  file?: { path: string; input: Record<string, unknown> };
  env?: NodeJS.ProcessEnv;
  flags?: { input: Record<string, unknown>; names: Record<string, string> };
}): WorkerConfig {
  const problems: Problem[] = [];
  const fromFile: Record<string, unknown> = {};
  if (sources.file) {
    const { path, input } = sources.file;
    for (const key of Object.keys(WORKER_SHARED)) if (input[key] !== undefined) fromFile[key] = input[key];
    problems.push(...checkSettings(fromFile, (k) => `"${k}" in ${path}`, WORKER_SHARED));
    const section = input.worker;
    if (isObject(section)) {
      problems.push(...checkSettings(section, (k) => `"worker.${k}" in ${path}`, WORKER_SECTION));
      Object.assign(fromFile, section);
    } else if (section !== undefined) {
      problems.push(...checkSettings({ worker: section }, (k) => `"${k}" in ${path}`, { worker: FIELDS.worker }));
    }
  }
  const fromEnv: Record<string, unknown> = {};
  const numeric = new Set(['pool', 'callTimeoutMs', 'memoryMiB', 'metricsPort']);
  for (const [key, name] of Object.entries(WORKER_ENV_NAMES)) {
    const raw = sources.env?.[name];
    if (raw === undefined || raw === '') continue;
    fromEnv[key] = numeric.has(key) && /^[0-9]+$/.test(raw) ? Number(raw) : raw;
  }
  problems.push(...checkSettings(fromEnv, (k) => WORKER_ENV_NAMES[k as keyof WorkerConfig] ?? k, WORKER_FIELDS));
  if (sources.flags) problems.push(...checkSettings(sources.flags.input, (k) => sources.flags!.names[k] ?? `--${k}`, WORKER_FIELDS));
  const merged = { ...sources.defaults, ...withoutUndefined(fromFile), ...withoutUndefined(fromEnv), ...withoutUndefined(sources.flags?.input) } as
    Omit<WorkerConfig, 'nats' | 'volumesDir'> & { nats?: string | Secret; volumesDir?: string };
  if (merged.nats === undefined) {
    const inFile = sources.file ? `, or "nats" in ${sources.file.path}` : `, or "nats" in ${CONFIG_FILE}`;
    problems.push({ code: 'config.missing', message: `the NATS server the API replicas use is not set; give --nats URL, $SUBAKO_NATS_URL${inFile}` });
  }
  if (problems.length > 0) throw new ValidationError(problems);
  const dataDir = resolve(merged.dataDir);
  return { ...merged, nats: Secret.from(merged.nats!), dataDir, volumesDir: resolve(merged.volumesDir ?? join(dataDir, 'volumes')) };
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
