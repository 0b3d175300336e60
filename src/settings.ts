/**
 * Every setting of `subako serve` and `subako worker`, each declared once: its name (the field of the resolved
 * configuration and its key in subako.config.json), what it takes, its default, its unit, its environment
 * variable, its flag, its section of the file, and what each command's --help says of it. From this table
 * come the configuration's types (`ConfigOf`), its checks, the environment's reading and the file's (config.ts),
 * and each command's flags and help (cli/setting-options.ts). To add a setting, add it here, then use it where
 * it goes (app.ts hands the resolved configuration to the parts it builds).
 *
 * One table for the deployment rather than one per room: config.ts resolves it and is a leaf that imports no
 * room, so the declarations sit on the same floor.
 *
 * The file's top level is what the whole deployment reads and must agree on; the `worker` object holds what
 * only a worker has, or what means something else on a worker (its slots, its own data directory, its metrics
 * listener), so `"dataDir"` is never read as both the server's records and a worker's cache.
 */
import { join } from 'node:path';
import { subakoHome } from './common/first-call.js';
import { DEFAULT_CALL_LIMITS } from './call-limits.js';
import {
  claimName, directory, httpUrl, natsPrefix, natsUrl, nonEmptyText, oneOf, onOff, postgresUrl, scopeList, textList, wholeNumber,
  type AnyKind, type KindInput, type KindOutput,
} from './setting-kinds.js';

export type SettingsCommand = 'serve' | 'worker';
export const SETTINGS_COMMANDS: readonly SettingsCommand[] = ['serve', 'worker'];

/** The sections of subako.config.json: its top level, and the `worker` object. */
export type SettingsSection = 'top' | 'worker';

/** What a default may be made from: the user's home directory and the machine's cores. */
export interface SettingsMachine {
  home: string;
  cores: number;
}

export interface SettingDeclaration<K extends AnyKind = AnyKind> {
  /** The field of the resolved configuration, and the key in the file (inside its section). */
  readonly name: string;
  readonly kind: K;
  /** Where in the file it is; the top level when absent. */
  readonly section?: 'worker';
  /** What it is when no source says: a value, or one made from the machine. Absent: unset (the part that uses it decides). */
  readonly default?: KindInput<K> | ((machine: SettingsMachine) => KindInput<K>);
  /** The default as --help gives it, when it is made from the machine or decided by the part that uses it: a number, or words. */
  readonly shownDefault?: number | string;
  readonly unit?: 'ms' | 'MiB';
  readonly env?: `SUBAKO_${string}`;
  /** The flag with its argument's name (`--port <port>`); a switch is `--x`, or `--no-x` to set false. */
  readonly flag?: `--${string}`;
  /** The commands that take it, each with what its --help says. */
  readonly help: { readonly [C in SettingsCommand]?: string };
  /** The commands that refuse to start without it, each with what the refusal calls it. */
  readonly requiredBy?: { readonly [C in SettingsCommand]?: string };
}

/** A declaration, its kind inferred and its literal fields kept, so the configuration's types come from it. */
function setting<K extends AnyKind, const D extends Omit<SettingDeclaration<K>, 'kind'>>(kind: K, declaration: D): D & { readonly kind: K } {
  return { ...declaration, kind };
}

const MiB = 1024 * 1024;

/**
 * The declarations. Their order is the order of the file's keys in a refusal ("known settings: …") and of the
 * flags in --help.
 */
export const SETTINGS = [
  setting(wholeNumber(0, 65535), { name: 'port', default: 7070, env: 'SUBAKO_PORT', flag: '--port <port>', help: { serve: 'TCP port to listen on' } }),
  setting(nonEmptyText, {
    name: 'host', default: '127.0.0.1', env: 'SUBAKO_HOST', flag: '--host <host>',
    help: { serve: 'address to bind; keep 127.0.0.1 unless a proxy fronts it' },
  }),
  setting(directory, {
    name: 'dataDir', default: ({ home }) => join(subakoHome(process.env, home), 'server'), shownDefault: '~/.subako/server',
    env: 'SUBAKO_DATA_DIR', flag: '--data-dir <dir>', help: { serve: 'where the database, packages and volumes live' },
  }),
  setting(wholeNumber(1, 256), {
    name: 'workers', shownDefault: 'one per core, at least two', env: 'SUBAKO_WORKERS', flag: '--workers <n>',
    help: { serve: 'worker threads for function calls' },
  }),
  setting(onOff, { name: 'examples', default: true, flag: '--no-examples', help: { serve: 'do not load the example packages at first start' } }),
  // Off by default: a JSON line per request drowned the few lines a person starting `subako serve` reads.
  setting(onOff, {
    name: 'accessLog', default: false, env: 'SUBAKO_ACCESS_LOG', flag: '--access-log',
    help: { serve: 'write a JSON access-log line per request (method, route template, status, duration) to stderr' },
  }),
  setting(textList, {
    name: 'allowedOrigins', default: () => [], flag: '--allow-origin <origin>',
    help: { serve: 'a browser origin allowed to reach MCP endpoints (repeatable; loopback origins and clients without an Origin always are)' },
  }),
  setting(httpUrl, {
    name: 'publicUrl', env: 'SUBAKO_PUBLIC_URL', flag: '--public-url <url>',
    help: { serve: 'the URL clients reach this server at, behind a proxy; URLs in answers are built from it' },
  }),
  // OAuth at the door (server/oauth-door.ts): off unless an issuer is set; then the audience and the JWKS too.
  setting(httpUrl, {
    name: 'oauthIssuer', env: 'SUBAKO_OAUTH_ISSUER', flag: '--oauth-issuer <url>',
    help: { serve: "OAuth at the door: the authorization server (the token's iss) whose access tokens the MCP endpoints accept" },
  }),
  setting(nonEmptyText, {
    name: 'oauthAudience', env: 'SUBAKO_OAUTH_AUDIENCE', flag: '--oauth-audience <aud>',
    help: { serve: "with --oauth-issuer: the audience (aud) a token must be for; a token for another is refused" },
  }),
  setting(httpUrl, {
    name: 'oauthJwksUrl', env: 'SUBAKO_OAUTH_JWKS_URL', flag: '--oauth-jwks-url <url>',
    help: { serve: "with --oauth-issuer: where the authorization server's signing keys (a JWK set) are" },
  }),
  setting(scopeList, {
    name: 'oauthScope', env: 'SUBAKO_OAUTH_SCOPE', flag: '--oauth-scope <scopes>',
    help: { serve: 'with --oauth-issuer: the scopes (separated by spaces) a token must carry; none by default' },
  }),
  setting(claimName, {
    name: 'oauthUserClaim', default: 'sub', env: 'SUBAKO_OAUTH_USER_CLAIM', flag: '--oauth-user-claim <claim>',
    help: { serve: "with --oauth-issuer: the token's claim that is the platform user's id" },
  }),
  setting(oneOf(['refuse', 'create'] as const), {
    name: 'oauthUnknownUsers', default: 'refuse', env: 'SUBAKO_OAUTH_UNKNOWN_USERS', flag: '--oauth-unknown-users <mode>',
    help: { serve: 'with --oauth-issuer: a token whose user does not exist is refused, or the user is created' },
  }),
  setting(wholeNumber(100, 3_600_000), {
    name: 'callTimeoutMs', default: DEFAULT_CALL_LIMITS.callTimeoutMs, unit: 'ms', env: 'SUBAKO_CALL_TIMEOUT_MS', flag: '--call-timeout-ms <ms>',
    help: { serve: 'wall-clock deadline of one function call', worker: 'the longest a call may run here, whatever its deadline' },
  }),
  setting(wholeNumber(16, 4096), {
    name: 'memoryMiB', default: DEFAULT_CALL_LIMITS.memoryBytes / MiB, unit: 'MiB', env: 'SUBAKO_MEMORY_MIB', flag: '--memory <MiB>',
    help: { serve: 'memory cap of a function call', worker: 'memory cap of a function call' },
  }),
  // Call admission (platform/calls/): unset, each is sized from the workers.
  setting(wholeNumber(1, 1024), {
    name: 'sessionConcurrency', shownDefault: 'half the workers (scale-out: of the fleet\'s slots)', env: 'SUBAKO_SESSION_CONCURRENCY', flag: '--session-concurrency <n>',
    help: { serve: 'calls one session may run at once (scale-out: across all replicas)' },
  }),
  setting(wholeNumber(0, 10_000), {
    name: 'sessionQueue', shownDefault: 16, env: 'SUBAKO_SESSION_QUEUE', flag: '--session-queue <n>',
    help: { serve: 'calls one session may have waiting; more are refused with 429' },
  }),
  setting(wholeNumber(1, 4096), {
    name: 'agentConcurrency', shownDefault: 'all workers (scale-out: the fleet\'s slots) but one; all of them at 1 or 2', env: 'SUBAKO_AGENT_CONCURRENCY',
    flag: '--agent-concurrency <n>', help: { serve: 'calls all sessions of one agent may run at once (scale-out: across all replicas)' },
  }),
  setting(wholeNumber(0, 100_000), {
    name: 'agentQueue', shownDefault: 64, env: 'SUBAKO_AGENT_QUEUE', flag: '--agent-queue <n>',
    help: { serve: 'calls all sessions of one agent may have waiting' },
  }),
  // Connection limits (server/connection-limits.ts): unset, each takes the server's default.
  setting(wholeNumber(1, 1_000_000), {
    name: 'maxConnections', shownDefault: 'half the open-file limit, at most 4096', env: 'SUBAKO_MAX_CONNECTIONS', flag: '--max-connections <n>',
    help: { serve: 'connections held at once' },
  }),
  setting(wholeNumber(0, 1_000_000), {
    name: 'maxConnectionsPerAddress', shownDefault: 256, env: 'SUBAKO_MAX_CONNECTIONS_PER_ADDRESS', flag: '--max-connections-per-address <n>',
    help: { serve: 'connections one client address may hold; 0 for no limit, behind a proxy' },
  }),
  setting(wholeNumber(100, 3_600_000), {
    name: 'headersTimeoutMs', shownDefault: 10_000, unit: 'ms', env: 'SUBAKO_HEADERS_TIMEOUT_MS', flag: '--headers-timeout-ms <ms>',
    help: { serve: 'time a connection has to send request headers' },
  }),
  setting(wholeNumber(0, 86_400_000), {
    name: 'requestTimeoutMs', shownDefault: 300_000, unit: 'ms', env: 'SUBAKO_REQUEST_TIMEOUT_MS', flag: '--request-timeout-ms <ms>',
    help: { serve: 'time a connection has to send a whole request, body included; 0 for none' },
  }),
  setting(wholeNumber(100, 3_600_000), {
    name: 'keepAliveTimeoutMs', shownDefault: 5_000, unit: 'ms', env: 'SUBAKO_KEEP_ALIVE_TIMEOUT_MS', flag: '--keep-alive-timeout-ms <ms>',
    help: { serve: 'how long an idle keep-alive connection is kept' },
  }),
  // Volume quotas across calls: unset, the call limits' defaults.
  setting(wholeNumber(1, 16 * 1024 * 1024), {
    name: 'sessionVolumeMiB', shownDefault: DEFAULT_CALL_LIMITS.sessionVolumeBytes / MiB, unit: 'MiB', env: 'SUBAKO_SESSION_VOLUME_MIB',
    flag: '--session-volume-mib <n>', help: { serve: "what a session's /volume/tmp holds across its calls" },
  }),
  setting(wholeNumber(1, 16 * 1024 * 1024), {
    name: 'agentVolumeMiB', shownDefault: DEFAULT_CALL_LIMITS.agentVolumeBytes / MiB, unit: 'MiB', env: 'SUBAKO_AGENT_VOLUME_MIB',
    flag: '--agent-volume-mib <n>', help: { serve: "what an agent's /volume/data holds across its sessions' calls" },
  }),
  setting(wholeNumber(64, 65_536), {
    name: 'sandboxHeapMiB', shownDefault: "Node's", unit: 'MiB', env: 'SUBAKO_SANDBOX_HEAP_MIB', flag: '--sandbox-heap-mib <n>',
    help: { serve: "the sandbox process's V8 heap limit" },
  }),
  // Longer than an hour would leave a dead replica's calls `running` that long; shorter than a second, a busy
  // process could miss its own renewals.
  setting(wholeNumber(1_000, 3_600_000), {
    name: 'instanceLeaseMs', shownDefault: 30_000, unit: 'ms', env: 'SUBAKO_INSTANCE_LEASE_MS', flag: '--instance-lease-ms <ms>',
    help: { serve: "how long this replica's lease in the database lasts; a dead replica's calls are marked interrupted after it" },
  }),
  // Longer than a minute would leave a server killed outright without the records of a minute of calls.
  setting(wholeNumber(0, 60_000), {
    name: 'callRecordDelayMs', shownDefault: 100, unit: 'ms', env: 'SUBAKO_CALL_RECORD_DELAY_MS', flag: '--call-record-delay-ms <ms>',
    help: { serve: "how long a call may run before its running record is written (a quicker call is written once, as it ends); 0: before it runs" },
  }),
  setting(wholeNumber(1, 1024), {
    name: 'remoteAnswerMiB', shownDefault: 8, unit: 'MiB', env: 'SUBAKO_REMOTE_ANSWER_MIB', flag: '--remote-answer-mib <n>',
    help: { serve: 'the most read of one message a remote MCP server answers; past it the call fails' },
  }),
  // Tasks for long calls (the io.modelcontextprotocol/tasks extension, platform/tasks/).
  setting(wholeNumber(1_000, 604_800_000), {
    name: 'taskTtlMs', shownDefault: 3_600_000, unit: 'ms', env: 'SUBAKO_TASK_TTL_MS', flag: '--task-ttl-ms <ms>',
    help: { serve: "how long a task of a session's call is kept for its client to read (never past its session's end)" },
  }),
  setting(wholeNumber(50, 60_000), {
    name: 'taskPollIntervalMs', shownDefault: 1_000, unit: 'ms', env: 'SUBAKO_TASK_POLL_INTERVAL_MS', flag: '--task-poll-interval-ms <ms>',
    help: { serve: 'how often clients are asked to poll a task' },
  }),
  setting(wholeNumber(1, 10_000), {
    name: 'sessionTaskLimit', shownDefault: 32, env: 'SUBAKO_SESSION_TASK_LIMIT', flag: '--session-task-limit <n>',
    help: { serve: 'tasks not yet ended one session may hold; a call past it is refused' },
  }),
  setting(onOff, {
    name: 'allowPrivateDestinations', flag: '--allow-private-destinations',
    help: { serve: 'local development only: packages may reach loopback and private addresses their allowlist names; never on a shared server' },
  }),
  setting(postgresUrl, {
    name: 'database', shownDefault: 'SQLite in the data directory', env: 'SUBAKO_DATABASE', flag: '--database <url>',
    help: { serve: 'a postgres:// URL to keep the records in PostgreSQL; prefer the variable or the config file, as flags show in process lists' },
  }),
  // Scale-out: what the replicas and the workers must agree on.
  setting(natsUrl, {
    name: 'nats', env: 'SUBAKO_NATS_URL', flag: '--nats <url>',
    help: {
      serve: 'scale-out: send calls to `subako worker` processes over this nats:// (or tls://) server, bundles to its object store; prefer the variable or the config file when it holds a password',
      worker: 'the nats:// (or tls://) server, JetStream enabled, the API replicas use; prefer the variable or the config file when the URL holds a password',
    },
    requiredBy: { worker: 'the NATS server the API replicas use' },
  }),
  setting(natsPrefix, {
    name: 'natsPrefix', default: 'subako', env: 'SUBAKO_NATS_PREFIX', flag: '--nats-prefix <name>',
    help: { serve: "with --nats: the deployment's subjects and buckets", worker: "the deployment's subjects and buckets, as given to serve" },
  }),
  setting(directory, {
    name: 'volumesDir', shownDefault: '<data-dir>/volumes', env: 'SUBAKO_VOLUMES_DIR', flag: '--volumes-dir <dir>',
    help: { serve: 'the volumes root; with --nats, a shared mount the workers see too', worker: "the shared volumes root, the same file system as serve's" },
  }),
  // The file's `worker` object: subako worker's own.
  setting(wholeNumber(1, 256), {
    name: 'pool', section: 'worker', default: ({ cores }) => Math.max(2, cores), shownDefault: 'one per core, at least two',
    env: 'SUBAKO_WORKERS', flag: '--pool <n>', help: { worker: 'calls run at once' },
  }),
  setting(directory, {
    name: 'dataDir', section: 'worker', default: ({ home }) => join(subakoHome(process.env, home), 'worker'), shownDefault: '~/.subako/worker',
    env: 'SUBAKO_WORKER_DATA_DIR', flag: '--data-dir <dir>', help: { worker: "this worker's own directory: unpacked packages and compiled-module cache" },
  }),
  setting(wholeNumber(0, 65535), {
    name: 'metricsPort', section: 'worker', env: 'SUBAKO_WORKER_METRICS_PORT', flag: '--metrics-port <port>',
    help: { worker: 'serve GET /metrics (slots, calls, sandbox, process) on this port; it asks no API key, so it binds loopback unless --metrics-host says otherwise' },
  }),
  setting(nonEmptyText, {
    name: 'metricsHost', section: 'worker', default: '127.0.0.1', env: 'SUBAKO_WORKER_METRICS_HOST', flag: '--metrics-host <host>',
    help: { worker: 'the address /metrics binds, loopback only by default; bind another only on a network just the scraper reaches' },
  }),
] as const;

type Declared = (typeof SETTINGS)[number];
/**
 * Every declaration kept its literal name: one that did not fit `SettingDeclaration` would have been typed as
 * the bare shape, and its setting would be missing from the configuration's types without a word.
 */
const EVERY_NAME_LITERAL: string extends Declared['name'] ? never : true = true;
void EVERY_NAME_LITERAL;
type TakenBy<C extends SettingsCommand> = Extract<Declared, { readonly help: { readonly [K in C]: string } }>;
/** Set in every resolved configuration: it has a default, or the command refuses to start without it. */
type AlwaysSet<C extends SettingsCommand, D> =
  D extends { readonly default: unknown } ? true : D extends { readonly requiredBy: { readonly [K in C]: string } } ? true : false;
type Flatten<T> = { [K in keyof T]: T[K] };

/** A command's resolved configuration: each setting it takes, as the part that uses it reads it. */
export type ConfigOf<C extends SettingsCommand> = Flatten<
  { -readonly [D in TakenBy<C> as AlwaysSet<C, D> extends true ? D['name'] : never]: KindOutput<D['kind']> } &
  { -readonly [D in TakenBy<C> as AlwaysSet<C, D> extends true ? never : D['name']]?: KindOutput<D['kind']> }
>;

/** What one source (the file, the environment, the flags) may say to a command: every setting optional, as given. */
export type InputOf<C extends SettingsCommand> = { -readonly [D in TakenBy<C> as D['name']]?: KindInput<D['kind']> };

/** The declarations a command takes, in order. */
export function settingsOf(command: SettingsCommand, table: readonly SettingDeclaration[] = SETTINGS): SettingDeclaration[] {
  return table.filter((declaration) => declaration.help[command] !== undefined);
}

export function sectionOf(declaration: SettingDeclaration): SettingsSection {
  return declaration.section ?? 'top';
}

/** Its key as the file spells it: `port`, or `worker.pool` for one in the worker object. */
export function fileKey(declaration: SettingDeclaration): string {
  return declaration.section ? `${declaration.section}.${declaration.name}` : declaration.name;
}

/** The flag alone, without its argument: `--port`, `--no-examples`. */
export function flagName(declaration: SettingDeclaration): string | undefined {
  return declaration.flag?.split(' ')[0];
}
