/**
 * One bus key for every process of a deployment. Replicas and workers seal every message on NATS with a key
 * derived from SUBAKO_SECRET_KEY and the prefix (nats-envelope.ts): a process holding another key would drop
 * everything the others send, and they everything it sends — calls would fail as `unavailable` far from where
 * the mistake was made. So the first process to use a deployment's bus stores a check of the bus key (an HMAC
 * of a fixed label under it: it shows nothing of the key) in the deployment's `<prefix>_bus` bucket, and
 * every later one, replica or worker, must find its own check there or refuse to start, in one line.
 *
 * The check is not a defence (anyone who can write the bucket can replace it, and a wrong key opens nothing
 * anyway): it turns a misconfiguration into a refusal at start. On a bus with per-role permissions only the
 * replicas may write it (README, "Scale-out").
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm } from '@nats-io/obj';
import { SubakoError } from '../../errors.js';
import { natsSubjects } from './nats-calls.js';

const OBJECT = 'bus-key-check';
const LABEL = 'subako bus key check v1';

export class BusKeyMismatchError extends SubakoError {
  constructor(bucket: string) {
    super('bus_key_mismatch',
      `the sealing key differs from the one this deployment's NATS bus was set up with (its check is in the bucket ${bucket}); give every replica and worker the same SUBAKO_SECRET_KEY and --nats-prefix`);
  }
}

/** The check of a bus key: HMAC-SHA256 of a fixed label under it, hex. Pure. */
export function busKeyCheck(key: Buffer): string {
  return createHmac('sha256', key).update(LABEL).digest('hex');
}

/**
 * Stores this key's check when the deployment has none; throws BusKeyMismatchError when it holds another's.
 * `create`: the bucket may be made (replicas); a worker only reads, and finds no check when no replica has
 * started yet, which it accepts (the first replica to start then stores the check every later one compares).
 */
export async function checkBusKey(nc: NatsConnection, prefix: string, key: Buffer, options: { create: boolean }): Promise<void> {
  const bucketName = natsSubjects(prefix).busBucket;
  const objm = new Objm(nc);
  const bucket = options.create ? await objm.create(bucketName) : await objm.open(bucketName).catch(() => null);
  if (bucket === null) return;
  const mine = busKeyCheck(key);
  let kept = await bucket.getBlob(OBJECT);
  if (kept === null && options.create) {
    await bucket.putBlob({ name: OBJECT }, Buffer.from(mine));
    kept = await bucket.getBlob(OBJECT);
  }
  if (kept === null) return;
  const theirs = Buffer.from(kept).toString('utf8');
  if (theirs.length !== mine.length || !timingSafeEqual(Buffer.from(theirs), Buffer.from(mine))) throw new BusKeyMismatchError(bucketName);
}
