/**
 * Blobs in a NATS JetStream Object Store bucket (scale-out: every API replica and worker reads the same
 * bytes), each object named by its sha-256 digest. Reads are verified against the name like every back end's
 * (blob-store.ts); the bucket's own digest check is the transport's, ours is the record's.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { BLOB_ERRORS, BlobError, checkDigest, sha256Hex, verifiedBlob, type BlobStore, type BlobSweep } from './blob-store.js';

export class NatsBlobStore implements BlobStore {
  private constructor(private readonly bucket: ObjectStore, readonly name: string) {}

  /** Opens the bucket, creating it when absent (replicas starting at once each create it: the create is idempotent). */
  static async open(nc: NatsConnection, bucket: string): Promise<NatsBlobStore> {
    const store = await new Objm(nc).create(bucket);
    return new NatsBlobStore(store, bucket);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const digest = sha256Hex(bytes);
    // The same bytes twice keep one object: a second put of a digest already there is skipped.
    if (!(await this.has(digest))) await this.bucket.putBlob({ name: digest }, bytes);
    return digest;
  }

  async get(digest: string): Promise<Buffer> {
    checkDigest(digest);
    const bytes = await this.bucket.getBlob(digest);
    if (bytes === null) throw new BlobError(BLOB_ERRORS.missing, `no blob ${digest} in the NATS object store bucket ${this.name}`);
    return verifiedBlob(digest, bytes, `the NATS object store bucket ${this.name}`);
  }

  async has(digest: string): Promise<boolean> {
    const info = await this.bucket.info(checkDigest(digest));
    return info !== null && !info.deleted;
  }

  async remove(digest: string): Promise<void> {
    if (await this.has(digest)) await this.bucket.delete(digest);
  }

  /**
   * Nothing: a bucket is shared by every replica, and one replica starting cannot tell another's upload in
   * progress (blob stored, record not yet written) from an orphan. Orphans cost space, never correctness.
   */
  async sweep(_referenced: ReadonlySet<string>): Promise<BlobSweep> {
    return { partial: 0, orphans: 0 };
  }

  /** Removes the whole bucket (tests name a bucket per run and remove it after). */
  async destroy(): Promise<void> {
    await this.bucket.destroy();
  }
}
