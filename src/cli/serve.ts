/**
 * `subako serve [--port 7070] [--host 127.0.0.1] [--data-dir DIR]`: the platform server. Its settings' flags and
 * their help come from settings.ts, and resolve in config.ts; the composition root (app.ts) starts it. The
 * first start of a data directory prints the admin API key once, with the URL and how to call the example
 * tools. SIGINT or SIGTERM stops it gracefully: no new requests, streams end, calls in flight finish, the store
 * closes — within the call deadline plus a grace (server.ts), and the process exits even if something hangs past that.
 */
import type { Command } from 'commander';
import { ValidationError } from '../errors.js';
import { CONFIG_FILE, defaultServerConfig, oauthDoorOf, readConfigFile, resolveServerConfig, type ServerConfig } from '../config.js';
import { serverStartOptions, startServer } from '../app.js';
import type { FirstStart } from '../platform/index.js';
import { createLogger } from '../common/index.js';
import { SHUTDOWN_GRACE_MS } from '../server/index.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';
import { addSettingOptions, settingFlags } from './setting-options.js';
import { startupErrorLine, type StartupSettings } from './startup-errors.js';
import { untilStopped } from './until-stopped.js';

export function registerServe(program: Command, ctx: CommandContext): void {
  const serve = program
    .command('serve')
    .description('Run the platform server: packages, agents, vaults, sessions and their MCP endpoints.');
  addSettingOptions(serve, 'serve')
    .option('--config <file>', `settings file (default ./${CONFIG_FILE} when it exists); flags and environment win over it`)
    .option('--debug', 'print the stack of an error that stops the start, after its one line')
    .action(async (flags: { config?: string; debug?: boolean; host?: string; dataDir?: string }, command: Command) => {
      const debug = flags.debug === true;
      let config: ServerConfig;
      try {
        config = resolveServerConfig({
          defaults: defaultServerConfig(), file: readConfigFile(flags.config), env: process.env, flags: settingFlags(command, 'serve'),
        });
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        failedToStart(ctx, err, { host: flags.host ?? '', port: 0, dataDir: flags.dataDir ?? '' }, debug);
        return;
      }
      const dataDir = config.dataDir;
      // What serve says while it runs is JSON lines on stderr, like the platform's own.
      const logger = createLogger().child({ component: 'serve' });
      const log = (line: string): void => logger.info({}, line);
      let started;
      try {
        started = await startServer(serverStartOptions(config));
      } catch (err) {
        failedToStart(ctx, err, config, debug);
        return;
      }
      const { server, firstStart } = started;
      // The database is named by its kind only: its URL may hold a password.
      process.stdout.write(`subako serving on ${server.url}\ndata directory: ${config.dataDir}\nrecords: ${config.database ? 'PostgreSQL' : 'SQLite in the data directory'}\n`);
      const door = oauthDoorOf(config);
      if (door) process.stdout.write(`OAuth at the door: agents' MCP endpoints (${server.url}/v1/agents/<agent id>/mcp) take access tokens from ${door.issuer} for ${door.audience}\n`);
      if (firstStart) process.stdout.write(firstStartText(server.url, firstStart));
      // The traces go last: the spans of the calls the stop waited for are sent before the process exits.
      await untilStopped(ctx, log, () => server.close().finally(() => started.traces.close()), {
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
