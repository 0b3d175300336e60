/**
 * The wire protocol of calls dispatched over NATS, shared by the API replica's side (nats-runtime.ts) and the
 * worker's (nats-worker.ts), so the two can never disagree: subjects, the messages, the sealing of a call's
 * credentials, and how volume paths travel (relative to the volumes root both sides mount).
 *
 *   replica ──call──▶ <prefix>.calls (queue group "workers", one subscription per free slot, max 1 message)
 *   worker  ──accepted, then alive every HEARTBEAT_MS (and progress), then outcome──▶ the call's reply inbox
 *   replica ──cancel──▶ <prefix>.cancel (every worker; the one running the call stops it)
 *   replica ──each call record it writes──▶ <prefix>.events (every other replica's live stream; nats-events.ts)
 *
 * Credentials never cross the bus in the clear: the vault headers a call's egress needs are sealed with the
 * shared sealing key (AES-256-GCM, common/seal.ts), the call id bound as additional data, so a sealed value
 * lifted from one call opens for no other.
 */
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { seal, unseal } from '../common/index.js';
import type { CallLimits } from '../config.js';
import { CrashReason, renderCrash, type EgressGrant, type FunctionCallOutcome } from '../function/index.js';

/** How often a worker says a call it runs is still running. */
export const HEARTBEAT_MS = 500;
/** A call whose worker said nothing for this long is interrupted: its worker is gone. */
export const INTERRUPTED_AFTER_MS = 4 * HEARTBEAT_MS;
/** The queue group every worker joins. */
export const WORKER_QUEUE = 'workers';

export interface NatsSubjects {
  calls: string;
  cancel: string;
  /** The object store bucket holding package bundles. */
  packagesBucket: string;
  /** The object store bucket holding skill bundles (every replica mounts the same skills). */
  skillsBucket: string;
  /** Where each replica publishes the call records it writes, for the others' live streams (nats-events.ts). */
  events: string;
}

const PREFIX = /^[A-Za-z0-9_-]{1,64}$/;

/** `prefix` names a deployment (and, in tests, one run): its subjects and its bucket. */
export function natsSubjects(prefix: string): NatsSubjects {
  if (!PREFIX.test(prefix)) throw new Error(`the NATS prefix ${JSON.stringify(prefix)} must be 1-64 of A-Z, a-z, 0-9, "_" and "-"`);
  return { calls: `${prefix}.calls`, cancel: `${prefix}.cancel`, packagesBucket: `${prefix}_packages`, skillsBucket: `${prefix}_skills`, events: `${prefix}.events` };
}

/** Egress as it travels: everything but the credentials in the open, the credentials sealed. */
export interface WireEgress {
  allow: string[];
  grants: string[];
  privateDestinations?: 'deny' | 'allow';
  ca?: string | string[];
  /** `seal(JSON of EgressGrant['credentials'], context callId)`. */
  sealedCredentials: string;
}

export interface CallRequest {
  v: 1;
  callId: string;
  /**
   * What is left of the call's deadline as it is sent: the worker's run is cut to it, counted from arrival.
   * A duration, not a time of day, so the replicas' and workers' clocks need not agree.
   */
  timeoutMs: number;
  package: { name: string; version: string; digest: string };
  tool: string;
  arguments: Record<string, unknown>;
  /** Relative to the volumes root. */
  tmp: string;
  data?: string;
  /** The call's skill set, relative to the volumes root (the replica assembles it on the shared mount). */
  skills?: string;
  egress?: WireEgress;
  limits?: Partial<Omit<CallLimits, 'memoryBytes'>>;
  /** What the volumes' quotas leave this call to write. */
  writeBudgetBytes?: number;
  /** The caller wants progress: the worker sends the guest's progress reports as they come. */
  progress?: true;
}

export type WorkerMessage =
  | { kind: 'accepted'; worker: string }
  | { kind: 'alive' }
  | { kind: 'progress'; done: number; total?: number; message?: string }
  | { kind: 'outcome'; outcome: FunctionCallOutcome; writtenBytes: number }
  /** The call was not run: it could not be read, or the worker failed before running it. */
  | { kind: 'refused'; message: string };

export interface CancelMessage {
  callId: string;
}

const credentialContext = (callId: string): string => `subako-call:${callId}`;

export function sealCredentials(credentials: EgressGrant['credentials'], callId: string, key: Buffer): string {
  return seal(JSON.stringify(credentials), { key, context: credentialContext(callId) });
}

export function unsealCredentials(sealed: string, callId: string, key: Buffer): EgressGrant['credentials'] {
  return JSON.parse(unseal(sealed, { key, context: credentialContext(callId) }).reveal()) as EgressGrant['credentials'];
}

/** A volume directory as it travels: relative to the root, refused when it lies outside it. */
export function volumeOnWire(root: string, dir: string): string {
  const rel = relative(resolve(root), resolve(dir));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`the volume ${dir} is not under the volumes root ${root}`);
  return rel.split(sep).join('/');
}

/** A volume path off the wire, under this worker's root; null when it would leave the root. */
export function volumeFromWire(root: string, rel: unknown): string | null {
  if (typeof rel !== 'string' || rel === '' || rel.startsWith('/') || rel.split('/').some((part) => part === '..' || part === '' || part === '.')) return null;
  return join(resolve(root), ...rel.split('/'));
}

/** A call that did not run, as its outcome: a crash with a reason of the code's own list (function/crash.ts). */
export function notRunOutcome(reason: typeof CrashReason.unavailable | typeof CrashReason.interrupted, message: string, durationMs: number): FunctionCallOutcome {
  const info = { reason, message, stderr: '' };
  return { status: 'crash', result: null, model: renderCrash(info), crash: info, durationMs, egress: [], stderr: '' };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeMessage = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));
export const decodeMessage = <T>(data: Uint8Array): T => JSON.parse(decoder.decode(data)) as T;
