/**
 * `subako pack <dir> [-o FILE]`: a package directory as the deterministic `.tar.gz` that `subako push`
 * uploads, named `<name>-<version>.tar.gz` (in the current directory) unless `-o` names it; prints the path.
 * A directory that `subako check` refuses is refused with the same problems (exit 1); only the manifest,
 * `module.wasm` and `assets/` go in. A skill directory (SKILL.md) is bundled whole, as `<dir name>.tar.gz`.
 */
import { writeFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import { BundleError, bundleDigest, packBundle } from '../package/index.js';
import { FunctionHost } from '../function/index.js';
import { bundleFileName, isSkillDir } from '../devkit/index.js';
import { EXIT_FAILED, type CommandContext } from './command-context.js';
import { packPackageDir } from './package-bundle.js';

export function registerPack(program: Command, ctx: CommandContext): void {
  program
    .command('pack')
    .description('Pack a package directory (or a skill directory) into a .tar.gz bundle for `subako push`; prints its path.')
    .argument('<dir>', 'the package directory (subako-package.json, module.wasm, assets/) or skill directory (SKILL.md)')
    .option('-o, --output <file>', 'where to write the bundle (default ./<name>-<version>.tar.gz)')
    .action(async (dir: string, flags: { output?: string }) => {
      const path = resolve(dir);
      let archive: Buffer;
      let defaultName: string;
      if (await isSkillDir(path)) {
        try {
          archive = await packBundle(path);
        } catch (err) {
          if (!(err instanceof BundleError)) throw err;
          for (const problem of err.problems) process.stderr.write(`subako pack: ${problem.message} [${problem.code}]\n`);
          ctx.exitCode = EXIT_FAILED;
          return;
        }
        defaultName = `${basename(path)}.tar.gz`;
      } else {
        const host = new FunctionHost({ poolSize: 1, isolation: 'thread' });
        try {
          const packed = await packPackageDir(dir, host, 'pack');
          if (!packed) {
            ctx.exitCode = EXIT_FAILED;
            return;
          }
          archive = packed.archive;
          defaultName = bundleFileName(packed.manifest);
        } finally {
          await host.close();
        }
      }
      const output = resolve(flags.output ?? defaultName);
      await writeFile(output, archive);
      process.stderr.write(`subako pack: ${archive.length} bytes, sha256 ${bundleDigest(archive)}\n`);
      process.stdout.write(`${output}\n`);
    });
}
