/**
 * The composition root: the one place that builds the program's parts and joins them. From a configuration
 * it makes the sealing key (SUBAKO_SECRET_KEY, else a 0600 key file in the data directory), the function
 * runtime (and so the sandbox process), remote MCP servers through mcp/'s client, the platform on its data
 * directory, the first-start bootstrap, and the HTTP server, which is handed the platform and builds none of
 * it. Only `cli/serve.ts` (the program's edge) and tests import it; no room does (.dependency-cruiser.cjs).
 */
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_FILE, LIMIT_ENV_NAMES, type CallLimits } from './config.js';
import { createLogger, sealingKey, withoutUndefined } from './common/index.js';
import { ValidationError } from './errors.js';
import { NatsBlobStore } from './package/index.js';
import { headers, tools, McpClientPool, type OriginPolicy } from './mcp/index.js';
import {
  bootstrapIfFresh, CallEventRelay, type FirstStart, MIN_INSTANCE_LEASE_MS, defaultCallAdmissionLimits, type CallAdmissionLimits, FunctionRuntime, NatsRuntime, connectNats, natsSubjects, Platform,
  type PlatformOptions, type PackageRuntime, type RemoteMcp, type CallEvents, busKey, checkBusKey,
} from './platform/index.js';
import { SubakoServer, type ConnectionLimits } from './server/index.js';

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
   * The most read of one message a remote MCP server answers, in bytes (`subako serve`'s remoteAnswerMiB); 8 MiB
   * when absent. Past it the call fails and the rest is not read.
   */
  remoteAnswerBytes?: number;
}

export interface Started {
  server: SubakoServer;
  firstStart: FirstStart | null;
  /** The connections to remote MCP servers that sessions' tools share. */
  remotePool: McpClientPool;
}

/** Remote MCP servers for the platform, over this server's own connections (and so its cap on answers). */
function remoteMcpOver(pool: McpClientPool): RemoteMcp {
  return { tools: (url, values) => tools({ url, auth: headers(values), pool }) };
}

/** What an answer past the cap names as the way to raise it. */
const REMOTE_ANSWER_SETTING =
  `the server setting remoteAnswerMiB (--remote-answer-mib, $${LIMIT_ENV_NAMES.remoteAnswerMiB} or "remoteAnswerMiB" in ${CONFIG_FILE})`;

export async function startServer(options: StartOptions): Promise<Started> {
  const env = options.env ?? process.env;
  // One logger for the platform, the bus and the sandbox's crashes: JSON lines on stderr.
  const logger = options.logger ?? createLogger();
  // The key file sits beside the data it protects unless SUBAKO_SECRET_KEY supplies the key.
  const key = sealingKey({ ...env, SUBAKO_HOME: options.dataDir });
  const instanceLeaseMs = options.instanceLeaseMs;
  // One worker per core, at least two; the call limits are sized from the same number.
  const workers = options.workers ?? Math.max(2, availableParallelism());
  // In process, admission shares these workers out among agents; over NATS the workers are the fleet's, which it does not count.
  const admission = { ...defaultCallAdmissionLimits(workers, options.nats ? 'fleet' : 'here'), ...withoutUndefined(options.admission) };
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
      relayCalls = (events) => void CallEventRelay.start(bus.sealedBus, prefix, events);
    } catch (err) {
      await local.close();
      throw err;
    }
  }
  const remotePool = new McpClientPool({ maxAnswerBytes: options.remoteAnswerBytes, maxAnswerSetting: REMOTE_ANSWER_SETTING });
  let platform: Platform;
  try {
    platform = await Platform.open({ dataDir: options.dataDir, runtime, remote: remoteMcpOver(remotePool), sealingKey: key, limits: options.limits, admission,
      database: options.database,
      packageBlobs, skillBlobs, volumesDir,
      ...(instanceLeaseMs !== undefined ? { instanceLeaseMs } : {}),
      // Workers mount a call's skills from the shared file system, beside the volumes (not inside sessions/ or agents/).
      ...(options.nats ? { skillsDir: join(volumesDir, '.skills') } : {}),
      ...(options.allowPrivateDestinations ? { privateDestinations: 'allow' as const } : {}), clock: options.clock, logger });
  } catch (err) {
    await runtime.close();
    throw err;
  }
  relayCalls?.(platform.calls.events);
  let server: SubakoServer;
  try {
    server = await SubakoServer.start({
      platform, host: options.host, port: options.port, origins: options.origins, publicUrl: options.publicUrl,
      // This process's sandbox (with NATS it only runs discovery: the workers' own figures are not gathered yet).
      connections: options.connections, runtimeStats: () => local.stats(),
      ...(natsRuntime ? { natsStats: () => natsRuntime.stats() } : {}),
    });
  } catch (err) {
    await platform.close(0);
    throw err;
  }
  // The first start's admin key is made only once the listener is up: a start that fails before (the port
  // taken) has created nothing, and the next start prints the key.
  try {
    return { server, firstStart: await bootstrapIfFresh(platform, options.examplesDir === undefined ? null : options.examplesDir), remotePool };
  } catch (err) {
    await server.close(0);
    throw err;
  }
}

/** Where the repository's example packages are, from this compiled file (dist/src/app.js). */
export function bundledExamplesDir(): string {
  return fileURLToPath(new URL('../../examples/packages', import.meta.url));
}
