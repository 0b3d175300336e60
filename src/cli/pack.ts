/**
 * `subako pack <dir> [-o FILE]`: a package (or skill) directory as a deterministic `.tar.gz`, ready for
 * `subako push`. Symbolic links and special files are refused, as the server would refuse them.
 */
import { writeFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import { BundleError, bundleDigest, packBundle } from '../package/index.js';
import { EXIT_FAILED, type CommandContext } from './main.js';

export function registerPack(program: Command, ctx: CommandContext): void {
  program
    .command('pack')
    .description('Pack a package or skill directory into a .tar.gz bundle for upload.')
    .argument('<dir>', 'the package directory (subako-package.json, module.wasm, assets/) or skill directory (SKILL.md)')
    .option('-o, --output <file>', 'where to write the bundle (default <dir name>.tar.gz)')
    .action(async (dir: string, flags: { output?: string }) => {
      const output = resolve(flags.output ?? `${basename(resolve(dir))}.tar.gz`);
      let archive: Buffer;
      try {
        archive = await packBundle(resolve(dir));
      } catch (err) {
        if (!(err instanceof BundleError)) throw err;
        for (const problem of err.problems) process.stderr.write(`subako pack: ${problem.message} [${problem.code}]\n`);
        ctx.exitCode = EXIT_FAILED;
        return;
      }
      await writeFile(output, archive);
      process.stdout.write(`${output} (${archive.length} bytes, sha256 ${bundleDigest(archive)})\n`);
    });
}
