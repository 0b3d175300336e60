/**
 * Presence on the bus: every worker and every replica says it is alive every PRESENCE_EVERY_MS, on a subject
 * of its role's (nats-calls.ts), sealed like every other message (nats-envelope.ts). A replica reads the
 * workers' presence to know the live fleet (nats-fleet.ts); a worker reads the replicas' to cancel the calls of
 * a replica that went quiet (nats-worker.ts). Someone without the deployment's key can neither announce a
 * worker that is not there nor keep a dead one looking alive.
 *
 * A sender's presences carry one id of its process (the header's `c`, random at start) and a sequence (`n`,
 * from 1): a receiver takes only a number above the last it took from that process, so a presence captured and
 * sent again is dropped as replayed; each expires PRESENCE_LAPSE_MS after it was sent. What a receiver holds is
 * bounded by the deployment's own processes: only presences that open are ever remembered, and each is forgotten
 * once it could no longer be taken anyway.
 */
import { randomBytes } from 'node:crypto';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { MAX_CLOCK_SKEW_MS, type BusKind } from './nats-envelope.js';
import type { SealedBus } from './nats-calls.js';

/** How often a worker and a replica say they are alive. */
export const PRESENCE_EVERY_MS = 1_000;
/** A worker not heard for this long is gone (three presences missed): a replica then sends it no call. */
export const PRESENCE_LAPSE_MS = 3 * PRESENCE_EVERY_MS;
/**
 * A replica not heard for this long is gone: a worker then cancels its calls. Longer than a worker's lapse, as a
 * mistake costs more here — a live replica's calls cancelled, where a worker wrongly missed only fails a call
 * fast —, and a replica's event loop may stall for seconds under load while its calls are still awaited; still
 * well within a replica's lease in the database (30 s by default).
 */
export const REPLICA_LAPSE_MS = 10 * PRESENCE_EVERY_MS;

/** What every presence says: who, and whether it is leaving (a clean stop: gone at once, not after the lapse). */
export interface Presence {
  id: string;
  leaving?: true;
}

/** One sender's presences as this receiver last heard them. */
interface Heard<T extends Presence> {
  presence: T;
  heardAt: number;
}

/**
 * What a receiver knows of the senders of one role: pure (no I/O, time passed in), so the rules — the lapse,
 * the sequence per process, leaving — are tested on their own.
 */
export class PresenceTable<T extends Presence> {
  private readonly live = new Map<string, Heard<T>>();
  /** The last sequence taken from each sending process (by its process id), kept until it could not be replayed. */
  private readonly sequences = new Map<string, { n: number; until: number }>();
  private nextSweep = 0;

  constructor(private readonly lapseMs = PRESENCE_LAPSE_MS) {}

  /**
   * A presence that opened, from the process `process`, numbered `n`, good until `expiresAt`: `taken`, or
   * `replayed` when that process already said as much (numbered at or below the last taken).
   */
  heard(process: string, n: number, expiresAt: number, presence: T, now: number): 'taken' | 'replayed' {
    this.sweep(now);
    const last = this.sequences.get(process);
    if (last !== undefined && n <= last.n) return 'replayed';
    this.sequences.set(process, { n, until: expiresAt + MAX_CLOCK_SKEW_MS });
    if (presence.leaving) this.live.delete(presence.id);
    else this.live.set(presence.id, { presence, heardAt: now });
    return 'taken';
  }

  /** `id` is alive now, as something other than a presence showed (a worker took a call of this replica's). */
  touch(presence: T, now: number): void {
    const known = this.live.get(presence.id);
    this.live.set(presence.id, { presence: known?.presence ?? presence, heardAt: now });
  }

  /** When `id` was last heard, if it is live. */
  heardAt(id: string, now: number): number | undefined {
    const heard = this.live.get(id);
    return heard !== undefined && now - heard.heardAt < this.lapseMs ? heard.heardAt : undefined;
  }

  /** The senders heard within the lapse, as they last said. */
  current(now: number): T[] {
    this.sweep(now);
    return [...this.live.values()].map((heard) => heard.presence);
  }

  /** How many processes' sequences are remembered (bounded by the deployment's own; for tests). */
  get remembered(): number {
    return this.sequences.size;
  }

  private sweep(now: number): void {
    for (const [id, heard] of this.live) if (now - heard.heardAt >= this.lapseMs) this.live.delete(id);
    if (now < this.nextSweep) return;
    this.nextSweep = now + this.lapseMs;
    for (const [process, last] of this.sequences) if (last.until < now) this.sequences.delete(process);
  }
}

export interface PresenceChannelOptions<Mine extends Presence, Theirs extends Presence> {
  bus: SealedBus;
  /** Where this process announces itself, as which kind, saying what `mine()` answers at that moment. */
  announceOn: string;
  announceAs: BusKind;
  mine: () => Mine;
  /** Where the other role announces itself, as which kind; `read` checks a body's shape (null: dropped as malformed). */
  listenOn: string;
  listenFor: BusKind;
  read: (body: unknown) => Theirs | null;
  /** Told when a sender not live until now is heard (a worker then announces itself at once: a roll call). */
  onArrival?: (presence: Theirs) => void;
  /** How long a sender of the other role stays live unheard (PRESENCE_LAPSE_MS by default). */
  lapseMs?: number;
}

/**
 * One process's presence on the bus: announces its own every PRESENCE_EVERY_MS (and at once on start, on
 * reconnect, and when asked), and keeps the table of the other role's.
 */
export class PresenceChannel<Mine extends Presence, Theirs extends Presence> {
  readonly table: PresenceTable<Theirs>;
  /** This process's id on the presence subjects (the header's `c`): new at every start. */
  private readonly process = randomBytes(12).toString('hex');
  private sequence = 0;
  private timer: NodeJS.Timeout | null = null;
  private subscription: Subscription | null = null;
  private readonly nc: NatsConnection;

  constructor(private readonly options: PresenceChannelOptions<Mine, Theirs>) {
    this.nc = options.bus.nc;
    this.table = new PresenceTable<Theirs>(options.lapseMs);
  }

  start(): void {
    const { bus, listenOn, listenFor, read, onArrival } = this.options;
    this.subscription = this.nc.subscribe(listenOn, {
      callback: (err, msg) => {
        if (err) return;
        const opened = bus.open<unknown>(msg, [listenFor]);
        if (opened === null) return;
        const presence = read(opened.body);
        if (presence === null) return bus.drops.drop('malformed', msg.subject);
        const now = Date.now();
        const arriving = !presence.leaving && this.table.heardAt(presence.id, now) === undefined;
        if (this.table.heard(opened.header.c, opened.header.n, opened.header.e, presence, now) === 'replayed') return bus.drops.drop('replayed', msg.subject);
        if (arriving) onArrival?.(presence);
      },
    });
    this.announce();
    this.timer = setInterval(() => this.announce(), PRESENCE_EVERY_MS);
    // Presence must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  /** Says this process is alive now (or, with `leaving`, that it is going). */
  announce(leaving = false): void {
    if (this.nc.isClosed()) return;
    const { bus, announceOn, announceAs, mine } = this.options;
    try {
      bus.publish(announceOn, announceAs, { c: this.process, n: (this.sequence += 1), ttlMs: PRESENCE_LAPSE_MS }, { ...mine(), ...(leaving ? { leaving: true } : {}) });
    } catch {
      // The connection is closing: the others see this process lapse instead.
    }
  }

  /** Stops announcing and says this process is leaving, so the others forget it at once; it goes on listening. */
  async leave(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.announce(true);
    if (!this.nc.isClosed()) await this.nc.flush().catch(() => undefined);
  }

  /** Stops listening too. */
  async close(): Promise<void> {
    await this.leave();
    if (this.subscription && !this.subscription.isClosed()) this.subscription.unsubscribe();
  }
}
