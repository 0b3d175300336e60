/**
 * The composition root: the one place that builds the program's parts and joins them. From a configuration
 * it makes the sealing key (SUBAKO_SECRET_KEY, else a 0600 key file in the data directory), the function
 * runtime (and so the sandbox process), remote MCP servers through mcp/'s client, the platform on its data
 * directory, the first-start bootstrap, and the HTTP server, which is handed the platform and builds none of
 * it. It starts a worker node too (`startWorker`): the NATS connection, the bus's key check, the package
 * bundles' store, the `NatsWorker` and its metrics listener. Both start the process's traces (telemetry/: exported
 * over OTLP when the environment names an endpoint) first and close them last. Only `cli/serve.ts` and `cli/worker.ts` (the
 * program's edge, which parse and call) and tests import it; no room does (.dependency-cruiser.cjs).
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_FILE, oauthDoorOf, waysToSet, type CallLimits, type ServerConfig, type WorkerConfig } from './config.js';
import { createLogger, sealingKey, withoutUndefined, type Logger } from './common/index.js';
import { startTraces, type Traces } from './telemetry/index.js';
import { ValidationError } from './errors.js';
import { NatsBlobStore } from './package/index.js';
import { catalog, headers, listenUpstream, tools, McpClientPool, type OriginPolicy } from './mcp/index.js';
import {
  bootstrapIfFresh, CallEventRelay, type FirstStart, MIN_INSTANCE_LEASE_MS, defaultCallAdmissionLimits, type CallAdmissionLimits, FunctionRuntime, NatsRuntime, connectNats, natsSubjects, Platform,
  type PlatformOptions, type PackageRuntime, type RemoteMcp, type CallEvents, busKey, checkBusKey, NatsWorker, ListingRelay,
} from './platform/index.js';
import { SubakoServer, WorkerMetrics, listenForMetrics, type ConnectionLimits, type MetricsListener, type OAuthDoorOptions } from './server/index.js';

export interface StartOptions {
  dataDir: string;
  host?: string;
  port?: number;
  /** Worker threads of the sandbox process, each running one guest at a time; default: one per core, at least two. */
  workers?: number;
  limits?: Partial<CallLimits>;
  /** The sandbox process's V8 heap limit, in MiB. */
  sandboxHeapMiB?: number;
  /** Local development only: packages may reach loopback and private addresses their allowlist names. */
  allowPrivateDestinations?: boolean;
  /** Package directories loaded at first start (each subdirectory one package); null for none. */
  examplesDir?: string | null;
  origins?: OriginPolicy;
  env?: NodeJS.ProcessEnv;
  /** The URL clients reach the server at, for URLs in answers. */
  publicUrl?: string;
  /** A JSON access-log line per request (off by default: the `accessLog` setting). */
  accessLog?: boolean;
  /** OAuth at the door: the MCP endpoints accept access tokens from this authorization server (the `oauth*` settings); off when absent. */
  oauthDoor?: OAuthDoorOptions;
  /** Per-session and per-agent call limits; each one not given is sized from the workers. */
  admission?: Partial<CallAdmissionLimits>;
  /** A `postgres://` URL for the records; the data directory's SQLite file when absent. */
  database?: PlatformOptions['database'];
  /** Connection limits; each one not given takes its default. */
  connections?: Partial<ConnectionLimits>;
  /** The platform's clock and logger (tests move time forward; see PlatformOptions). */
  clock?: PlatformOptions['clock'];
  logger?: PlatformOptions['logger'];
  /**
   * Scale-out: calls go to `subako worker` processes over NATS (`url`), package bundles to its object store;
   * `prefix` names the deployment's subjects and bucket (default `subako`).
   */
  nats?: { url: string; prefix?: string };
  /** The volumes' root; `<data-dir>/volumes` by default. With NATS, a shared mount the workers see too. */
  volumesDir?: string;
  /**
   * How long this process's lease in the database lasts (PlatformOptions.instanceLeaseMs; `subako serve`
   * resolves it from --instance-lease-ms, SUBAKO_INSTANCE_LEASE_MS or the config file); 30 s when absent.
   */
  instanceLeaseMs?: number;
  /**
   * How long a call may run before its `running` record is written (PlatformOptions.callRecordDelayMs; `subako
   * serve`'s callRecordDelayMs); 100 ms when absent, 0 to record every call before it runs.
   */
  callRecordDelayMs?: number;
  /**
   * The most read of one message a remote MCP server answers, in bytes (`subako serve`'s remoteAnswerMiB); 8 MiB
   * when absent. Past it the call fails and the rest is not read.
   */
  remoteAnswerBytes?: number;
  /** Sessions' tasks: how long one is kept, the poll interval clients are asked for, the most one session holds (platform/tasks/). */
  tasks?: { ttlMs?: number; pollIntervalMs?: number; sessionTaskLimit?: number };
}

export interface Started {
  server: SubakoServer;
  /** The process's traces: exported over OTLP when the environment names an endpoint; close after the server. */
  traces: Traces;
  firstStart: FirstStart | null;
  /** The connections to remote MCP servers that sessions' tools share. */
  remotePool: McpClientPool;
}

/** Remote MCP servers for the platform, over this server's own connections (and so its cap on answers). */
function remoteMcpOver(pool: McpClientPool): RemoteMcp {
  return {
    tools: (url, values) => tools({ url, auth: headers(values), pool }),
    catalog: (url, values) => catalog({ url, auth: headers(values), pool }),
    // A stream on a connection of its own (not the pool's): it lives as long as a session's client listens.
    listen: (url, values, filter, onChange) => listenUpstream({ descriptor: { url, auth: headers(values) }, filter, onChange }),
  };
}

/** What an answer past the cap names as the way to raise it. */
const REMOTE_ANSWER_SETTING = ((ways) => `the server setting remoteAnswerMiB (${ways.flag}, $${ways.env} or "${ways.fileKey}" in ${CONFIG_FILE})`)(
  waysToSet('serve', 'remoteAnswerMiB'),
);

/** What a refusal past a session's cap on tasks names as the way to raise it. */
const SESSION_TASK_LIMIT_SETTING = ((ways) => `the server setting sessionTaskLimit: ${ways.flag}, $${ways.env} or "${ways.fileKey}" in ${CONFIG_FILE}`)(
  waysToSet('serve', 'sessionTaskLimit'),
);

const MiB = 1024 * 1024;

/**
 * What `subako serve` starts from its resolved settings: each setting to the part that uses it (sizes in MiB
 * to bytes; a setting left unset stays unset, for that part's own default).
 */
export function serverStartOptions(config: ServerConfig): StartOptions {
  return {
    dataDir: config.dataDir, host: config.host, port: config.port, workers: config.workers,
    limits: {
      callTimeoutMs: config.callTimeoutMs, memoryBytes: config.memoryMiB * MiB,
      ...(config.sessionVolumeMiB ? { sessionVolumeBytes: config.sessionVolumeMiB * MiB } : {}),
      ...(config.agentVolumeMiB ? { agentVolumeBytes: config.agentVolumeMiB * MiB } : {}),
    },
    sandboxHeapMiB: config.sandboxHeapMiB, database: config.database, instanceLeaseMs: config.instanceLeaseMs,
    callRecordDelayMs: config.callRecordDelayMs,
    ...(config.remoteAnswerMiB ? { remoteAnswerBytes: config.remoteAnswerMiB * MiB } : {}),
    tasks: {
      ...(config.taskTtlMs !== undefined ? { ttlMs: config.taskTtlMs } : {}),
      ...(config.taskPollIntervalMs !== undefined ? { pollIntervalMs: config.taskPollIntervalMs } : {}),
      ...(config.sessionTaskLimit !== undefined ? { sessionTaskLimit: config.sessionTaskLimit } : {}),
    },
    // The URL leaves its Secret only here, on its way to the connection.
    ...(config.nats ? { nats: { url: config.nats.reveal(), prefix: config.natsPrefix } } : {}),
    ...(config.volumesDir ? { volumesDir: config.volumesDir } : {}),
    allowPrivateDestinations: config.allowPrivateDestinations === true,
    examplesDir: config.examples ? bundledExamplesDir() : null,
    origins: { allowedOrigins: config.allowedOrigins }, publicUrl: config.publicUrl, accessLog: config.accessLog,
    ...withoutUndefined({ oauthDoor: oauthDoorOf(config) }),
    admission: {
      sessionConcurrency: config.sessionConcurrency, sessionQueue: config.sessionQueue,
      agentConcurrency: config.agentConcurrency, agentQueue: config.agentQueue,
    },
    connections: {
      maxConnections: config.maxConnections, maxConnectionsPerAddress: config.maxConnectionsPerAddress,
      headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    },
  };
}

export async function startServer(options: StartOptions): Promise<Started> {
  const env = options.env ?? process.env;
  // One logger for the platform, the bus and the sandbox's crashes: JSON lines on stderr.
  const logger = options.logger ?? createLogger();
  const traces = startTraces(env, 'subako');
  if (traces.exportingTo !== null) logger.info({ component: 'traces' }, `traces are exported over OTLP/HTTP to ${traces.exportingTo}`);
  try {
    return await startServerTraced(options, env, logger, traces);
  } catch (err) {
    await traces.close();
    throw err;
  }
}

async function startServerTraced(options: StartOptions, env: NodeJS.ProcessEnv, logger: Logger, traces: Traces): Promise<Started> {
  // The key file sits beside the data it protects unless SUBAKO_SECRET_KEY supplies the key.
  const key = sealingKey({ ...env, SUBAKO_HOME: options.dataDir });
  const instanceLeaseMs = options.instanceLeaseMs;
  // One worker per core, at least two; the call limits are sized from the same number.
  const workers = options.workers ?? Math.max(2, availableParallelism());
  // In process, admission shares these workers out among agents. Over NATS the workers are the fleet's: the
  // session's and the agent's share are sized from the live fleet's slots (this process's count until a worker
  // has announced itself), and every replica's calls count together (PlatformOptions.fleetAdmission).
  const configured = withoutUndefined(options.admission);
  const fixed = { ...defaultCallAdmissionLimits(workers, options.nats ? 'fleet' : 'here'), ...configured };
  let fleetSlots = (): number => 0;
  const admission = options.nats
    ? () => {
      const slots = fleetSlots();
      return slots > 0 ? { ...defaultCallAdmissionLimits(slots, 'fleet'), ...configured } : fixed;
    }
    : fixed;
  const local = new FunctionRuntime({
    // With NATS, this process only discovers uploads: one slot is enough.
    poolSize: options.nats ? 1 : workers,
    limits: options.limits,
    sandboxHeapMiB: options.sandboxHeapMiB,
    // A restarted server reads its packages' instrumented modules back instead of walking them again.
    preparedCacheDir: join(options.dataDir, 'cache', 'prepared'),
    // One line for the operator: the calls it ended are in the call log as `sandbox_crashed`.
    onSandboxCrash: (reason) => logger.child({ component: 'sandbox' }).error({}, `${reason}; a new sandbox process was started`),
  });
  let runtime: PackageRuntime = local;
  let packageBlobs: NatsBlobStore | undefined;
  let skillBlobs: NatsBlobStore | undefined;
  /** With NATS, the live call stream of every replica is relayed to the others once the platform is open. */
  let relayCalls: ((events: CallEvents) => void) | undefined;
  /** With NATS, sessions' list changes seen here reach their listeners on every replica (nats-listings.ts). */
  let relayListings: ((platform: Platform) => void) | undefined;
  let natsRuntime: NatsRuntime | undefined;
  const volumesDir = options.volumesDir ?? join(options.dataDir, 'volumes');
  if (options.nats) {
    try {
      const prefix = options.nats.prefix ?? 'subako';
      // Once connected, the replica keeps trying to reconnect for ever; calls made meanwhile fail as `unavailable`.
      const nc = await connectNats(options.nats.url, 'subako-serve');
      const subjects = natsSubjects(prefix);
      // Packages and skills each in a bucket of their own: a skill uploaded through one replica is there for all.
      [packageBlobs, skillBlobs] = await Promise.all([
        NatsBlobStore.open(nc, subjects.packagesBucket), NatsBlobStore.open(nc, subjects.skillsBucket),
      ]).catch(async (err: unknown) => {
        await nc.close();
        throw err;
      });
      // Every process of the deployment seals the bus with the same key: one that holds another refuses to start.
      await checkBusKey(nc, prefix, busKey(key, prefix), { create: true }).catch(async (err: unknown) => {
        await nc.close();
        throw err;
      });
      const busLog = logger.child({ component: 'bus' });
      const bus = natsRuntime = new NatsRuntime({
        nc, prefix, volumesRoot: volumesDir, sealingKey: key, local, limits: options.limits, log: (line) => busLog.warn({}, line),
      });
      runtime = bus;
      fleetSlots = () => bus.fleetSlots();
      relayCalls = (events) => void CallEventRelay.start(bus.sealedBus, prefix, events);
      relayListings = (opened) => void ListingRelay.start(bus.sealedBus, prefix, opened.listens);
    } catch (err) {
      await local.close();
      throw err;
    }
  }
  const remotePool = new McpClientPool({ maxAnswerBytes: options.remoteAnswerBytes, maxAnswerSetting: REMOTE_ANSWER_SETTING });
  let platform: Platform;
  try {
    platform = await Platform.open({ dataDir: options.dataDir, runtime, remote: remoteMcpOver(remotePool), sealingKey: key, limits: options.limits, admission,
      ...(options.nats ? { fleetAdmission: true } : {}),
      database: options.database,
      packageBlobs, skillBlobs, volumesDir,
      ...(instanceLeaseMs !== undefined ? { instanceLeaseMs } : {}),
      ...(options.callRecordDelayMs !== undefined ? { callRecordDelayMs: options.callRecordDelayMs } : {}),
      tasks: { ...options.tasks, sessionTaskLimitSetting: SESSION_TASK_LIMIT_SETTING },
      // Workers mount a call's skills from the shared file system, beside the volumes (not inside sessions/ or agents/).
      ...(options.nats ? { skillsDir: join(volumesDir, '.skills') } : {}),
      ...(options.allowPrivateDestinations ? { privateDestinations: 'allow' as const } : {}), clock: options.clock, logger });
  } catch (err) {
    await runtime.close();
    throw err;
  }
  relayCalls?.(platform.calls.events);
  relayListings?.(platform);
  let server: SubakoServer;
  try {
    server = await SubakoServer.start({
      platform, host: options.host, port: options.port, origins: options.origins, publicUrl: options.publicUrl, accessLog: options.accessLog,
      // This process's sandbox (with NATS it only runs discovery: the workers' own figures are not gathered yet).
      connections: options.connections, runtimeStats: () => local.stats(),
      ...(options.oauthDoor ? { oauthDoor: options.oauthDoor } : {}),
      ...(natsRuntime ? { natsStats: () => natsRuntime.stats() } : {}),
    });
  } catch (err) {
    await platform.close(0);
    throw err;
  }
  // The first start's admin key is made only once the listener is up: a start that fails before (the port
  // taken) has created nothing, and the next start prints the key.
  try {
    return { server, traces, firstStart: await bootstrapIfFresh(platform, options.examplesDir === undefined ? null : options.examplesDir), remotePool };
  } catch (err) {
    await server.close(0);
    throw err;
  }
}

/** Where the repository's example packages are, from this compiled file (dist/src/app.js). */
export function bundledExamplesDir(): string {
  return fileURLToPath(new URL('../../examples/packages', import.meta.url));
}

/** A worker node that has joined its deployment's queue group and is taking calls. */
export interface StartedWorker {
  worker: NatsWorker;
  /** The subject it takes calls on. */
  calls: string;
  /** Its `/metrics` listener, when its settings asked for one. */
  metrics?: MetricsListener;
  /** No new calls; those running finish; then the listener and the connection close. */
  close(): Promise<void>;
}

/**
 * Starts `subako worker` from its resolved settings: the replicas' sealing key (from `env`), the NATS
 * connection, the bus's key check (a worker never creates it: the replicas do), the package bundles' store,
 * the worker with its sandbox pool, and its metrics listener when `metricsPort` is set. A start that fails
 * part way closes what it opened.
 */
export async function startWorker(config: WorkerConfig, options: { env?: NodeJS.ProcessEnv; log: (line: string) => void }): Promise<StartedWorker> {
  const env = options.env ?? process.env;
  const key = workerSealingKey(env);
  const subjects = natsSubjects(config.natsPrefix);
  // The guest runs (and their egress requests) a worker does for a call are spans under the replica's call span.
  const traces = startTraces(env, 'subako-worker');
  let nc: Awaited<ReturnType<typeof connectNats>>;
  try {
    nc = await connectNats(config.nats.reveal(), 'subako-worker');
  } catch (err) {
    await traces.close();
    throw err;
  }
  if (traces.exportingTo !== null) options.log(`traces are exported over OTLP/HTTP to ${traces.exportingTo}`);
  let worker: NatsWorker | undefined;
  try {
    await checkBusKey(nc, config.natsPrefix, busKey(key, config.natsPrefix), { create: false });
    const blobs = await NatsBlobStore.open(nc, subjects.packagesBucket);
    worker = new NatsWorker({
      nc, prefix: config.natsPrefix, blobs, pool: config.pool, volumesDir: config.volumesDir, dataDir: config.dataDir, sealingKey: key, log: options.log,
      limits: { callTimeoutMs: config.callTimeoutMs, memoryBytes: config.memoryMiB * MiB },
    });
    await worker.start();
    const running = worker;
    const metrics = config.metricsPort === undefined ? undefined
      : await listenForMetrics(new WorkerMetrics(running.stats.bind(running)), config.metricsHost, config.metricsPort);
    return {
      worker: running, calls: subjects.calls, ...(metrics ? { metrics } : {}),
      close: async () => {
        await metrics?.close();
        await running.close();
        await nc.close();
        await traces.close();
      },
    };
  } catch (err) {
    await worker?.close();
    await nc.close();
    await traces.close();
    throw err;
  }
}

/**
 * The replicas' sealing key, from SUBAKO_SECRET_KEY only. A worker that made its own key file would start and
 * then fail every call that carries vault credentials, far from where the mistake was made; so it refuses to
 * start, saying where the replicas' key is.
 */
function workerSealingKey(env: NodeJS.ProcessEnv): Buffer {
  if (!env.SUBAKO_SECRET_KEY) {
    throw new ValidationError([{
      code: 'config.secret_key',
      message: "SUBAKO_SECRET_KEY is not set; give every worker the API replicas' sealing key: their SUBAKO_SECRET_KEY, or the base64 line of secret.key in serve's data directory",
    }]);
  }
  return sealingKey({ SUBAKO_SECRET_KEY: env.SUBAKO_SECRET_KEY });
}
