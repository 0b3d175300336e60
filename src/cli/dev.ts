/**
 * `subako dev [dir] [--port P]`: serves the project over MCP at one URL, printed once, and rebuilds on
 * every source change; the next call runs the new code, and a failed build leaves the last good one serving
 * (devkit/dev.ts says how). Runs until SIGINT or SIGTERM.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { systemErrorCode } from '../common/index.js';
import { UsageError } from '../errors.js';
import { DevServer, DevkitError } from '../devkit/index.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';
import { egressFromFlags } from './call.js';

interface DevFlags {
  port?: string;
  host?: string;
  volume?: string;
  allow: string[];
  policy?: string;
  allowPrivateDestinations?: boolean;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** Why the port could not be listened on, in one line naming the port and --port; null for any other failure. */
export function listenFailure(err: unknown, host: string, port: string | undefined): string | null {
  const code = systemErrorCode(err);
  const where = `port ${port ?? '(any)'} on ${host}`;
  if (code === 'EADDRINUSE') return `${where} is already in use by another program; choose another with --port <port>, or leave --port out for a free one`;
  if (code === 'EACCES' || code === 'EPERM') return `this user may not listen on ${where} (${code}: ports below 1024 need privileges); choose one from 1024 up with --port <port>`;
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine; pass one with --host (127.0.0.1 for this machine only)`;
  return null;
}

export function registerDev(program: Command, ctx: CommandContext): void {
  program
    .command('dev')
    .description('Serve the project over MCP at one URL and rebuild it on every change (the URL stays the same).')
    .argument('[dir]', 'the package project', '.')
    .option('--port <port>', 'TCP port (default: any free one)')
    .option('--host <host>', 'address to bind (default 127.0.0.1)')
    .option('--volume <dir>', 'host directory behind /volume (its tmp/ and data/); default: a fresh one, removed at exit')
    .option('--allow <host>', 'let the function reach this host (repeatable; *.example.com and :port allowed)', collect, [])
    .option('--policy <file>', 'egress policy JSON: {"allow", "grants", "vault", "privateDestinations"}')
    .option('--allow-private-destinations', 'let requests reach private and loopback addresses (local development only)')
    .action(async (dir: string, flags: DevFlags) => {
      if (flags.port !== undefined && !/^[0-9]{1,5}$/.test(flags.port)) throw new UsageError(`--port takes a port number, not "${flags.port}"`);
      const egress = await egressFromFlags(flags);
      const volumeDir = flags.volume ? resolve(flags.volume) : mkdtempSync(join(tmpdir(), 'subako-dev-'));
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      let server: DevServer;
      try {
        server = await DevServer.start({
          dir, volumeDir, egress, log, port: flags.port === undefined ? undefined : Number(flags.port), host: flags.host,
        });
      } catch (err) {
        if (!flags.volume) rmSync(volumeDir, { recursive: true, force: true });
        const listening = listenFailure(err, flags.host ?? '127.0.0.1', flags.port);
        if (!(err instanceof DevkitError) && listening === null) throw err;
        process.stderr.write(`subako dev: ${listening ?? (err as DevkitError).message}\n`);
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      process.stdout.write(`MCP URL (the same across rebuilds; the URL is the credential): ${server.url}\n`);
      log(`subako dev: watching ${resolve(dir)}; try: subako mcp tools --url '${server.url}'`);
      await new Promise<void>((done) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          done();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await server.close();
      if (!flags.volume) rmSync(volumeDir, { recursive: true, force: true });
      log('subako dev: stopped');
    });
}
