/**
 * `subako serve [--port 7070] [--host 127.0.0.1] [--data-dir DIR]`: the platform server. The first start
 * of a data directory prints the admin API key once, with the URL and how to call the example tools.
 * SIGINT or SIGTERM stops it gracefully: no new requests, calls in flight finish, the store closes.
 */
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { subakoHome } from '../mcp/seal.js';
import { bundledExamplesDir, startServer } from '../server/start.js';
import type { FirstStart } from '../platform/bootstrap.js';
import type { CommandContext } from './main.js';

interface ServeFlags {
  port: string;
  host: string;
  dataDir?: string;
  workers?: string;
  callTimeoutMs?: string;
  examples: boolean;
  allowOrigin: string[];
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerServe(program: Command, ctx: CommandContext): void {
  program
    .command('serve')
    .description('Run the platform server: packages, agents, vaults, sessions and their MCP endpoints.')
    .option('--port <port>', 'TCP port to listen on', process.env.SUBAKO_PORT ?? '7070')
    .option('--host <host>', 'address to bind (keep 127.0.0.1 unless a proxy fronts it)', process.env.SUBAKO_HOST ?? '127.0.0.1')
    .option('--data-dir <dir>', 'where the database, packages and volumes live (default $SUBAKO_DATA_DIR or ~/.subako/server)')
    .option('--workers <n>', 'worker threads for function calls')
    .option('--call-timeout-ms <ms>', 'wall-clock deadline of one function call (default 30000)')
    .option('--no-examples', 'do not load the example packages at first start')
    .option('--allow-origin <origin>', 'a browser origin allowed to reach MCP endpoints (repeatable)', collect, [])
    .action(async (flags: ServeFlags) => {
      const port = Number(flags.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port ${flags.port} is not a port number`);
      const workers = flags.workers === undefined ? undefined : Number(flags.workers);
      if (workers !== undefined && (!Number.isInteger(workers) || workers < 1 || workers > 256)) throw new UsageError('--workers must be a whole number from 1 to 256');
      const callTimeoutMs = flags.callTimeoutMs === undefined ? undefined : Number(flags.callTimeoutMs);
      if (callTimeoutMs !== undefined && (!Number.isInteger(callTimeoutMs) || callTimeoutMs < 100 || callTimeoutMs > 3_600_000)) {
        throw new UsageError('--call-timeout-ms must be a whole number from 100 to 3600000');
      }
      const dataDir = resolve(flags.dataDir ?? process.env.SUBAKO_DATA_DIR ?? join(subakoHome(), 'server'));
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      const { server, firstStart } = await startServer({
        dataDir, host: flags.host, port, workers, limits: callTimeoutMs === undefined ? undefined : { callTimeoutMs }, examplesDir: flags.examples ? bundledExamplesDir() : null,
        origins: { allowedOrigins: flags.allowOrigin }, log,
      });
      process.stdout.write(`subako serving on ${server.url}\ndata directory: ${dataDir}\n`);
      if (firstStart) process.stdout.write(firstStartText(server.url, firstStart));
      await new Promise<void>((done) => {
        const stop = (signal: string): void => {
          process.off('SIGINT', onInt);
          process.off('SIGTERM', onTerm);
          log(`${signal}: finishing calls in flight, then stopping`);
          server.close().then(done, (err: unknown) => {
            log(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
            ctx.exitCode = 1;
            done();
          });
        };
        const onInt = (): void => stop('SIGINT');
        const onTerm = (): void => stop('SIGTERM');
        process.on('SIGINT', onInt);
        process.on('SIGTERM', onTerm);
      });
      log('stopped');
    });
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
    );
  }
  lines.push(`API reference: ${url}/v1/openapi.json`, '');
  return `${lines.join('\n')}\n`;
}
