/**
 * A package directory as the bundle `subako pack` writes and `subako push` uploads: refused with the same
 * problems `subako check` reports (inspect.ts), and holding only the package itself — manifest, module
 * and assets — never the sources or build files of a project.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FunctionHost } from '../function/index.js';
import { BundleError, MANIFEST_FILE, PACKAGE_ENTRIES, packBundle, type PackageManifest } from '../package/index.js';
import type { Problem } from '../errors.js';
import { inspectPackage, type PackageInspection } from './inspect.js';

export type PackedPackage =
  | { ok: true; archive: Buffer; manifest: PackageManifest; inspection: PackageInspection }
  | { ok: false; problems: Problem[]; manifest: PackageManifest | null; inspection: PackageInspection | null };

/** `<name>-<version>.tar.gz`, or `<name>.tar.gz` for a package that leaves its version to the server. */
export function bundleFileName(manifest: PackageManifest): string {
  return `${manifest.name}${manifest.version ? `-${manifest.version}` : ''}.tar.gz`;
}

/** A skill directory (SKILL.md, no package manifest) is bundled whole, as the skill's files are the skill. */
export async function isSkillDir(dir: string): Promise<boolean> {
  const isFile = (path: string) => stat(path).then((s) => s.isFile(), (error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return false;
    throw error;
  });
  return !(await isFile(join(dir, MANIFEST_FILE))) && (await isFile(join(dir, 'SKILL.md')));
}

export async function packPackage(dir: string, host: FunctionHost): Promise<PackedPackage> {
  const inspection = await inspectPackage(dir, host);
  const manifest = inspection.check.manifest;
  if (inspection.problems.length > 0 || !manifest) return { ok: false, problems: inspection.problems, manifest, inspection };
  try {
    return { ok: true, archive: await packBundle(dir, { only: PACKAGE_ENTRIES }), manifest, inspection };
  } catch (error) {
    if (!(error instanceof BundleError)) throw error;
    return { ok: false, problems: error.problems, manifest, inspection };
  }
}
