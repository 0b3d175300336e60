/**
 * Blobs in a NATS JetStream Object Store bucket (scale-out: every API replica and worker reads the same
 * bytes), each object named by its sha-256 digest. Reads are verified against the name like every back end's
 * (blob-store.ts); the bucket's own digest check is the transport's, ours is the record's.
 *
 * While the connection to NATS is down every operation fails at once with BlobError `blob.unavailable`, naming
 * NATS (an upload answers 503 in a moment, not a client library's timeout later), and one under way when the
 * connection drops fails then too; the client reconnects by itself and the next operation goes through.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { ObjectStore } from '@nats-io/obj';
import { BLOB_ERRORS, BlobError, checkDigest, sha256Hex, verifiedBlob, type BlobStore, type BlobSweep } from './blob-store.js';

export class NatsBlobStore implements BlobStore {
  private connected = true;
  /** Operations under way, each failed at once when the connection drops. */
  private readonly underWay = new Set<(err: BlobError) => void>();

  private constructor(private readonly nc: NatsConnection, private readonly bucket: ObjectStore, readonly name: string) {
    void this.watchConnection();
  }

  /** Opens the bucket, creating it when absent (replicas starting at once each create it: the create is idempotent). */
  static async open(nc: NatsConnection, bucket: string): Promise<NatsBlobStore> {
    // Loaded here, not at the top: the package room's face is imported by every `subako call`, which has no bus.
    const { Objm } = await import('@nats-io/obj');
    const store = await new Objm(nc).create(bucket);
    return new NatsBlobStore(nc, store, bucket);
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') {
        this.connected = false;
        for (const fail of [...this.underWay]) fail(this.unavailable());
      } else if (status.type === 'reconnect') this.connected = true;
    }
  }

  private unavailable(): BlobError {
    return new BlobError(BLOB_ERRORS.unavailable,
      `the NATS server cannot be reached from this process, and bundles are kept in its object store (bucket ${this.name}); try again once NATS is back`);
  }

  /** `work` while connected: refused at once when not, and failed at once when the connection drops under it. */
  private async whileConnected<T>(work: () => Promise<T>): Promise<T> {
    if (!this.connected || this.nc.isClosed()) throw this.unavailable();
    let fail!: (err: BlobError) => void;
    const dropped = new Promise<never>((_, reject) => { fail = reject; });
    this.underWay.add(fail);
    const running = work();
    // Given up on when the connection drops: its own failure later is nobody's.
    running.catch(() => undefined);
    try {
      return await Promise.race([running, dropped]);
    } finally {
      this.underWay.delete(fail);
    }
  }

  async put(bytes: Uint8Array): Promise<string> {
    const digest = sha256Hex(bytes);
    // The same bytes twice keep one object: a second put of a digest already there is skipped.
    if (!(await this.has(digest))) await this.whileConnected(() => this.bucket.putBlob({ name: digest }, bytes));
    return digest;
  }

  async get(digest: string): Promise<Buffer> {
    checkDigest(digest);
    const bytes = await this.whileConnected(() => this.bucket.getBlob(digest));
    if (bytes === null) throw new BlobError(BLOB_ERRORS.missing, `no blob ${digest} in the NATS object store bucket ${this.name}`);
    return verifiedBlob(digest, bytes, `the NATS object store bucket ${this.name}`);
  }

  async has(digest: string): Promise<boolean> {
    const info = await this.whileConnected(() => this.bucket.info(checkDigest(digest)));
    return info !== null && !info.deleted;
  }

  async remove(digest: string): Promise<void> {
    if (await this.has(digest)) await this.whileConnected(() => this.bucket.delete(digest));
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
