/**
 * The `subako` command. Each subcommand lives in its own file and registers itself here; this file
 * only wires them together and maps failures to exit codes: 0 done, 1 refused or failed, 2 usage.
 */
import { Command, CommanderError } from 'commander';
import { SUBAKO_VERSION } from '../version.js';
import { UsageError } from '../errors.js';
import { registerCheck } from './check.js';
import { registerWasi } from './wasi.js';
import { registerTools } from './tools.js';
import { registerCall } from './call.js';
import { registerMcp } from './mcp.js';
import { registerServe } from './serve.js';
import { registerPack } from './pack.js';
import { registerPush } from './push.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** A subcommand's action sets this instead of calling process.exit, so tests can run main() in-process. */
export interface CommandContext {
  exitCode: number;
}

export function buildProgram(ctx: CommandContext): Command {
  const program = new Command('subako')
    .description('Run WebAssembly function packages and MCP servers as tools for AI agents.')
    .version(SUBAKO_VERSION)
    .showHelpAfterError()
    .exitOverride();
  registerCheck(program, ctx);
  registerWasi(program, ctx);
  registerTools(program, ctx);
  registerCall(program, ctx);
  registerMcp(program, ctx);
  registerServe(program, ctx);
  registerPack(program, ctx);
  registerPush(program, ctx);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const ctx: CommandContext = { exitCode: EXIT_OK };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv);
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`subako: ${err.message}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
}
