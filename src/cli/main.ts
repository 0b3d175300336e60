/**
 * The `subako` command. Each subcommand lives in its own file and registers itself here; this file
 * only wires them together and maps failures to exit codes: 0 done, 1 refused or failed, 2 usage.
 */
import { Command, CommanderError } from 'commander';
import { SUBAKO_VERSION } from '../version.js';
import { UsageError } from '../errors.js';
import { CommandFailure, EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CommandContext } from './command-context.js';

type Register = (program: Command, ctx: CommandContext) => unknown;

/**
 * Subcommands load on demand: `subako wasi` should not pay for the MCP SDKs, SQLite or the image codec.
 * Only the command named on the line is loaded; help (or an unknown name) loads them all.
 */
const SUBCOMMANDS: Record<string, () => Promise<Register>> = {
  check: async () => (await import('./check.js')).registerCheck,
  wasi: async () => (await import('./wasi.js')).registerWasi,
  tools: async () => (await import('./tools.js')).registerTools,
  call: async () => (await import('./call.js')).registerCall,
  mcp: async () => (await import('./mcp.js')).registerMcp,
  serve: async () => (await import('./serve.js')).registerServe,
  worker: async () => (await import('./worker.js')).registerWorker,
  pack: async () => (await import('./pack.js')).registerPack,
  push: async () => (await import('./push.js')).registerPush,
  init: async () => (await import('./init.js')).registerInit,
  build: async () => (await import('./build.js')).registerBuild,
  dev: async () => (await import('./dev.js')).registerDev,
  login: async () => (await import('./login.js')).registerLogin,
  'admin-key': async () => (await import('./admin-key.js')).registerAdminKey,
  keys: async () => (await import('./keys.js')).registerKeys,
  packages: async () => (await import('./packages.js')).registerPackages,
  agents: async () => (await import('./agents.js')).registerAgents,
  sessions: async () => (await import('./sessions.js')).registerSessions,
  vaults: async () => (await import('./vaults.js')).registerVaults,
  users: async () => (await import('./users.js')).registerUsers,
  calls: async () => (await import('./calls.js')).registerCalls,
  approvals: async () => (await import('./approvals.js')).registerApprovals,
};

/** Own names only: `subako constructor` must not find Object.prototype's. */
function isCommand(word: string): boolean {
  return Object.hasOwn(SUBCOMMANDS, word);
}

/**
 * The command a line names that subako does not have (also as `help <name>`), or undefined. Checked before
 * commander parses: it would answer `subako <unknown> --help` with the main help and exit 0, as if the
 * line were right.
 */
export function unknownCommandIn(words: readonly string[]): string | undefined {
  const at = words.findIndex((word) => !word.startsWith('-'));
  if (at < 0) return undefined;
  const named = words[at];
  if (named === 'help') {
    const topic = words[at + 1];
    return topic === undefined || topic.startsWith('-') || isCommand(topic) ? undefined : topic;
  }
  return isCommand(named) ? undefined : named;
}

export async function buildProgram(ctx: CommandContext, argv: string[] = []): Promise<Command> {
  const program = new Command('subako')
    .description('Run WebAssembly function packages and MCP servers as tools for AI agents.')
    .version(SUBAKO_VERSION)
    .showHelpAfterError()
    .exitOverride();
  const words = argv.slice(2);
  const named = words.find((word) => !word.startsWith('-'));
  const versionOnly = named === undefined && words.some((word) => word === '-V' || word === '--version');
  const wanted = versionOnly ? [] : named !== undefined && isCommand(named) ? [named] : Object.keys(SUBCOMMANDS);
  const registers = await Promise.all(wanted.map((name) => SUBCOMMANDS[name]()));
  for (const register of registers) register(program, ctx);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const unknown = unknownCommandIn(argv.slice(2));
  if (unknown !== undefined) {
    process.stderr.write(`subako: unknown command ${JSON.stringify(unknown)}; the commands are ${Object.keys(SUBCOMMANDS).join(', ')} (see subako --help)\n`);
    return EXIT_USAGE;
  }
  const ctx: CommandContext = { exitCode: EXIT_OK };
  const program = await buildProgram(ctx, argv);
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
    if (err instanceof CommandFailure) {
      process.stderr.write(`subako: ${err.message}\n`);
      return EXIT_FAILED;
    }
    process.stderr.write(unexpectedErrorText(err, argv.includes('--debug') || process.env.SUBAKO_DEBUG === '1'));
    return EXIT_FAILED;
  }
}

/**
 * What a person sees of an error no command turned into its own message: one line with what went wrong and
 * how to see more; the stack only when asked (SUBAKO_DEBUG=1, or a command's own `--debug`).
 */
export function unexpectedErrorText(err: unknown, debug: boolean): string {
  const message = err instanceof Error ? err.message : String(err);
  const line = `subako: ${message.split('\n')[0] || 'an unexpected error'}${debug ? '' : ' (run it again with SUBAKO_DEBUG=1 to see where it failed)'}\n`;
  return debug && err instanceof Error && err.stack ? `${line}${err.stack}\n` : line;
}
