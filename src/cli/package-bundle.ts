/**
 * The one way a bundle is made and sent, shared by `pack`, `push` and `packages create`: a package directory
 * checked and discovered as `subako check` does, then bundled with only what a package is (the manifest,
 * `module.wasm`, `assets/`: never the sources or a build's `target/`); a skill directory bundled whole; a
 * `.tar.gz` sent as it is. A refusal is printed as check prints problems. A path that does not exist is a
 * usage error.
 */
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { systemErrorCode } from '../common/index.js';
import { UsageError } from '../errors.js';
import { FunctionHost } from '../function/index.js';
import { BundleError, PACKAGE_PROBLEMS, packBundle, type PackageManifest } from '../package/index.js';
import { isSkillDir, packPackage } from '../devkit/index.js';
import type { PackageView, SkillView } from '../server/api/index.js';
import type { ApiClient } from './api-client.js';
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

/**
 * The bytes to upload for a `.tar.gz` or a directory (a package, or with `skill` a skill), packed exactly as
 * `subako pack` packs it; null when it was refused (its problems said on stderr).
 */
export async function bundleFor(bundle: string, skill: boolean, command: string): Promise<Buffer | null> {
  const path = resolve(bundle);
  const info = await stat(path).catch((error: unknown) => {
    const code = systemErrorCode(error);
    if (code === undefined) throw error;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new UsageError(`${bundle} cannot be read (${code})`);
  });
  if (!info) throw new UsageError(`${bundle} does not exist`);
  if (!info.isDirectory()) return readFile(path);
  if (await isSkillDir(path) !== skill) {
    throw new UsageError(skill
      ? `${bundle} is no skill directory (it has no SKILL.md, or it has a subako-package.json); push a package without --skill`
      : `${bundle} is a skill directory (SKILL.md); push it with --skill`);
  }
  if (skill) {
    try {
      return await packBundle(path);
    } catch (err) {
      if (!(err instanceof BundleError)) throw err;
      for (const problem of err.problems) process.stderr.write(`subako ${command}: ${problem.message} [${problem.code}]\n`);
      return null;
    }
  }
  const host = new FunctionHost({ poolSize: 1, isolation: 'thread' });
  try {
    return (await packPackageDir(bundle, host, command))?.archive ?? null;
  } finally {
    await host.close();
  }
}

/** Uploads a bundle; `fresh` is false when the server already had that very version (it answers 200, not 201). */
export async function uploadBundle<Kind extends 'packages' | 'skills'>(
  client: ApiClient, kind: Kind, bytes: Buffer,
): Promise<{ published: Kind extends 'packages' ? PackageView : SkillView; fresh: boolean }> {
  const answer = await client.answer<Kind extends 'packages' ? PackageView : SkillView>('POST', `/v1/${kind}`, {
    body: new Uint8Array(bytes), contentType: 'application/gzip',
  });
  return { published: answer.body, fresh: answer.status === 201 };
}
