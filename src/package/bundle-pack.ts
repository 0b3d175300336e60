/**
 * Packing a directory into a bundle. Deterministic (sorted entries, fixed mtime, no owners), so the same
 * directory always gives the same bytes and the same content address.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Problem } from '../errors.js';
import { BUNDLE_PROBLEMS, BundleError } from './bundle.js';

const SKIPPED_DIRECTORIES = new Set(['node_modules']);

export interface PackOptions {
  /**
   * Only these names at the directory's top level go in (those absent are skipped): a package bundle holds
   * its manifest, module and assets, never the sources and build files beside them.
   */
  only?: readonly string[];
}

/**
 * Packs a directory into a `.tar.gz`. Symbolic links and special files are refused (the server would refuse
 * them too); dot-directories such as `.git` and `node_modules` are left out.
 */
export async function packBundle(dir: string, options: PackOptions = {}): Promise<Buffer> {
  const info = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
    throw error;
  });
  if (info === null || !info.isDirectory()) {
    throw new BundleError([{ code: BUNDLE_PROBLEMS.path, message: `${dir} is not a directory` }]);
  }
  const problems: Problem[] = [];
  const paths: string[] = [];
  await walk(dir, dir, paths, problems, options.only ? new Set(options.only) : null);
  if (problems.length === 0 && paths.length === 0) {
    problems.push({ code: BUNDLE_PROBLEMS.empty, message: `${dir} holds no files to pack` });
  }
  if (problems.length > 0) throw new BundleError(problems);
  paths.sort();
  const chunks: Buffer[] = [];
  // tar is loaded here, not with the package room: `subako call` of a directory packs nothing.
  const tar = await import('tar');
  const stream = tar.c(
    { gzip: { level: 9 }, cwd: dir, portable: true, noDirRecurse: true, mtime: new Date(0), follow: false },
    paths,
  );
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function walk(root: string, dir: string, out: string[], problems: Problem[], only: ReadonlySet<string> | null): Promise<void> {
  const names = (await readdir(dir)).sort().filter((name) => only === null || only.has(name));
  for (const name of names) {
    const full = join(dir, name);
    const rel = relative(root, full).split(sep).join('/');
    const info = await lstat(full);
    if (info.isSymbolicLink()) {
      problems.push({ code: BUNDLE_PROBLEMS.link, message: `${rel} is a symbolic link; bundles hold regular files only` });
    } else if (info.isDirectory()) {
      if (name.startsWith('.') || SKIPPED_DIRECTORIES.has(name)) continue;
      await walk(root, full, out, problems, null);
    } else if (info.isFile()) {
      if (name === '.DS_Store') continue;
      out.push(rel);
    } else {
      problems.push({ code: BUNDLE_PROBLEMS.entryType, message: `${rel} is not a regular file` });
    }
  }
}
