/**
 * The wire protocol of calls dispatched over NATS, shared by the API replica's side (nats-runtime.ts) and the
 * worker's (nats-worker.ts), so the two can never disagree: subjects, the messages, and how volume paths
 * travel. Every message is sealed (nats-envelope.ts): nobody without the deployment's key reads one or makes
 * one that opens, and each is bound to its subject, its call and its sender's role.
 *
 *   replica ──call──▶ <prefix>.calls.<worker's bus id>.call (the worker the replica chose from the fleet's presence)
 *   worker  ──busy (every slot taken: the replica chooses again), or, for arguments too large for the call,
 *             accepted (send them)──▶ the call's reply inbox, named inside the sealed call
 *   replica ──body, in pieces, after `accepted` (nats-body.ts)──▶ <prefix>.calls.<worker's bus id>.ctl
 *   worker  ──alive every HEARTBEAT_MS, progress, then outcome (its pieces first when large)──▶ the call's reply inbox, numbered 1, 2, …
 *   replica ──cancel──▶ <prefix>.calls.<worker's bus id>.ctl (only the worker that runs it hears it)
 *   replica ──each call record it writes──▶ <prefix>.events (every other replica's live stream; nats-events.ts)
 *   worker  ──its presence (with its bus id) every PRESENCE_EVERY_MS──▶ <prefix>.fleet.workers (the replicas' view of the fleet; nats-fleet.ts)
 *   replica ──its presence every PRESENCE_EVERY_MS──▶ <prefix>.fleet.replicas (workers cancel the calls of a replica gone quiet)
 *
 * A quick call is one message each way: the call, then its outcome. What keeps a sealed call captured off the
 * bus and sent again from running twice is where it is addressed: a call is sealed for one worker's subject, and
 * opens on no other; that worker takes each call id once (even one it answered `busy`: the replica asks again
 * under a new id); and a worker's bus id is new with each process, so a worker started again does not answer to
 * its predecessor's subject.
 */
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { CallLimits } from '../../config.js';
import { NATS_PREFIX_RULE, isNatsPrefix } from '../../setting-kinds.js';
import type { CallWorker } from '../../tool.js';
import { CrashReason, renderCrash, type EgressGrant, type FunctionCallOutcome } from '../../function/index.js';
import { DEFAULT_MAX_PAYLOAD, type DeclaredBody } from './nats-body.js';
import { BusDrops, openEnvelope, sealEnvelope, type BusKind, type EnvelopeHeader } from './nats-envelope.js';

/** How often a worker says a call it runs is still running. */
export const HEARTBEAT_MS = 500;
/** A call whose worker said nothing for this long is interrupted: its worker is gone. */
export const INTERRUPTED_AFTER_MS = 4 * HEARTBEAT_MS;
/** How long the messages about a call that is under way stay good once sent (the call's own has its deadline). */
export const MESSAGE_TTL_MS = 60_000;
/** How long a worker that took a call waits for the next piece of its arguments before it refuses the call. */
export const BODY_PIECE_WAIT_MS = 5_000;
/**
 * The protocol's version, in the call's body and in every presence: replicas and workers of one deployment run
 * the same; a replica sends calls only while a worker of its protocol is live (nats-fleet.ts).
 */
export const PROTOCOL = 5;

export interface NatsSubjects {
  /** Under it, each worker's own subjects (workerSubjects). */
  calls: string;
  /** The object store bucket holding package bundles. */
  packagesBucket: string;
  /** The object store bucket holding skill bundles (every replica mounts the same skills). */
  skillsBucket: string;
  /** The object store bucket holding the bus's key check (nats-key-check.ts). */
  busBucket: string;
  /** Where each replica publishes the call records it writes, for the others' live streams (nats-events.ts). */
  events: string;
  /** Where each replica publishes the list changes of sessions it saw, for the others' listeners (nats-listings.ts). */
  listings: string;
  /** Where each worker says it is alive, with its slots and version (nats-fleet.ts). */
  workerPresence: string;
  /** Where each replica says it is alive: a worker cancels the calls of a replica that went quiet. */
  replicaPresence: string;
  /**
   * The object store bucket where a worker keeps the course of a durable call (a task's, nats-outcomes.ts): that it
   * runs, then its outcome, so that any replica finds it once the one that sent the call is gone.
   */
  outcomesBucket: string;
}

/** `prefix` names a deployment (and, in tests, one run): its subjects and its buckets. */
export function natsSubjects(prefix: string): NatsSubjects {
  // The rule the setting natsPrefix is checked by, so a prefix the configuration took always names subjects.
  if (!isNatsPrefix(prefix)) throw new Error(`the NATS prefix ${JSON.stringify(prefix)} must be ${NATS_PREFIX_RULE}`);
  return {
    calls: `${prefix}.calls`, packagesBucket: `${prefix}_packages`, skillsBucket: `${prefix}_skills`, busBucket: `${prefix}_bus`, events: `${prefix}.events`, listings: `${prefix}.listings`,
    workerPresence: `${prefix}.fleet.workers`, replicaPresence: `${prefix}.fleet.replicas`, outcomesBucket: `${prefix}_outcomes`,
  };
}

/** A worker's own subjects, from its bus id: where the calls addressed to it go, and the cancels and bodies of those calls. */
export function workerSubjects(subjects: NatsSubjects, busId: string): { call: string; control: string; all: string } {
  const base = `${subjects.calls}.${busId}`;
  return { call: `${base}.call`, control: `${base}.ctl`, all: `${base}.*` };
}

/** Egress as it travels, inside the sealed call: the policy and the vault credentials it may attach. */
export type WireEgress = EgressGrant;

/** The body of a `call`. */
export interface CallRequest {
  v: typeof PROTOCOL;
  callId: string;
  /** The replica that sent it, by its bus id: the worker cancels the call once that replica's presence lapses. */
  replica: string;
  /** The replica's inbox for this call: every answer goes here (the NATS reply subject is the server's, not the replica's word). */
  replyTo: string;
  /**
   * What is left of the call's deadline as it is sent: the worker's run is cut to it, counted from arrival,
   * and to the worker's own limit. A duration, not a time of day, so a clock that differs a little does not cut it.
   */
  timeoutMs: number;
  package: { name: string; version: string; digest: string };
  tool: string;
  /** The arguments, when small enough to travel in the call; otherwise `body` declares them and they follow `accepted`. */
  arguments?: Record<string, unknown>;
  /** The arguments as JSON, declared here and sent in pieces to the worker that took the call (nats-body.ts). */
  body?: DeclaredBody;
  /** Relative to the volumes root, in the one shape each kind has (volumeFromWire). */
  tmp: string;
  data?: string;
  /** The call's skill set, relative to the volumes root (the replica assembles it on the shared mount). */
  skills?: string;
  egress?: WireEgress;
  /** What the volumes' quotas leave this call to write (the worker's own budget bounds it too). */
  writeBudgetBytes?: number;
  /** The caller wants progress: the worker sends the guest's progress reports as they come. */
  progress?: true;
  /** The W3C trace context of the request that made the call (the guest's HTTP requests carry it). */
  traceparent?: string;
  /**
   * A durable call (a task's): the worker keeps its course in the outcomes bucket under this key (nats-outcomes.ts)
   * and runs it on when its replica goes quiet — whoever holds the task reads its outcome there.
   */
  durableKey?: string;
}

/** Bodies of the worker's messages on a call's inbox, by kind. */
export interface WorkerBodies {
  /** The call is taken and declared a body: send its pieces (to the worker's control subject). */
  accepted: Record<string, never>;
  alive: Record<string, never>;
  progress: { done: number; total?: number; message?: string };
  /** The outcome, or (when too large for one message) the declaration of the `outcome_part` pieces sent before it. */
  outcome: { outcome: FunctionCallOutcome; writtenBytes: number } | { body: DeclaredBody };
  /** A piece of an outcome too large for one message: bytes, not JSON (RAW_KINDS). */
  outcome_part: { bytes: Buffer };
  /** Every slot of this worker is taken: the call was heard just before the worker stopped listening; ask again. */
  busy: Record<string, never>;
  /** The call was not run: it could not be read, or the worker failed before running it. */
  refused: { message: string };
}

export type WorkerKind = keyof WorkerBodies;
export type WorkerMessage = { [K in WorkerKind]: { kind: K } & WorkerBodies[K] }[WorkerKind];
export const WORKER_KINDS: readonly WorkerKind[] = ['accepted', 'busy', 'alive', 'progress', 'outcome_part', 'outcome', 'refused'];

/** A worker's name (its id) as it may appear in an answer, a call record and metrics labels: short and plain. */
export const WORKER_NAME = /^[A-Za-z0-9._:@-]{1,128}$/;
/** A host name as a worker may give it: a DNS name's characters, at most a DNS name's length. */
export const WORKER_HOST = /^[A-Za-z0-9._-]{1,253}$/;
/** A replica's id on the bus (random per process, nats-runtime.ts). */
export const REPLICA_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** A worker's id on the bus (random per process, nats-worker.ts): a token of its subjects, of a replica's id's shape. */
export const WORKER_BUS_ID = REPLICA_ID;

/** The worker that ran a call, as the call record names it. */
export type WorkerIdentity = CallWorker;

/**
 * One side's end of the sealed bus: publishes envelopes under the deployment's key, opens what it receives,
 * and counts (and logs, rate-limited) what it drops. Nothing that does not open is ever acted on.
 */
export class SealedBus {
  constructor(readonly nc: NatsConnection, private readonly key: Buffer, readonly drops: BusDrops) {}

  publish(subject: string, kind: BusKind, header: { c: string; n?: number; ttlMs: number }, body: unknown, reply?: string): void {
    const data = sealEnvelope(this.key, subject, { k: kind, c: header.c, n: header.n ?? 0, e: Date.now() + header.ttlMs }, body);
    this.nc.publish(subject, data, reply === undefined ? undefined : { reply });
  }

  /** The most one message may carry on the server this connection is on now (it says so when connecting). */
  get maxPayload(): number {
    return this.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD;
  }

  /** The message's header and body when it opens as one of `kinds`; null (counted) otherwise. */
  open<T>(msg: Msg, kinds: readonly BusKind[]): { header: EnvelopeHeader; body: T } | null {
    const opened = openEnvelope<T>(this.key, msg.subject, msg.data, kinds);
    if (opened.ok) return opened;
    this.drops.drop(opened.reason, msg.subject);
    return null;
  }
}

/** A volume directory as it travels: relative to the root, refused when it lies outside it. */
export function volumeOnWire(root: string, dir: string): string {
  const rel = relative(resolve(root), resolve(dir));
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`the volume ${dir} is not under the volumes root ${root}`);
  return rel.split(sep).join('/');
}

/** The one shape each kind of volume has under the root (volumes.ts and skills.ts make them). */
const VOLUME_SHAPES = {
  tmp: /^sessions\/[a-z]{2,5}_[0-9a-f]{28}\/tmp$/,
  data: /^agents\/[a-z]{2,5}_[0-9a-f]{28}\/data$/,
  skills: /^\.skills\/sets\/[0-9a-f]{64}$/,
} as const;

/**
 * A volume path off the wire, under this worker's root, when it has exactly the shape of its kind — a
 * session's tmp, an agent's data, a skill set, each named by its owner's id — and null for anything else:
 * whatever a message says, a call mounts one session's, one agent's, one skill set's directory, never a parent.
 */
export function volumeFromWire(root: string, kind: keyof typeof VOLUME_SHAPES, rel: unknown): string | null {
  if (typeof rel !== 'string' || !VOLUME_SHAPES[kind].test(rel)) return null;
  return join(resolve(root), ...rel.split('/'));
}

/** The call limits a worker takes from a call: its deadline, cut to the worker's own; the rest are the worker's. */
export function workerCallLimits(own: CallLimits, deadlineLeftMs: number): Partial<Omit<CallLimits, 'memoryBytes'>> {
  return { callTimeoutMs: Math.max(1, Math.min(Math.floor(deadlineLeftMs), own.callTimeoutMs)) };
}

/** A call that did not run, as its outcome: a crash with a reason of the code's own list (function/crash.ts). */
export function notRunOutcome(reason: typeof CrashReason.unavailable | typeof CrashReason.interrupted, message: string, durationMs: number): FunctionCallOutcome {
  const info = { reason, message, stderr: '' };
  return { status: 'crash', result: null, model: renderCrash(info), crash: info, durationMs, egress: [], stderr: '' };
}
