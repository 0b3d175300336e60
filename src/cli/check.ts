/**
 * `subako check <path> [--json]`: the upload checks for a `.wasm` module or a package directory.
 * Exit 0 when accepted, 1 when refused, 2 when the path does not exist (a usage error).
 */
import type { Command } from 'commander';
import { UsageError, type Problem } from '../errors.js';
import { checkPackage, PACKAGE_PROBLEMS, type PackageCheck, type PackageManifest } from '../package/index.js';
import { EXIT_FAILED, EXIT_OK, type CommandContext } from './main.js';

/** What `--json` prints. Later steps add keys; these three keep their names and meaning. */
export interface CheckReport {
  ok: boolean;
  problems: Problem[];
  manifest: PackageManifest | null;
}

export function checkReport(result: PackageCheck): CheckReport {
  return {
    ok: result.ok,
    problems: result.problems.map(({ code, message }) => ({ code, message })),
    manifest: result.manifest,
  };
}

export function formatCheckReport(path: string, report: CheckReport): string {
  const subject = report.manifest
    ? `package "${report.manifest.name}"${report.manifest.version ? ` ${report.manifest.version}` : ''} (${path})`
    : path;
  if (report.ok) return `accepted: ${subject} is a valid function package (ABI 1).\n`;
  const count = report.problems.length;
  const lines = report.problems.map((p) => `  ${p.code}: ${p.message}`);
  return `refused: ${subject} has ${count} problem${count === 1 ? '' : 's'}:\n${lines.join('\n')}\n`;
}

export function registerCheck(program: Command, ctx: CommandContext): void {
  program
    .command('check')
    .description('check a .wasm module or a package directory against the function package rules (ABI 1)')
    .argument('<path>', 'a .wasm file, or a directory holding subako-package.json and module.wasm')
    .option('--json', 'print {"ok", "problems", "manifest"} as JSON')
    .action(async (path: string, options: { json?: boolean }) => {
      const result = await checkPackage(path);
      if (result.problems.some((p) => p.code === PACKAGE_PROBLEMS.notFound)) {
        throw new UsageError(`${path} does not exist; pass a .wasm module or a package directory.`);
      }
      const report = checkReport(result);
      process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatCheckReport(path, report));
      ctx.exitCode = report.ok ? EXIT_OK : EXIT_FAILED;
    });
}
