/**
 * Reading a bundle: trusts nothing in the archive. The gzip layer is inflated by a zlib stream, whose work
 * runs on libuv's thread pool one bounded chunk at a time, so a large upload never holds the event loop (other
 * requests are answered between chunks) and inflating stops as soon as the output passes its cap. Every tar
 * entry is checked as it streams past (regular files and directories only, relative paths that stay inside,
 * no duplicates); the contents are answered only when the whole archive passes, and nothing is written.
 */
import { createGunzip } from 'node:zlib';
import type { Parser, ReadEntry } from 'tar';
import type { Problem } from '../errors.js';
import { BUNDLE_PROBLEMS, BundleError, DEFAULT_BUNDLE_LIMITS, type BundleContents, type BundleLimits } from './bundle.js';

const MAX_PATH_LENGTH = 1024;
const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const LINK_TYPES = new Set(['SymbolicLink', 'Link']);
/** Inflated bytes per thread-pool task: small enough that the event loop is never held for long. */
const INFLATE_CHUNK_BYTES = 64 * 1024;
/** Tar adds a 512-byte header per entry plus padding and the end blocks: allowed beyond the file bytes. */
const TAR_OVERHEAD_PER_ENTRY = 1024;

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
  const collector = new EntryCollector(limits);
  // tar is loaded on the first bundle, not with the package room: `subako call` of a directory reads none.
  const tar = await import('tar');
  await parseInflated(archive, limits, new tar.Parser({ strict: true }), (entry) => collector.take(entry));
  return collector.finish();
}

/** The checks on each entry as it streams past, and on the whole once the archive has ended. */
class EntryCollector {
  private readonly problems: Problem[] = [];
  private readonly files = new Map<string, Buffer>();
  private readonly directories = new Set<string>();
  private entries = 0;
  private unpackedBytes = 0;

  constructor(private readonly limits: BundleLimits) {}

  take(entry: ReadEntry): void {
    const refuse = (problem: Problem | null): void => {
      if (problem !== null) this.problems.push(problem);
      entry.resume();
    };
    this.entries += 1;
    if (this.entries > this.limits.maxEntries) {
      return refuse(this.entries !== this.limits.maxEntries + 1 ? null : {
        code: BUNDLE_PROBLEMS.tooManyEntries,
        message: `the bundle has more than ${this.limits.maxEntries} entries`,
      });
    }
    const checked = normalizeEntryPath(entry.path);
    if ('problem' in checked) return refuse(checked.problem);
    const path = checked.path;
    if (LINK_TYPES.has(entry.type)) {
      return refuse({
        code: BUNDLE_PROBLEMS.link,
        message: `entry ${JSON.stringify(path)} is a ${entry.type === 'Link' ? 'hard link' : 'symbolic link'}; bundles hold regular files only`,
      });
    }
    if (entry.type === 'Directory') {
      if (path !== '') this.directories.add(path);
      return refuse(null);
    }
    if (!FILE_TYPES.has(entry.type)) {
      return refuse({
        code: BUNDLE_PROBLEMS.entryType,
        message: `entry ${JSON.stringify(path)} is a ${entry.type}; bundles hold regular files and directories only`,
      });
    }
    if (path === '' || this.files.has(path)) {
      return refuse({
        code: path === '' ? BUNDLE_PROBLEMS.path : BUNDLE_PROBLEMS.duplicate,
        message: path === '' ? 'a file entry has no name' : `entry ${JSON.stringify(path)} appears twice`,
      });
    }
    this.unpackedBytes += entry.size;
    // Past the limit the bytes are not kept: finish() reports it, once the other problems are known too.
    if (this.unpackedBytes > this.limits.maxUnpackedBytes) return refuse(null);
    // One buffer of the declared size (within the limit, checked above), filled chunk by chunk: joining the
    // chunks at the end would copy a large file again in one go and hold the event loop while it does.
    // Uninitialized memory is never exposed: only the bytes the entry delivered are kept.
    const data = Buffer.allocUnsafe(entry.size);
    let filled = 0;
    entry.on('data', (chunk: Buffer) => { filled += chunk.copy(data, filled); });
    entry.on('end', () => this.files.set(path, data.subarray(0, filled)));
  }

  finish(): BundleContents {
    const { problems, files, directories } = this;
    if (this.unpackedBytes > this.limits.maxUnpackedBytes) {
      problems.push({
        code: BUNDLE_PROBLEMS.unpackedTooLarge,
        message: `the bundle's files add up to more than ${this.limits.maxUnpackedBytes} bytes`,
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
      unpackedBytes: this.unpackedBytes,
    };
  }
}

/**
 * Inflates `archive` through a zlib stream into a tar parser, honouring the parser's back-pressure, and
 * stops the moment the inflated bytes pass what the limits allow (a gzip bomb costs one chunk past the cap).
 */
function parseInflated(archive: Uint8Array, limits: BundleLimits, parser: Parser, onEntry: (entry: ReadEntry) => void): Promise<void> {
  const cap = limits.maxUnpackedBytes + (limits.maxEntries + 4) * TAR_OVERHEAD_PER_ENTRY;
  return new Promise<void>((resolve, reject) => {
    const gunzip = createGunzip({ chunkSize: INFLATE_CHUNK_BYTES });
    let inflated = 0;
    let settled = false;
    const settle = (error: BundleError | null): void => {
      if (settled) return;
      settled = true;
      // Stops the thread-pool work at once, whichever way the read ended.
      gunzip.destroy();
      if (error === null) resolve();
      else reject(error);
    };
    parser.on('entry', onEntry);
    parser.on('error', (err: Error) => settle(corrupt(err)));
    parser.on('abort', (err: Error) => settle(corrupt(err)));
    parser.on('end', () => settle(null));
    gunzip.on('data', (chunk: Buffer) => {
      if (settled) return;
      inflated += chunk.byteLength;
      if (inflated > cap) {
        settle(new BundleError([{
          code: BUNDLE_PROBLEMS.unpackedTooLarge,
          message: `the bundle unpacks to more than ${limits.maxUnpackedBytes} bytes`,
        }]));
        return;
      }
      if (!parser.write(chunk)) {
        gunzip.pause();
        parser.once('drain', () => gunzip.resume());
      }
    });
    gunzip.on('end', () => { if (!settled) parser.end(); });
    gunzip.on('error', (err: Error) => settle(corrupt(err)));
    gunzip.end(archive);
  });
}

function corrupt(err: Error): BundleError {
  return new BundleError([{ code: BUNDLE_PROBLEMS.corrupt, message: `the bundle is not a readable tar.gz: ${err.message}` }]);
}
