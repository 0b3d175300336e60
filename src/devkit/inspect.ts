/**
 * A package as the platform would take it: the upload checks on a `.wasm` file or a package directory,
 * then discovery (the module is asked for its tools). `subako check`, `tools`, `call`, `build`, `pack`,
 * `push` and `dev` all go through this one function, so what one accepts the others accept.
 */
import { basename } from 'node:path';
import type { Problem } from '../errors.js';
import { checkPackage, type PackageCheck } from '../package/index.js';
import type { DiscoveryResult, FunctionHost, LoadedPackage, PackageSource } from '../function/index.js';

export interface PackageInspection {
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

export async function inspectPackage(path: string, host: FunctionHost): Promise<PackageInspection> {
  const check = await checkPackage(path);
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
