/**
 * `subako mcp stdio --url URL`: the stdio bridge (mcp/stdio-bridge.ts) for clients that only launch local
 * servers. Standard output carries the protocol and nothing else; what the person should know (a request the
 * server could not be reached for) goes to standard error in one line. It ends when the client closes its
 * standard input and every request sent has its answer, or on SIGINT/SIGTERM.
 */
import type { Command } from 'commander';
import { bridgeStdio, mcp } from '../mcp/index.js';
import type { CommandContext } from './command-context.js';
import { authFromFlags, serverOptions, type ServerFlags } from './server-flags.js';

export function registerMcpStdio(command: Command, _ctx: CommandContext): void {
  serverOptions(
    command
      .command('stdio')
      .description('Relay a local stdio MCP client to a Streamable HTTP server (a session URL): for clients that only launch stdio servers.'),
    { json: false },
  ).action(async (flags: ServerFlags) => {
    const bridge = await bridgeStdio({ url: flags.url, auth: authFromFlags(flags), log: (line) => process.stderr.write(`${line}\n`) });
    const stop = (): void => void bridge.close();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      await bridge.closed;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await mcp.close();
    }
  });
}
