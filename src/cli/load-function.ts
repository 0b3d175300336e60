/**
 * Shared by `check`, `tools` and `call`: run the upload checks on a .wasm file or a package directory, then
 * discovery, on a FunctionHost the caller closes.
 */
import { basename } from 'node:path';
import type { Problem } from '../errors.js';
import { UsageError } from '../errors.js';
import { checkPackage, PACKAGE_PROBLEMS, type PackageCheck } from '../package/index.js';
import { FunctionHost, type LoadedPackage, type DiscoveryResult, type PackageSource } from '../function/index.js';
import type { CallLimits } from '../config.js';

export interface LoadedFunction {
  check: PackageCheck;
  /** Null when the checks refused the package (discovery does not run then). */
  loaded: LoadedPackage | null;
  discovery: DiscoveryResult | null;
  /** Every problem: the checks', then discovery's. */
  problems: Problem[];
}

/** A bare module has no manifest: its name comes from the file name, made a valid package name. */
export function nameFromFile(path: string): string {
  const name = basename(path).replace(/\.wasm$/i, '').toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^[-_]+/, '');
  return name.slice(0, 64) || 'module';
}

export async function loadFunction(path: string, host: FunctionHost): Promise<LoadedFunction> {
  const check = await checkPackage(path);
  if (check.problems.some((p) => p.code === PACKAGE_PROBLEMS.notFound)) {
    throw new UsageError(`${path} does not exist; pass a .wasm module or a package directory.`);
  }
  if (!check.ok || !check.moduleBytes) return { check, loaded: null, discovery: null, problems: check.problems };
  const source: PackageSource = {
    name: check.manifest?.name ?? nameFromFile(path),
    version: check.manifest?.version,
    description: check.manifest?.description,
    moduleBytes: check.moduleBytes,
    assetsDir: check.assetsDir,
  };
  const loaded = await host.load(source);
  const discovery = await host.discover(loaded);
  return { check, loaded, discovery, problems: discovery.problems };
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
