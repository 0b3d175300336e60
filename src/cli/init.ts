/**
 * `subako init <dir> [--template c|assemblyscript|rust] [--name N] [--description D]`: a new package
 * project that builds and passes its own test at once, or, when the build needs something this machine or
 * the project lacks (a compiler; AssemblyScript, which the project installs), says what in one line.
 * Exit 1 when the directory holds files already.
 */
import { relative } from 'node:path';
import type { Command } from 'commander';
import { UsageError, ValidationError } from '../errors.js';
import { DEFAULT_TEMPLATE, DevkitError, TEMPLATE_NAMES, initProject, isTemplateName, missingToolsMessage, sdkPaths } from '../devkit/index.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';

export function registerInit(program: Command, ctx: CommandContext): void {
  program
    .command('init')
    .description('Start a function package project from a template: an example tool, a build, a test.')
    .argument('<dir>', 'a new or empty directory for the project')
    .option('--template <language>', `${TEMPLATE_NAMES.join(', ')} (default ${DEFAULT_TEMPLATE})`, DEFAULT_TEMPLATE)
    .option('--name <name>', "the package name (default: the directory's name)")
    .option('--description <text>', 'what the package does (goes in subako-package.json)')
    .action(async (dir: string, flags: { template: string; name?: string; description?: string }) => {
      if (!isTemplateName(flags.template)) {
        throw new UsageError(`--template ${flags.template} is not a template; choose one of ${TEMPLATE_NAMES.join(', ')}`);
      }
      let result;
      try {
        result = await initProject({ dir, template: flags.template, sdk: sdkPaths(flags.template), name: flags.name, description: flags.description });
      } catch (err) {
        if (err instanceof ValidationError) throw new UsageError(err.message);
        if (!(err instanceof DevkitError)) throw err;
        process.stderr.write(`subako init: ${err.message}\n`);
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      const shown = relative(process.cwd(), result.dir) || '.';
      process.stdout.write(`created package "${result.name}" (${result.template}) in ${shown}:\n`);
      for (const file of result.files) process.stdout.write(`  ${file}\n`);
      if (result.missing.length > 0) process.stdout.write(`before the first build: ${missingToolsMessage(result.template, result.missing)}\n`);
      process.stdout.write(`next: cd ${shown} && subako build   (then subako call . <tool> '<arguments>', or subako dev)\n`);
    });
}
