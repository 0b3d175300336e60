/**
 * The fleet as a replica knows it: the workers whose presence it heard within the lapse (nats-presence.ts),
 * each with its id, host, subako version, protocol and slots. From it a replica decides, before it sends a
 * call, whether any worker could take it — none running, or none of its protocol, fails the call at once as
 * `unavailable` saying which — and `/v1/health` and `/metrics` report it.
 *
 * The presences' bodies are read here (what a worker and a replica say of themselves), checked field by field:
 * even an authentic body names only what fits a label or a record (WORKER_NAME, WORKER_HOST).
 */
import { PROTOCOL, REPLICA_ID, WORKER_BUS_ID, WORKER_HOST, WORKER_NAME } from './nats-calls.js';
import { PRESENCE_LAPSE_MS, type Presence } from './nats-presence.js';

/** What a worker says of itself every PRESENCE_EVERY_MS. */
export interface WorkerPresence extends Presence {
  /** Its protocol (nats-calls.ts PROTOCOL): a replica sends calls only to workers of its own. */
  v: number;
  /** Its name: WORKER_NAME. */
  id: string;
  /**
   * Its id on the bus, new with each process (WORKER_BUS_ID): the token of its own subjects, where a replica
   * sends the calls it chooses it for (nats-calls.ts workerSubjects). Absent in a presence of protocol 4.
   */
  bus?: string;
  host: string;
  /** The subako release it runs. */
  version: string;
  /** Calls it runs at once, and how many it is running now. */
  slots: number;
  busy: number;
}

/** What a replica says of itself every PRESENCE_EVERY_MS. */
export interface ReplicaPresence extends Presence {
  v: number;
  /** Its id on the bus: the `replica` of the calls it sends. */
  id: string;
}

/** The most slots a worker may claim: a bound on what a presence can make a replica count. */
const MAX_SLOTS = 65_536;
const VERSION = /^[A-Za-z0-9.+_-]{1,64}$/;

const isCount = (value: unknown, max: number): value is number => Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= max;

/** A worker's presence as opened; null for a body of another shape (it is dropped). */
export function readWorkerPresence(body: unknown): WorkerPresence | null {
  const p = body as Partial<WorkerPresence> | null;
  if (typeof p !== 'object' || p === null || !isCount(p.v, 1_000)) return null;
  if (typeof p.id !== 'string' || !WORKER_NAME.test(p.id) || typeof p.host !== 'string' || !WORKER_HOST.test(p.host)) return null;
  if (typeof p.version !== 'string' || !VERSION.test(p.version) || !isCount(p.slots, MAX_SLOTS) || !isCount(p.busy, MAX_SLOTS)) return null;
  if (p.bus !== undefined && (typeof p.bus !== 'string' || !WORKER_BUS_ID.test(p.bus))) return null;
  return {
    v: p.v, id: p.id, ...(p.bus !== undefined ? { bus: p.bus } : {}), host: p.host, version: p.version, slots: p.slots, busy: Math.min(p.busy, p.slots),
    ...(p.leaving === true ? { leaving: true } : {}),
  };
}

/** A replica's presence as opened; null for a body of another shape. */
export function readReplicaPresence(body: unknown): ReplicaPresence | null {
  const p = body as Partial<ReplicaPresence> | null;
  if (typeof p !== 'object' || p === null || !isCount(p.v, 1_000) || typeof p.id !== 'string' || !REPLICA_ID.test(p.id)) return null;
  return { v: p.v, id: p.id, ...(p.leaving === true ? { leaving: true } : {}) };
}

/** The fleet in figures, for `/v1/health` and `/metrics`: only workers of this replica's protocol count. */
export interface FleetSummary {
  /** Live workers of this replica's protocol, their slots, and how many of those are running a call. */
  workers: number;
  slots: number;
  busy: number;
  /** Live workers of another protocol (an upgrade half done): they take none of this replica's calls. */
  otherProtocol: number;
}

export function fleetSummary(live: readonly WorkerPresence[]): FleetSummary {
  const mine = live.filter((w) => w.v === PROTOCOL);
  return {
    workers: mine.length,
    slots: mine.reduce((sum, w) => sum + w.slots, 0),
    busy: mine.reduce((sum, w) => sum + w.busy, 0),
    otherProtocol: live.length - mine.length,
  };
}

/**
 * Why no call can be sent now, in one line for the call's crash message and for `/v1/health`; null while a
 * worker of this replica's protocol is live. `presenceSubject`: where workers announce themselves.
 */
export function noWorkerReason(live: readonly WorkerPresence[], presenceSubject: string, version: string): string | null {
  if (live.some((w) => w.v === PROTOCOL)) return null;
  if (live.length === 0) {
    return `no worker is running: none has announced itself on ${presenceSubject} in the last ${PRESENCE_LAPSE_MS / 1000} s; `
      + 'start `subako worker` with the same --nats, --nats-prefix and SUBAKO_SECRET_KEY as the replicas';
  }
  const theirs = [...new Set(live.map((w) => `subako ${w.version} (protocol ${w.v})`))].join(', ');
  return `no worker of this replica's protocol is running: this replica is subako ${version} (protocol ${PROTOCOL}), `
    + `the ${live.length} worker(s) running are ${theirs}; run the same release on replicas and workers (docs/operating.md, "Upgrades")`;
}
