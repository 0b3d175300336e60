/**
 * Shared by `pack` and `push`: a package directory checked and discovered as `subako check` does, then
 * bundled; a refusal is printed as check prints problems. A path that does not exist is a usage error.
 */
import { UsageError } from '../errors.js';
import type { FunctionHost } from '../function/index.js';
import { PACKAGE_PROBLEMS, type PackageManifest } from '../package/index.js';
import { packPackage } from '../devkit/index.js';
import { formatProblems } from './load-function.js';

export async function packPackageDir(dir: string, host: FunctionHost, command: string): Promise<{ archive: Buffer; manifest: PackageManifest; tools: string[] } | null> {
  const packed = await packPackage(dir, host);
  if (packed.ok) return { archive: packed.archive, manifest: packed.manifest, tools: (packed.inspection.discovery?.tools ?? []).map((t) => t.name) };
  if (packed.problems.some((p) => p.code === PACKAGE_PROBLEMS.notFound)) {
    throw new UsageError(`${dir} does not exist; pass a package directory.`);
  }
  process.stderr.write(`subako ${command}: refused: ${dir}\n${formatProblems(packed.problems)}\n`);
  return null;
}
