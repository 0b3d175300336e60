/**
 * `checkPackage(path)`: the upload checks for a `.wasm` file or a package directory — the manifest
 * (for a directory), the package layout, and the module against the ABI 1 rules — every problem at once.
 */
import { stat } from 'node:fs/promises';
import type { Problem } from '../errors.js';
import type { ModuleInfo } from '../wasm/index.js';
import type { PackageManifest } from './manifest.js';
import { checkFunctionModule } from './module-rules.js';
import { MAX_MODULE_BYTES, PACKAGE_PROBLEMS, isMissing, readFileCapped, readPackageDir } from './package-dir.js';

export interface PackageCheck {
  ok: boolean;
  problems: Problem[];
  /** The manifest when the path is a package directory whose manifest is valid; otherwise null. */
  manifest: PackageManifest | null;
  /** What the module declares, when it could be read (null for a missing module). */
  module: ModuleInfo | null;
  /** The module's bytes when they could be read, for later steps (discovery) to run without reading twice. */
  moduleBytes: Uint8Array | null;
  /** The package's assets directory, when it has one. */
  assetsDir: string | null;
}

export async function checkPackage(path: string): Promise<PackageCheck> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (error) {
    if (!isMissing(error)) throw error;
    return failed([{ code: PACKAGE_PROBLEMS.notFound, message: `${path} does not exist; pass a .wasm module or a package directory.` }]);
  }
  if (isDirectory) {
    const read = await readPackageDir(path);
    const problems = read.ok ? [] : [...read.problems];
    const bytes = read.moduleBytes;
    const moduleCheck = bytes ? checkFunctionModule(bytes) : null;
    if (moduleCheck) problems.push(...moduleCheck.problems);
    return {
      ok: problems.length === 0, problems, manifest: read.manifest, module: moduleCheck?.info ?? null,
      moduleBytes: bytes, assetsDir: read.ok ? read.assetsDir : null,
    };
  }
  const read = await readFileCapped(path, MAX_MODULE_BYTES);
  if (!read.ok) {
    const message = read.reason === 'too-large'
      ? `${path} is ${read.detail}; the largest module accepted is ${MAX_MODULE_BYTES} bytes.`
      : `${path} cannot be read (${read.detail}).`;
    const code = read.reason === 'too-large' ? PACKAGE_PROBLEMS.moduleTooLarge : PACKAGE_PROBLEMS.unreadable;
    return failed([{ code, message }]);
  }
  const moduleCheck = checkFunctionModule(read.bytes);
  return {
    ok: moduleCheck.ok, problems: moduleCheck.problems, manifest: null, module: moduleCheck.info,
    moduleBytes: read.bytes, assetsDir: null,
  };
}

function failed(problems: Problem[]): PackageCheck {
  return { ok: false, problems, manifest: null, module: null, moduleBytes: null, assetsDir: null };
}
