/**
 * `subako build [dir]`: builds the project's `module.wasm` with its template's recipe (the compiler's
 * output shown as it writes it), then runs the upload checks and discovery and prints the tools, as
 * `subako check` does. Exit 1 when a tool is missing (one line naming what to install), the build fails,
 * or the checks refuse the module.
 */
import type { Command } from 'commander';
import { DevkitError, buildProject } from '../devkit/index.js';
import { FunctionHost } from '../function/index.js';
import { EXIT_FAILED, EXIT_OK, type CommandContext } from './command-context.js';
import { checkReport, formatCheckReport } from './check.js';

export function registerBuild(program: Command, ctx: CommandContext): void {
  program
    .command('build')
    .description("Build the project's module.wasm, then check it and list its tools.")
    .argument('[dir]', 'the package project', '.')
    .action(async (dir: string) => {
      const host = new FunctionHost({ poolSize: 1, isolation: 'thread' });
      try {
        const { inspection } = await buildProject(dir, host);
        const report = checkReport(inspection.check, inspection.discovery);
        process.stdout.write(formatCheckReport(dir, report));
        ctx.exitCode = report.ok ? EXIT_OK : EXIT_FAILED;
      } catch (err) {
        if (!(err instanceof DevkitError)) throw err;
        process.stderr.write(`subako build: ${err.message}\n`);
        ctx.exitCode = EXIT_FAILED;
      } finally {
        await host.close();
      }
    });
}
