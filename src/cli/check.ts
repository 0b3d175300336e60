/**
 * `subako check <path> [--json]`: the upload checks for a `.wasm` module or a package directory, then
 * discovery (the module is asked for its tools, as on upload).
 * Exit 0 when accepted, 1 when refused, 2 when the path does not exist (a usage error).
 */
import type { Command } from 'commander';
import type { Problem } from '../errors.js';
import type { PackageCheck, PackageManifest } from '../package/index.js';
import { FunctionHost, type DiscoveryResult, type ToolInfo } from '../function/index.js';
import { EXIT_FAILED, EXIT_OK, type CommandContext } from './command-context.js';
import { limitsFromFlags, loadFunction } from './load-function.js';

/** What `--json` prints. Later steps add keys; these three keep their names and meaning. */
export interface CheckReport {
  ok: boolean;
  problems: Problem[];
  manifest: PackageManifest | null;
  /** The tools discovery found; null when the package was refused before or by discovery. */
  tools: ToolInfo[] | null;
}

export function checkReport(result: PackageCheck, discovery: DiscoveryResult | null = null): CheckReport {
  const problems = [...result.problems, ...(discovery?.problems ?? [])];
  return {
    ok: problems.length === 0,
    problems: problems.map(({ code, message }) => ({ code, message })),
    manifest: result.manifest,
    tools: discovery?.tools ?? null,
  };
}

export function formatCheckReport(path: string, report: CheckReport): string {
  const subject = report.manifest
    ? `package "${report.manifest.name}"${report.manifest.version ? ` ${report.manifest.version}` : ''} (${path})`
    : path;
  if (report.ok) {
    const tools = report.tools ?? [];
    const list = tools.map((t) => `  ${t.name}${t.description ? ` — ${t.description.split('\n')[0]}` : ''}`).join('\n');
    return `accepted: ${subject} is a valid function package (ABI 1) with ${tools.length} tool${tools.length === 1 ? '' : 's'}:\n${list}\n`;
  }
  const count = report.problems.length;
  const lines = report.problems.map((p) => `  ${p.code}: ${p.message}`);
  return `refused: ${subject} has ${count} problem${count === 1 ? '' : 's'}:\n${lines.join('\n')}\n`;
}

export function registerCheck(program: Command, ctx: CommandContext): void {
  program
    .command('check')
    .description('check a .wasm module or a package directory against the function package rules (ABI 1)')
    .argument('<path>', 'a .wasm file, or a directory holding subako-package.json and module.wasm')
    .option('--json', 'print {"ok", "problems", "manifest", "tools"} as JSON')
    .option('--memory <MiB>', 'memory cap for the module during discovery')
    .action(async (path: string, options: { json?: boolean; memory?: string }) => {
      const host = new FunctionHost({ poolSize: 1, limits: limitsFromFlags(options) });
      try {
        const loaded = await loadFunction(path, host);
        const report = checkReport(loaded.check, loaded.discovery);
        process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatCheckReport(path, report));
        ctx.exitCode = report.ok ? EXIT_OK : EXIT_FAILED;
      } finally {
        await host.close();
      }
    });
}
