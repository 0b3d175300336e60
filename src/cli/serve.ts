/**
 * `subako serve [--port 7070] [--host 127.0.0.1] [--data-dir DIR]`: the platform server. The first start
 * of a data directory prints the admin API key once, with the URL and how to call the example tools.
 * SIGINT or SIGTERM stops it gracefully: no new requests, streams end, calls in flight finish, the store closes
 * — within the call deadline plus a grace (server.ts), and the process exits even if something hangs past that.
 */
import { Option, type Command } from 'commander';
import { ValidationError } from '../errors.js';
import { CONFIG_FILE, LIMIT_ENV_NAMES, defaultServerConfig, readConfigFile, resolveServerConfig, type ServerConfig } from '../config.js';
import { bundledExamplesDir, startServer } from '../app.js';
import type { FirstStart } from '../platform/index.js';
import { createLogger } from '../common/index.js';
import { SHUTDOWN_GRACE_MS } from '../server/index.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';
import { startupErrorLine, type StartupSettings } from './startup-errors.js';
import { untilStopped } from './until-stopped.js';

interface ServeFlags {
  port?: string;
  host?: string;
  dataDir?: string;
  workers?: string;
  callTimeoutMs?: string;
  memory?: string;
  examples: boolean;
  allowOrigin: string[];
  config?: string;
  publicUrl?: string;
  database?: string;
  debug?: boolean;
  allowPrivateDestinations?: boolean;
  nats?: string;
  natsPrefix?: string;
  volumesDir?: string;
  [limit: string]: unknown;
}

/** The fairness and connection limits' flags: setting, flag, what it sets (its default, its variable is added). */
const LIMIT_FLAGS: [keyof ServerConfig, string, string][] = [
  ['sessionConcurrency', '--session-concurrency <n>', 'calls one session may run at once (default: half the workers)'],
  ['sessionQueue', '--session-queue <n>', 'calls one session may have waiting; more are refused with 429 (default 16)'],
  ['agentConcurrency', '--agent-concurrency <n>', 'calls all sessions of one agent may run at once (default: all workers but one; all of them at 1 or 2 workers)'],
  ['agentQueue', '--agent-queue <n>', 'calls all sessions of one agent may have waiting (default 64)'],
  ['maxConnections', '--max-connections <n>', 'connections held at once (default: half the open-file limit, at most 4096)'],
  ['maxConnectionsPerAddress', '--max-connections-per-address <n>', 'connections one client address may hold; 0 for no limit, behind a proxy (default 256)'],
  ['headersTimeoutMs', '--headers-timeout-ms <ms>', 'time a connection has to send request headers (default 10000)'],
  ['requestTimeoutMs', '--request-timeout-ms <ms>', 'time a connection has to send a whole request, body included; 0 for none (default 300000)'],
  ['keepAliveTimeoutMs', '--keep-alive-timeout-ms <ms>', 'how long an idle keep-alive connection is kept (default 5000)'],
  ['sessionVolumeMiB', '--session-volume-mib <n>', "what a session's /volume/tmp holds across its calls (default 2048)"],
  ['agentVolumeMiB', '--agent-volume-mib <n>', "what an agent's /volume/data holds across its sessions' calls (default 8192)"],
  ['sandboxHeapMiB', '--sandbox-heap-mib <n>', "the sandbox process's V8 heap limit (default: Node's)"],
  ['instanceLeaseMs', '--instance-lease-ms <ms>', "how long this replica's lease lasts; a dead replica's calls are marked interrupted after it (default 30000)"],
  ['remoteAnswerMiB', '--remote-answer-mib <n>', 'the most read of one message a remote MCP server answers; past it the call fails (default 8)'],
];

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** A numeric flag as given: a number when it is all digits, else the text (so the check names it). */
const numeric = (value: string | undefined): number | string | undefined =>
  value === undefined ? undefined : /^[0-9]+$/.test(value) ? Number(value) : value;

export function registerServe(program: Command, ctx: CommandContext): void {
  const serve = program
    .command('serve')
    .description('Run the platform server: packages, agents, vaults, sessions and their MCP endpoints.')
    .option('--port <port>', 'TCP port to listen on (default 7070; $SUBAKO_PORT)')
    .option('--host <host>', 'address to bind; keep 127.0.0.1 unless a proxy fronts it ($SUBAKO_HOST)')
    .option('--data-dir <dir>', 'where the database, packages and volumes live (default ~/.subako/server; $SUBAKO_DATA_DIR)')
    .option('--workers <n>', 'worker threads for function calls (default: one per core; $SUBAKO_WORKERS)')
    .option('--call-timeout-ms <ms>', 'wall-clock deadline of one function call (default 30000; $SUBAKO_CALL_TIMEOUT_MS)')
    .option('--memory <MiB>', 'memory cap of a function call (default 512; $SUBAKO_MEMORY_MIB)')
    .option('--no-examples', 'do not load the example packages at first start')
    .option('--allow-origin <origin>', 'a browser origin allowed to reach MCP endpoints (repeatable)', collect, [])
    .option('--database <url>', 'a postgres:// URL to keep the records in PostgreSQL (default: SQLite in the data directory); prefer $SUBAKO_DATABASE or the config file, as flags show in process lists')
    .option('--public-url <url>', 'the URL clients reach this server at, behind a proxy ($SUBAKO_PUBLIC_URL)')
    .option('--allow-private-destinations', 'local development only: packages may reach loopback and private addresses their allowlist names')
    .option('--nats <url>', 'scale-out: send calls to `subako worker` processes over this nats:// (or tls://) server, bundles to its object store; prefer $SUBAKO_NATS_URL or the config file when it holds a password')
    .option('--nats-prefix <name>', 'with --nats: the deployment\'s subjects and bucket (default subako; $SUBAKO_NATS_PREFIX)')
    .option('--volumes-dir <dir>', 'the volumes root (default <data-dir>/volumes); with --nats, a shared mount the workers see too ($SUBAKO_VOLUMES_DIR)')
    .option('--config <file>', `settings file (default ./${CONFIG_FILE} when it exists); flags and environment win over it`)
    .option('--debug', 'print the stack of an error that stops the start, after its one line');
  for (const [key, flag, description] of LIMIT_FLAGS) serve.option(flag, `${description}; $${LIMIT_ENV_NAMES[key]}`);
  serve
    .action(async (flags: ServeFlags, command: Command) => {
      let config;
      try {
        config = resolveServerConfig({
          defaults: defaultServerConfig(),
          file: readConfigFile(flags.config),
          env: process.env,
          flags: {
            input: {
              port: numeric(flags.port), host: flags.host, dataDir: flags.dataDir, workers: numeric(flags.workers),
              callTimeoutMs: numeric(flags.callTimeoutMs), memoryMiB: numeric(flags.memory),
              examples: command.getOptionValueSource('examples') === 'cli' ? flags.examples : undefined,
              allowedOrigins: flags.allowOrigin.length > 0 ? flags.allowOrigin : undefined,
              publicUrl: flags.publicUrl, database: flags.database, nats: flags.nats, natsPrefix: flags.natsPrefix, volumesDir: flags.volumesDir,
              allowPrivateDestinations: flags.allowPrivateDestinations === true ? true : undefined,
              // Read under commander's name for the flag, which camel-cases each word (`--remote-answer-mib` is
              // `remoteAnswerMib`, not the setting's `remoteAnswerMiB`).
              ...Object.fromEntries(LIMIT_FLAGS.map(([key, flag]) => [key, numeric(flags[new Option(flag).attributeName()] as string | undefined)])),
            },
            names: {
              port: '--port', host: '--host', dataDir: '--data-dir', workers: '--workers', callTimeoutMs: '--call-timeout-ms',
              memoryMiB: '--memory', examples: '--no-examples', allowedOrigins: '--allow-origin', publicUrl: '--public-url', database: '--database',
              nats: '--nats', natsPrefix: '--nats-prefix', volumesDir: '--volumes-dir',
              allowPrivateDestinations: '--allow-private-destinations',
              ...Object.fromEntries(LIMIT_FLAGS.map(([key, flag]) => [key, flag.split(' ')[0]])),
            },
          },
        });
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        failedToStart(ctx, err, { host: flags.host ?? '', port: 0, dataDir: flags.dataDir ?? '' }, flags.debug === true);
        return;
      }
      const dataDir = config.dataDir;
      // What serve says while it runs is JSON lines on stderr, like the platform's own.
      const logger = createLogger().child({ component: 'serve' });
      const log = (line: string): void => logger.info({}, line);
      let started;
      try {
        started = await startServer({
          dataDir, host: config.host, port: config.port, workers: config.workers,
          limits: {
            callTimeoutMs: config.callTimeoutMs, memoryBytes: config.memoryMiB * 1024 * 1024,
            ...(config.sessionVolumeMiB ? { sessionVolumeBytes: config.sessionVolumeMiB * 1024 * 1024 } : {}),
            ...(config.agentVolumeMiB ? { agentVolumeBytes: config.agentVolumeMiB * 1024 * 1024 } : {}),
          },
          sandboxHeapMiB: config.sandboxHeapMiB, database: config.database, instanceLeaseMs: config.instanceLeaseMs,
          ...(config.remoteAnswerMiB ? { remoteAnswerBytes: config.remoteAnswerMiB * 1024 * 1024 } : {}),
          // The URL leaves its Secret only here, on its way to the connection.
          ...(config.nats ? { nats: { url: config.nats.reveal(), prefix: config.natsPrefix } } : {}),
          ...(config.volumesDir ? { volumesDir: config.volumesDir } : {}),
          allowPrivateDestinations: config.allowPrivateDestinations === true,
          examplesDir: config.examples ? bundledExamplesDir() : null,
          origins: { allowedOrigins: config.allowedOrigins }, publicUrl: config.publicUrl,
          admission: {
            sessionConcurrency: config.sessionConcurrency, sessionQueue: config.sessionQueue,
            agentConcurrency: config.agentConcurrency, agentQueue: config.agentQueue,
          },
          connections: {
            maxConnections: config.maxConnections, maxConnectionsPerAddress: config.maxConnectionsPerAddress,
            headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs, keepAliveTimeoutMs: config.keepAliveTimeoutMs,
          },
        });
      } catch (err) {
        failedToStart(ctx, err, config, flags.debug === true);
        return;
      }
      const { server, firstStart } = started;
      // The database is named by its kind only: its URL may hold a password.
      process.stdout.write(`subako serving on ${server.url}\ndata directory: ${dataDir}\nrecords: ${config.database ? 'PostgreSQL' : 'SQLite in the data directory'}\n`);
      if (firstStart) process.stdout.write(firstStartText(server.url, firstStart));
      await untilStopped(ctx, log, () => server.close(), {
        // The server's own bound, plus a grace for a stop that hangs past it.
        ms: server.shutdownCeilingMs + SHUTDOWN_GRACE_MS,
        pending: () => {
          const { calls, requests } = server.pending();
          return `${calls} call(s) in flight and ${requests} request(s) open`;
        },
      });
      log('stopped');
    });
}

/** A start that failed: one line naming the setting and how to change it, exit status 1; the stack only with --debug. */
function failedToStart(ctx: CommandContext, err: unknown, settings: StartupSettings, debug: boolean): void {
  process.stderr.write(`subako serve: cannot start: ${startupErrorLine(err, settings)}\n`);
  if (debug && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  ctx.exitCode = EXIT_FAILED;
}

export function firstStartText(url: string, first: FirstStart): string {
  const lines = [
    '',
    'First start: an admin API key was created. It is shown only this once; keep it:',
    `  ${first.apiKey}`,
    '',
  ];
  if (first.packages.length > 0) lines.push(`Example packages loaded: ${first.packages.join(', ')}`);
  for (const skipped of first.skipped) lines.push(`Example package skipped: ${skipped}`);
  if (first.agentId) {
    lines.push(
      `A demo agent (${first.agentId}) grants them. Start a session; its answer holds an MCP URL for any MCP client:`,
      `  curl -s -X POST ${url}/v1/agents/${first.agentId}/sessions \\`,
      `    -H 'authorization: Bearer ${first.apiKey}' -H 'content-type: application/json' -d '{}'`,
      'Call a tool over REST with the session id from that answer:',
      `  curl -s -X POST ${url}/v1/sessions/<session id>/calls -H 'authorization: Bearer ${first.apiKey}' \\`,
      `    -H 'content-type: application/json' -d '{"tool":"greet","arguments":{"name":"Ada"}}'`,
      `Or from the CLI: subako login --server ${url} (it asks for the key), then subako sessions create --agent ${first.agentId}`,
    );
  }
  lines.push(`API reference: ${url}/v1/openapi.json`, '');
  return `${lines.join('\n')}\n`;
}
