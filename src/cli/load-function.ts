/**
 * Shared by `check`, `tools` and `call`: run the upload checks on a .wasm file or a package directory, then
 * discovery, on a FunctionHost the caller closes.
 */
import type { Problem } from '../errors.js';
import { UsageError } from '../errors.js';
import type { FunctionHost } from '../function/index.js';
import type { PackageInspection } from '../devkit/index.js';
import type { CallLimits } from '../config.js';

/** What the checks and discovery found (devkit/inspect.ts, the one copy every command uses). */
export type LoadedFunction = PackageInspection;

/**
 * The checks (devkit/ and package/: the module parser, the package rules, about a hundred files) are loaded here,
 * not with the command: a caller makes its host first, so its sandbox process boots while they load.
 */
export async function loadFunction(path: string, host: FunctionHost): Promise<LoadedFunction> {
  const [{ inspectPackage }, { PACKAGE_PROBLEMS }] = await Promise.all([import('../devkit/index.js'), import('../package/index.js')]);
  const inspection = await inspectPackage(path, host);
  if (inspection.check.problems.some((p) => p.code === PACKAGE_PROBLEMS.notFound)) {
    throw new UsageError(`${path} does not exist; pass a .wasm module or a package directory.`);
  }
  return inspection;
}

/** Parses `--timeout ms` and `--memory MiB` into limits, refusing what is not a positive whole number. */
export function limitsFromFlags(flags: { timeout?: string; memory?: string }): Partial<CallLimits> {
  const limits: Partial<CallLimits> = {};
  const positive = (flag: string, value: string): number => {
    if (!/^[1-9][0-9]*$/.test(value)) throw new UsageError(`${flag} takes a positive whole number, not "${value}"`);
    return Number(value);
  };
  if (flags.timeout !== undefined) {
    limits.callTimeoutMs = positive('--timeout', flags.timeout);
    limits.discoveryTimeoutMs = Math.min(limits.callTimeoutMs, 10_000);
  }
  if (flags.memory !== undefined) limits.memoryBytes = positive('--memory', flags.memory) * 1024 * 1024;
  return limits;
}

export function formatProblems(problems: Problem[]): string {
  return problems.map((p) => `  ${p.code}: ${p.message}`).join('\n');
}
