/**
 * `subako tools <pkg>`: the tools a package offers, as discovery finds them, printed as a JSON array.
 * Exit 1 with the problems when the package is refused.
 */
import type { Command } from 'commander';
import { FunctionHost } from '../function/index.js';
import { EXIT_FAILED, EXIT_OK, type CommandContext } from './command-context.js';
import { formatProblems, limitsFromFlags, loadFunction } from './load-function.js';

export function registerTools(program: Command, ctx: CommandContext): void {
  program
    .command('tools')
    .description('print the tools a function package offers (runs discovery) as a JSON array')
    .argument('<pkg>', 'a package directory or a .wasm module')
    .option('--memory <MiB>', 'memory cap for the module')
    .action(async (path: string, flags: { memory?: string }) => {
      const host = new FunctionHost({ poolSize: 1, limits: limitsFromFlags(flags) });
      try {
        const { problems, discovery } = await loadFunction(path, host);
        if (problems.length > 0 || !discovery?.tools) {
          process.stderr.write(`refused: ${path}\n${formatProblems(problems)}\n`);
          ctx.exitCode = EXIT_FAILED;
          return;
        }
        process.stdout.write(`${JSON.stringify(discovery.tools, null, 2)}\n`);
        ctx.exitCode = EXIT_OK;
      } finally {
        await host.close();
      }
    });
}
