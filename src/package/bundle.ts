/**
 * Bundles: a package or skill directory as one `.tar.gz`. Packing is deterministic (sorted entries, fixed
 * mtime, no owners) so the same directory always gives the same bytes and the same content address.
 * Unpacking trusts nothing in the archive: it is decompressed with a hard cap, every entry is checked
 * (regular files and directories only, relative paths that stay inside, no duplicates), and only when the
 * whole archive passes is anything written, into a fresh directory that appears by one rename.
 */
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';
import * as tar from 'tar';
import { ValidationError, type Problem } from '../errors.js';

export interface BundleLimits {
  /** The compressed archive, in bytes. */
  maxArchiveBytes: number;
  /** The sum of the files' sizes once unpacked, in bytes. */
  maxUnpackedBytes: number;
  /** Files and directories together. */
  maxEntries: number;
}

export const DEFAULT_BUNDLE_LIMITS: Readonly<BundleLimits> = Object.freeze({
  maxArchiveBytes: 64 * 1024 * 1024,
  maxUnpackedBytes: 256 * 1024 * 1024,
  maxEntries: 10_000,
});

/** Problem codes a bundle can raise, defined once. */
export const BUNDLE_PROBLEMS = {
  tooLarge: 'bundle.too_large',
  unpackedTooLarge: 'bundle.unpacked_too_large',
  tooManyEntries: 'bundle.too_many_entries',
  notGzip: 'bundle.not_gzip',
  corrupt: 'bundle.corrupt',
  empty: 'bundle.empty',
  path: 'bundle.path',
  entryType: 'bundle.entry_type',
  duplicate: 'bundle.duplicate',
  link: 'bundle.link',
} as const;

/** A bundle refused: every problem found, so the author fixes them in one go. */
export class BundleError extends ValidationError {}

export interface BundleFile {
  /** Relative POSIX path inside the bundle, without a leading `./`. */
  path: string;
  data: Buffer;
}

export interface BundleContents {
  files: BundleFile[];
  directories: string[];
  unpackedBytes: number;
}

const MAX_PATH_LENGTH = 1024;
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const LINK_TYPES = new Set(['SymbolicLink', 'Link']);

/** The sha-256 of an archive, as lowercase hex: the content address of a bundle. */
export function bundleDigest(archive: Uint8Array): string {
  return createHash('sha256').update(archive).digest('hex');
}

/**
 * Checks one entry path and returns it normalized (no `./` prefix, no trailing `/`), or a problem.
 * Pure: exported so the rules can be tested without building archives.
 */
export function normalizeEntryPath(raw: string): { path: string } | { problem: Problem } {
  const refuse = (why: string): { problem: Problem } => ({
    problem: { code: BUNDLE_PROBLEMS.path, message: `entry ${JSON.stringify(raw)} ${why}` },
  });
  if (raw.length === 0) return refuse('has an empty path');
  if (raw.length > MAX_PATH_LENGTH) return refuse(`has a path longer than ${MAX_PATH_LENGTH} characters`);
  if (raw.includes('\0')) return refuse('contains a NUL character');
  if (raw.includes('\\')) return refuse('contains a backslash; bundle paths use "/"');
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) return refuse('is an absolute path; entries must be relative');
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.some((s) => s === '..')) return refuse('climbs out of the bundle with ".."');
  if (segments.length === 0) return { path: '' };
  return { path: segments.join('/') };
}

/**
 * Reads and checks every entry of a `.tar.gz` in memory. Throws a BundleError naming every problem;
 * writes nothing.
 */
export async function readBundle(
  archive: Uint8Array,
  limits: BundleLimits = DEFAULT_BUNDLE_LIMITS,
): Promise<BundleContents> {
  if (archive.byteLength > limits.maxArchiveBytes) {
    throw new BundleError([{
      code: BUNDLE_PROBLEMS.tooLarge,
      message: `the bundle is ${archive.byteLength} bytes; the limit is ${limits.maxArchiveBytes}`,
    }]);
  }
  if (archive.byteLength < 2 || archive[0] !== 0x1f || archive[1] !== 0x8b) {
    throw new BundleError([{
      code: BUNDLE_PROBLEMS.notGzip,
      message: 'the bundle is not a gzip-compressed tar archive (make one with `subako pack <dir>`)',
    }]);
  }
  const tarBytes = gunzipCapped(archive, limits);
  const problems: Problem[] = [];
  const files = new Map<string, Buffer>();
  const directories = new Set<string>();
  let entries = 0;
  let unpackedBytes = 0;

  await new Promise<void>((resolve, reject) => {
    const parser = new tar.Parser({ strict: true });
    parser.on('entry', (entry: tar.ReadEntry) => {
      entries += 1;
      if (entries > limits.maxEntries) {
        if (entries === limits.maxEntries + 1) {
          problems.push({
            code: BUNDLE_PROBLEMS.tooManyEntries,
            message: `the bundle has more than ${limits.maxEntries} entries`,
          });
        }
        entry.resume();
        return;
      }
      const checked = normalizeEntryPath(entry.path);
      if ('problem' in checked) {
        problems.push(checked.problem);
        entry.resume();
        return;
      }
      const path = checked.path;
      if (LINK_TYPES.has(entry.type)) {
        problems.push({
          code: BUNDLE_PROBLEMS.link,
          message: `entry ${JSON.stringify(path)} is a ${entry.type === 'Link' ? 'hard link' : 'symbolic link'}; bundles hold regular files only`,
        });
        entry.resume();
        return;
      }
      if (entry.type === 'Directory') {
        if (path !== '') directories.add(path);
        entry.resume();
        return;
      }
      if (!FILE_TYPES.has(entry.type)) {
        problems.push({
          code: BUNDLE_PROBLEMS.entryType,
          message: `entry ${JSON.stringify(path)} is a ${entry.type}; bundles hold regular files and directories only`,
        });
        entry.resume();
        return;
      }
      if (path === '' || files.has(path)) {
        problems.push({
          code: path === '' ? BUNDLE_PROBLEMS.path : BUNDLE_PROBLEMS.duplicate,
          message: path === '' ? 'a file entry has no name' : `entry ${JSON.stringify(path)} appears twice`,
        });
        entry.resume();
        return;
      }
      unpackedBytes += entry.size;
      if (unpackedBytes > limits.maxUnpackedBytes) {
        entry.resume();
        return;
      }
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () => files.set(path, Buffer.concat(chunks)));
    });
    parser.on('error', (err: Error) => reject(corrupt(err)));
    parser.on('abort', (err: Error) => reject(corrupt(err)));
    parser.on('end', () => resolve());
    parser.end(tarBytes);
  });

  if (unpackedBytes > limits.maxUnpackedBytes) {
    problems.push({
      code: BUNDLE_PROBLEMS.unpackedTooLarge,
      message: `the bundle's files add up to more than ${limits.maxUnpackedBytes} bytes`,
    });
  }
  // A file may not stand where another entry needs a directory ("a" and "a/b").
  const allPaths = new Set([...files.keys(), ...directories]);
  for (const path of allPaths) {
    for (let cut = path.indexOf('/'); cut !== -1; cut = path.indexOf('/', cut + 1)) {
      const parent = path.slice(0, cut);
      if (files.has(parent)) {
        problems.push({
          code: BUNDLE_PROBLEMS.duplicate,
          message: `entry ${JSON.stringify(parent)} is a file but ${JSON.stringify(path)} needs it to be a directory`,
        });
      }
    }
  }
  if (problems.length === 0 && files.size === 0) {
    problems.push({ code: BUNDLE_PROBLEMS.empty, message: 'the bundle holds no files' });
  }
  if (problems.length > 0) throw new BundleError(problems);
  const sorted = [...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    files: sorted.map(([path, data]) => ({ path, data })),
    directories: [...directories].sort(),
    unpackedBytes,
  };
}

/**
 * Unpacks a checked bundle into `destDir`, which must not exist yet. Files are written with mode 0644
 * whatever the archive says (nothing in a bundle is executable by the host). The directory appears at
 * once, complete, or not at all.
 */
export async function unpackBundle(
  archive: Uint8Array,
  destDir: string,
  limits: BundleLimits = DEFAULT_BUNDLE_LIMITS,
): Promise<BundleContents> {
  const contents = await readBundle(archive, limits);
  await writeBundleTree(contents, destDir);
  return contents;
}

/** Writes already-checked contents to a fresh directory by way of a sibling staging directory. */
export async function writeBundleTree(contents: BundleContents, destDir: string): Promise<void> {
  const staging = `${destDir}.partial-${randomBytes(6).toString('hex')}`;
  await mkdir(dirname(destDir), { recursive: true });
  try {
    await mkdir(staging, { mode: 0o755 });
    for (const dir of contents.directories) await mkdir(join(staging, dir), { recursive: true, mode: 0o755 });
    for (const file of contents.files) {
      const target = join(staging, file.path);
      await mkdir(dirname(target), { recursive: true, mode: 0o755 });
      await writeFile(target, file.data, { mode: 0o644, flag: 'wx' });
    }
    await rename(staging, destDir);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Packs a directory into a `.tar.gz`. Symbolic links and special files are refused (the server would refuse
 * them too); dot-directories such as `.git` and `node_modules` are left out.
 */
export async function packBundle(dir: string): Promise<Buffer> {
  const info = await lstat(dir).catch(() => null);
  if (info === null || !info.isDirectory()) {
    throw new BundleError([{ code: BUNDLE_PROBLEMS.path, message: `${dir} is not a directory` }]);
  }
  const problems: Problem[] = [];
  const paths: string[] = [];
  await walk(dir, dir, paths, problems);
  if (problems.length === 0 && paths.length === 0) {
    problems.push({ code: BUNDLE_PROBLEMS.empty, message: `${dir} holds no files to pack` });
  }
  if (problems.length > 0) throw new BundleError(problems);
  paths.sort();
  const chunks: Buffer[] = [];
  const stream = tar.c(
    { gzip: { level: 9 }, cwd: dir, portable: true, noDirRecurse: true, mtime: new Date(0), follow: false },
    paths,
  );
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

const SKIPPED_DIRECTORIES = new Set(['node_modules']);

async function walk(root: string, dir: string, out: string[], problems: Problem[]): Promise<void> {
  const names = (await readdir(dir)).sort();
  for (const name of names) {
    const full = join(dir, name);
    const rel = relative(root, full).split(sep).join('/');
    const info = await lstat(full);
    if (info.isSymbolicLink()) {
      problems.push({ code: BUNDLE_PROBLEMS.link, message: `${rel} is a symbolic link; bundles hold regular files only` });
    } else if (info.isDirectory()) {
      if (name.startsWith('.') || SKIPPED_DIRECTORIES.has(name)) continue;
      await walk(root, full, out, problems);
    } else if (info.isFile()) {
      if (name === '.DS_Store') continue;
      out.push(rel);
    } else {
      problems.push({ code: BUNDLE_PROBLEMS.entryType, message: `${rel} is not a regular file` });
    }
  }
}

function gunzipCapped(archive: Uint8Array, limits: BundleLimits): Buffer {
  // Tar adds a 512-byte header per entry plus padding: allow for that beyond the file bytes.
  const cap = limits.maxUnpackedBytes + (limits.maxEntries + 4) * 1024;
  try {
    return gunzipSync(archive, { maxOutputLength: cap });
  } catch (err) {
    if (err instanceof RangeError || (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new BundleError([{
        code: BUNDLE_PROBLEMS.unpackedTooLarge,
        message: `the bundle unpacks to more than ${limits.maxUnpackedBytes} bytes`,
      }]);
    }
    throw corrupt(err);
  }
}

function corrupt(err: unknown): BundleError {
  const detail = err instanceof Error ? err.message : String(err);
  return new BundleError([{ code: BUNDLE_PROBLEMS.corrupt, message: `the bundle is not a readable tar.gz: ${detail}` }]);
}
