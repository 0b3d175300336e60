/**
 * The authenticated bus: every message a replica or a worker puts on NATS is an envelope, sealed with
 * AES-256-GCM under a key derived from the deployment's sealing key and prefix (HKDF-SHA256), so a client of
 * the NATS server that holds no key can neither read a message nor make one that opens.
 *
 *   byte 0        format version (1)
 *   bytes 1–2     length of the header (big-endian)
 *   header        JSON, in the clear: { v, k: kind, r: sender's role, c: call id (or a message id), n: sequence, e: expiry }
 *   12 bytes      IV
 *   16 bytes      GCM tag
 *   the rest      the body, JSON, encrypted
 *
 * The subject the message is published on and the whole header are the additional authenticated data: a
 * message opens only on the subject it was sealed for, only as the kind and call it names, from the role that
 * kind has, and only before its expiry. What makes a replay useless is each receiver's: a worker takes a call
 * id once (ReplayGuard), and a call opens only on the subject of the one worker it was sent to (nats-calls.ts); a call's inbox
 * takes each worker message once, in order (`n`); the relayed events are taken once by message id.
 *
 * Expiry is a time of day, so the clocks of replicas and workers must agree to within MAX_CLOCK_SKEW_MS
 * (NTP does far better); a message expired by more than that, or dated implausibly far ahead, is dropped.
 */
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { takeRandomBytes } from '../../common/index.js';

/** Who sends a message: each kind has exactly one. */
export type BusRole = 'replica' | 'worker';

/** The kinds of message, by who sends them. */
export const BUS_SENDERS = {
  /** replica → the call subject of the worker it chose. */
  call: 'replica',
  /** replica → the control subject of the worker running a call: stop it, the caller went away. */
  cancel: 'replica',
  /** replica → the events subject: a call record for the other replicas' live streams. */
  event: 'replica',
  /** replica → the listings subject: a session's list change or resource update, for the other replicas' listeners. */
  listing: 'replica',
  /** replica → the replicas' presence subject: this replica is alive (workers cancel the calls of one gone quiet). */
  replica_presence: 'replica',
  /** worker → the workers' presence subject: this worker is alive, its slots and its version (nats-fleet.ts). */
  worker_presence: 'worker',
  /** replica → the control subject of the worker that took a call: one piece of its arguments, too large to travel in the call (nats-body.ts). */
  body: 'replica',
  /** worker → a call's inbox: taken, and it declared its arguments to follow: send them. */
  accepted: 'worker',
  /** worker → a call's inbox: this worker's slots are all taken (another replica filled them); ask another. */
  busy: 'worker',
  alive: 'worker',
  progress: 'worker',
  /** worker → a call's inbox: one piece of an outcome too large to travel in one message (nats-body.ts). */
  outcome_part: 'worker',
  outcome: 'worker',
  refused: 'worker',
} as const satisfies Record<string, BusRole>;

export type BusKind = keyof typeof BUS_SENDERS;

/**
 * The kinds whose body is bytes, sealed as they are rather than as JSON: the pieces of a large call or outcome,
 * which would grow by a third as base64 (or up to double as an escaped JSON string) on a bus sized in bytes.
 */
export const RAW_KINDS: ReadonlySet<BusKind> = new Set<BusKind>(['body', 'outcome_part']);

export interface EnvelopeHeader {
  v: 1;
  k: BusKind;
  r: BusRole;
  /** The call the message is about; for relayed events and presence, a message id of its own. */
  c: string;
  /** The message's place among those of its call and sender (from 1); 0 where order does not apply. */
  n: number;
  /** Milliseconds since the epoch after which the message is not taken. */
  e: number;
}

/** Why a message was dropped; `subako_bus_dropped_total{reason}` counts them. */
export type BusDropReason = 'malformed' | 'unauthentic' | 'expired' | 'replayed' | 'unexpected';

export const BUS_DROP_REASONS: readonly BusDropReason[] = ['malformed', 'unauthentic', 'expired', 'replayed', 'unexpected'];

/** How far the clocks of the deployment's machines may disagree before messages between them are dropped. */
export const MAX_CLOCK_SKEW_MS = 30_000;
/** The longest a message may be dated ahead (its own lifetime plus the skew); later ones are refused. */
const MAX_LIFETIME_MS = 24 * 60 * 60_000;
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const CALL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The bus key of one deployment: from the sealing key every replica and worker holds, and the prefix. */
export function busKey(sealingKey: Buffer, prefix: string): Buffer {
  return Buffer.from(hkdfSync('sha256', sealingKey, Buffer.from('subako-bus'), Buffer.from(`v1 ${prefix}`), 32));
}

function additionalData(subject: string, header: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(subject, 'utf8'), Buffer.from([0]), header]);
}

/**
 * A body of a JSON kind its sender has encoded already (a worker measures its outcome's JSON to choose between one
 * message and pieces): sealed as it is, not encoded a second time.
 */
export class EncodedJson {
  constructor(readonly bytes: Buffer) {}
}

/** Seals `body` for `subject` (bytes for RAW_KINDS, JSON for the rest); `header.r` is the kind's sender, set here. */
export function sealEnvelope(key: Buffer, subject: string, header: Omit<EnvelopeHeader, 'v' | 'r'>, body: unknown): Uint8Array {
  const head = Buffer.from(JSON.stringify({ v: VERSION, k: header.k, r: BUS_SENDERS[header.k], c: header.c, n: header.n, e: header.e } satisfies EnvelopeHeader), 'utf8');
  // The CSPRNG's bytes from the thread's pool: one call into it per many messages, not one per message (a quarter
  // of sealing in the profile of bench/nats.ts); no two messages are ever given the same.
  const iv = takeRandomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData(subject, head));
  const plain = RAW_KINDS.has(header.k) ? (body as Uint8Array) : body instanceof EncodedJson ? body.bytes : Buffer.from(JSON.stringify(body), 'utf8');
  const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
  const out = Buffer.allocUnsafe(3 + head.length + IV_BYTES + TAG_BYTES + sealed.length);
  out[0] = VERSION;
  out.writeUInt16BE(head.length, 1);
  head.copy(out, 3);
  out.set(iv, 3 + head.length);
  cipher.getAuthTag().copy(out, 3 + head.length + IV_BYTES);
  sealed.copy(out, 3 + head.length + IV_BYTES + TAG_BYTES);
  return out;
}

export type Opened<T> = { ok: true; header: EnvelopeHeader; body: T } | { ok: false; reason: BusDropReason };

/**
 * Opens a message received on `subject` that must be one of `kinds`; anything else — not an envelope, not
 * sealed under this key for this subject, another kind, expired or dated too far ahead — is a drop with its
 * reason. The body's shape is the caller's to check.
 */
export function openEnvelope<T>(key: Buffer, subject: string, data: Uint8Array, kinds: readonly BusKind[], now = Date.now()): Opened<T> {
  if (data.length < 3 + 2 + IV_BYTES + TAG_BYTES || data[0] !== VERSION) return { ok: false, reason: 'malformed' };
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const headLength = bytes.readUInt16BE(1);
  if (3 + headLength + IV_BYTES + TAG_BYTES > bytes.length) return { ok: false, reason: 'malformed' };
  const head = bytes.subarray(3, 3 + headLength);
  const header = parseHeader(head);
  if (header === null) return { ok: false, reason: 'malformed' };
  const iv = bytes.subarray(3 + headLength, 3 + headLength + IV_BYTES);
  const tag = bytes.subarray(3 + headLength + IV_BYTES, 3 + headLength + IV_BYTES + TAG_BYTES);
  let plain: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(additionalData(subject, head));
    decipher.setAuthTag(tag);
    plain = Buffer.concat([decipher.update(bytes.subarray(3 + headLength + IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    return { ok: false, reason: 'unauthentic' };
  }
  // Authentic, so the header is the sender's own: a kind this receiver does not take is out of place, not forged.
  if (!kinds.includes(header.k)) return { ok: false, reason: 'unexpected' };
  if (header.e < now - MAX_CLOCK_SKEW_MS || header.e > now + MAX_LIFETIME_MS + MAX_CLOCK_SKEW_MS) return { ok: false, reason: 'expired' };
  if (RAW_KINDS.has(header.k)) return { ok: true, header, body: plain as T };
  try {
    return { ok: true, header, body: JSON.parse(plain.toString('utf8')) as T };
  } catch {
    return { ok: false, reason: 'malformed' };
  }
}

function parseHeader(head: Buffer): EnvelopeHeader | null {
  let value: Partial<EnvelopeHeader>;
  try {
    value = JSON.parse(head.toString('utf8')) as Partial<EnvelopeHeader>;
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || value.v !== VERSION) return null;
  if (typeof value.k !== 'string' || !Object.hasOwn(BUS_SENDERS, value.k)) return null;
  if (value.r !== BUS_SENDERS[value.k as BusKind]) return null;
  if (typeof value.c !== 'string' || !CALL_ID.test(value.c)) return null;
  if (!Number.isSafeInteger(value.n) || (value.n as number) < 0) return null;
  if (!Number.isSafeInteger(value.e)) return null;
  return value as EnvelopeHeader;
}

/**
 * Ids taken once, each remembered until its message could no longer be taken anyway (its expiry plus the
 * clock skew): a second message with the same id is a replay. Only authentic messages reach it, so what it
 * holds is bounded by the deployment's own traffic, not by anyone else's.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>();
  private nextSweep = 0;

  constructor(private readonly sweepEveryMs = 10_000) {}

  /** True the first time `id` is offered (it is remembered until `expiresAt` plus the skew); false after. */
  firstTime(id: string, expiresAt: number, now = Date.now()): boolean {
    if (now >= this.nextSweep) this.sweep(now);
    if (this.seen.has(id)) return false;
    this.seen.set(id, expiresAt + MAX_CLOCK_SKEW_MS);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private sweep(now: number): void {
    this.nextSweep = now + this.sweepEveryMs;
    for (const [id, until] of this.seen) if (until < now) this.seen.delete(id);
  }
}

/**
 * What a replica or worker counts of the messages it dropped, and its one log line per reason at most every
 * `quietMs` (an attacker flooding the bus makes a counter grow, not the log).
 */
export class BusDrops {
  private readonly counts: Record<BusDropReason, number> = { malformed: 0, unauthentic: 0, expired: 0, replayed: 0, unexpected: 0 };
  private readonly lastLogged = new Map<BusDropReason, { at: number; count: number }>();

  constructor(private readonly log: ((line: string) => void) | undefined, private readonly quietMs = 30_000) {}

  drop(reason: BusDropReason, subject: string, now = Date.now()): void {
    this.counts[reason] += 1;
    const last = this.lastLogged.get(reason);
    if (last && now - last.at < this.quietMs) return;
    const since = last ? this.counts[reason] - last.count : this.counts[reason];
    this.lastLogged.set(reason, { at: now, count: this.counts[reason] });
    this.log?.(`dropped ${since} message(s) from the bus as ${reason} (last on ${subject.split('.').slice(0, 2).join('.')}…): ${WHY[reason]}`);
  }

  snapshot(): Readonly<Record<BusDropReason, number>> {
    return { ...this.counts };
  }
}

const WHY: Record<BusDropReason, string> = {
  malformed: 'not a subako bus message; something else publishes on these subjects',
  unauthentic: 'it does not open with this deployment\'s key: a process with another SUBAKO_SECRET_KEY or --nats-prefix, or someone without the key, published it',
  expired: `its expiry has passed or lies implausibly far ahead; keep the clocks of replicas and workers within ${MAX_CLOCK_SKEW_MS / 1000} s (NTP)`,
  replayed: 'a message already taken was sent again',
  unexpected: 'an authentic message of a kind or order this receiver does not take here',
};
