/**
 * Blobs (package and skill bundles) behind one interface, addressed by the sha-256 of their bytes: the local
 * content-addressed directory (the embedded default) and the NATS JetStream Object Store (scale-out,
 * nats-blob-store.ts). Every read is verified: bytes that do not hash to the name they were asked for are
 * refused with a BlobError, whichever back end returned them, so a damaged disk or bucket can never hand a
 * worker other code than the digest a record names.
 */
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SubakoError } from '../errors.js';

export const BLOB_ERRORS = {
  /** No blob is stored under the digest. */
  missing: 'blob.missing',
  /** The bytes stored under the digest hash to something else. */
  corrupt: 'blob.corrupt',
  /** Not a sha-256 digest (64 lowercase hex digits). */
  digest: 'blob.digest',
  /** Where the blobs are cannot be reached now (the NATS server is away): try again once it is back. */
  unavailable: 'blob.unavailable',
} as const;

export type BlobErrorCode = (typeof BLOB_ERRORS)[keyof typeof BLOB_ERRORS];

export class BlobError extends SubakoError {
  constructor(code: BlobErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

export interface BlobSweep {
  /** Temporary blobs an interrupted write left. */
  partial: number;
  /** Blobs no record refers to. */
  orphans: number;
}

export interface BlobStore {
  /** Stores bytes under their digest and answers it. Idempotent: the same bytes twice keep one copy. */
  put(bytes: Uint8Array): Promise<string>;
  /** The bytes stored under `digest`, verified: BlobError `blob.missing` or `blob.corrupt` otherwise. */
  get(digest: string): Promise<Buffer>;
  has(digest: string): Promise<boolean>;
  remove(digest: string): Promise<void>;
  /**
   * Removes leftovers of interrupted writes and blobs whose digest is not in `referenced`. Only safe when
   * nothing else writes to the store at the same time (one process's start-up).
   */
  sweep(referenced: ReadonlySet<string>): Promise<BlobSweep>;
}

const DIGEST = /^[0-9a-f]{64}$/;

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function checkDigest(digest: string): string {
  if (!DIGEST.test(digest)) throw new BlobError(BLOB_ERRORS.digest, `not a sha-256 digest (64 lowercase hex digits): ${JSON.stringify(digest)}`);
  return digest;
}

/** The one verification every back end's read goes through. */
export function verifiedBlob(digest: string, bytes: Uint8Array, where: string): Buffer {
  const actual = sha256Hex(bytes);
  if (actual !== digest) {
    throw new BlobError(BLOB_ERRORS.corrupt, `the blob ${digest} in ${where} holds other bytes (they hash to ${actual}); upload the package again to replace it`);
  }
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The names this store gives what it writes, and nothing else ever matches. */
const BLOB = /^([0-9a-f]{64})\.tar\.gz$/;
const BLOB_BEING_WRITTEN = /^[0-9a-f]{64}\.tar\.gz\.tmp-[0-9a-f]{12}$/;

/**
 * Blobs as files `<digest>.tar.gz` in one directory. Writes go to a temporary name and appear by rename, so
 * a crash leaves the whole blob or nothing (and a temporary name that `sweep` removes).
 */
export class DirectoryBlobStore implements BlobStore {
  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  path(digest: string): string {
    return join(this.dir, `${checkDigest(digest)}.tar.gz`);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const digest = sha256Hex(bytes);
    const blob = this.path(digest);
    if (!(await exists(blob))) {
      const tmp = `${blob}.tmp-${randomBytes(6).toString('hex')}`;
      await writeFile(tmp, bytes, { mode: 0o644 });
      await rename(tmp, blob);
    }
    return digest;
  }

  async get(digest: string): Promise<Buffer> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.path(digest));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new BlobError(BLOB_ERRORS.missing, `no blob ${digest} in ${this.dir}`, { cause: err });
    }
    return verifiedBlob(digest, bytes, this.dir);
  }

  has(digest: string): Promise<boolean> {
    return exists(this.path(digest));
  }

  async remove(digest: string): Promise<void> {
    await rm(this.path(digest), { force: true });
  }

  async sweep(referenced: ReadonlySet<string>): Promise<BlobSweep> {
    const report: BlobSweep = { partial: 0, orphans: 0 };
    const names = await readdir(this.dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    for (const name of names) {
      const blob = BLOB.exec(name);
      if (BLOB_BEING_WRITTEN.test(name)) report.partial++;
      else if (blob !== null && !referenced.has(blob[1])) report.orphans++;
      else continue;
      await rm(join(this.dir, name), { force: true });
    }
    return report;
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}
