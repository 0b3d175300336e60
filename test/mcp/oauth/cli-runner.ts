/**
 * Runs `subako mcp <login|credentials|forget|pull> …` in its own process (stdout stays the CLI's alone):
 * an `mcp` command with exactly the subcommands this folder's files register, wired like main.ts does.
 * Usage: node cli-runner.js <subcommand> [flags…]
 */
import { Command, CommanderError } from 'commander';
import { UsageError } from '../../../src/errors.js';
import { registerMcpOAuth } from '../../../src/cli/mcp-oauth.js';
import { registerMcpPull } from '../../../src/cli/mcp-pull.js';

const ctx = { exitCode: 0 };
const mcpCommand = new Command('mcp').exitOverride();
registerMcpOAuth(mcpCommand, ctx);
registerMcpPull(mcpCommand, ctx);
for (const sub of mcpCommand.commands) sub.exitOverride();

try {
  await mcpCommand.parseAsync(process.argv.slice(2), { from: 'user' });
  process.exitCode = ctx.exitCode;
} catch (err) {
  if (err instanceof CommanderError) process.exitCode = err.exitCode === 0 ? 0 : 2;
  else if (err instanceof UsageError) {
    process.stderr.write(`subako: ${err.message}\n`);
    process.exitCode = 2;
  } else throw err;
}
