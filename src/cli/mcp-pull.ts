/**
 * `subako mcp pull --url URL --out FILE.ts [--header K=V]… [--oauth NAME] [--url-env NAME]`: writes typed
 * bindings for a server's tools (see src/mcp/pull). Thin: flags in, a line or two out.
 */
import type { Command } from 'commander';
import { SubakoError, UsageError } from '../errors.js';
import { mcp } from '../mcp/index.js';
import { pullBindings, pullCommandFor } from '../mcp/pull/index.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';
import { authFromFlags, collect, headerFlags } from './server-flags.js';

interface PullFlags {
  url: string;
  out: string;
  header: string[];
  oauth?: string;
  urlEnv?: string;
}

export function registerMcpPull(mcpCommand: Command, ctx: CommandContext): void {
  mcpCommand
    .command('pull')
    .description("write a TypeScript module of typed wrappers for an MCP server's tools")
    .requiredOption('--url <url>', 'the MCP server')
    .requiredOption('--out <file.ts>', 'the module to write (overwritten: it is generated)')
    .option('--header <name=value>', 'a header to send, e.g. "Authorization=Bearer …" (repeatable; values never reach the file)', collect, [])
    .option('--oauth <name>', 'a credential stored by `subako mcp login`')
    .option('--url-env <NAME>', 'keep the URL out of the file and read it from this environment variable (automatic, as SUBAKO_<FILE>_URL, for a URL that may carry a token)')
    .action(async (flags: PullFlags) => {
      const auth = authFromFlags(flags);
      try {
        const result = await pullBindings({
          url: flags.url,
          auth,
          out: flags.out,
          command: pullCommandFor({
            url: flags.url,
            out: flags.out,
            headerNames: headerFlags(flags).map(([name]) => name),
            oauth: flags.oauth,
            urlEnvFlag: flags.urlEnv !== undefined,
          }),
          urlVariable: flags.urlEnv,
        });
        process.stdout.write(`wrote ${result.tools.length} tool binding${result.tools.length === 1 ? '' : 's'} to ${flags.out}\n`);
        if (result.urlVariable !== undefined) {
          process.stdout.write(
            `the URL is not in the file (${result.reasons.join('; ')}): connect() reads it from $${result.urlVariable} or takes it as an argument\n`,
          );
        }
      } catch (err) {
        if (err instanceof TypeError) throw new UsageError(err.message);
        if (!(err instanceof SubakoError)) throw err;
        process.stderr.write(`subako: ${err.message}\n`);
        ctx.exitCode = EXIT_FAILED;
      } finally {
        await mcp.close();
      }
    });
}
