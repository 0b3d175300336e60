/**
 * The course of durable calls (a task's call on a worker), kept in the JetStream object store bucket
 * `<prefix>_outcomes` by the worker running it: `running` (with the worker's name) once it starts, then `done` with
 * its outcome. The replica that sent the call may be gone by then (restarted, its process ended): the task, a row of
 * the store, is read through any replica, which finds the call's course here by the task's durable key (64 hex
 * digits: platform/tasks/durable-key.ts makes it from the task id, which the bucket then never holds).
 *
 * Each entry is sealed with the deployment's key (AES-256-GCM), bound to the prefix and the key as authenticated data:
 * an entry copied under another key does not open, and whoever reads the bucket without the key reads nothing of a
 * result. Entries live for the bucket's TTL (a day: longer than any task is kept), so nothing needs sweeping.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { seal, unseal } from '../../common/index.js';
import type { FunctionCallOutcome } from '../../function/index.js';
import { natsSubjects } from './nats-calls.js';

/** How long an entry is kept: past any task's time to live. */
export const OUTCOME_TTL_MS = 24 * 3_600_000;

export type DurableCourse = { state: 'running'; worker: string } | { state: 'done'; outcome: FunctionCallOutcome };

/** A durable key: letters and digits only (an object's name), 64 of them. */
const DURABLE_KEY = /^[0-9a-f]{64}$/;

export function isDurableKey(value: unknown): value is string {
  return typeof value === 'string' && DURABLE_KEY.test(value);
}

export class NatsOutcomes {
  private constructor(private readonly bucket: ObjectStore, private readonly key: Buffer, private readonly prefix: string) {}

  /** The bucket, made when missing (replicas and workers alike: whichever starts first). */
  static async open(nc: NatsConnection, prefix: string, key: Buffer): Promise<NatsOutcomes> {
    const bucket = await new Objm(nc).create(natsSubjects(prefix).outcomesBucket, { ttl: OUTCOME_TTL_MS * 1_000_000 });
    return new NatsOutcomes(bucket, key, prefix);
  }

  async write(durableKey: string, course: DurableCourse): Promise<void> {
    const sealed = seal(JSON.stringify(course), { key: this.key, context: this.context(durableKey) });
    await this.bucket.putBlob({ name: durableKey }, Buffer.from(sealed, 'utf8'));
  }

  /** The call's course, or null when none was written (the call never reached a worker, or was not durable). */
  async read(durableKey: string): Promise<DurableCourse | null> {
    if (!isDurableKey(durableKey)) return null;
    const bytes = await this.bucket.getBlob(durableKey);
    if (bytes === null) return null;
    return JSON.parse(unseal(Buffer.from(bytes).toString('utf8'), { key: this.key, context: this.context(durableKey) }).reveal()) as DurableCourse;
  }

  private context(durableKey: string): string {
    return `subako.call-course.v1:${this.prefix}:${durableKey}`;
  }
}
