/**
 * Which worker a replica sends a call to (a call is addressed to one worker: nats-calls.ts). Pure: the live
 * fleet and the time are passed in.
 *
 * A replica knows exactly how many of each worker's slots its own calls hold: it counts a call from its send to
 * its end (the worker frees the slot before it answers, so the count never says a slot is free before the
 * worker does). It chooses the worker with the most slots its calls leave free, taking turns among equals. What
 * it cannot see is other replicas' calls: a worker they filled answers `busy`, and is not chosen again until one
 * of this replica's calls on it ends or a short pause passes; a worker that is not there to hear (the server
 * answered "no responders": its process ended before its presence lapsed), or one that said nothing of a call
 * sent to it (its process frozen, or deaf to its subject), is not chosen again until that presence would have
 * lapsed.
 */
import { PROTOCOL } from './nats-calls.js';
import type { WorkerPresence } from './nats-fleet.js';

/** A worker a call can be sent to: one of the fleet's, of this protocol, with a bus id. */
export type Addressable = WorkerPresence & { bus: string };

/** Why a worker is passed over: it answered `busy`, nobody listened on its subject, or it said nothing of a call. */
export type PassOverReason = 'busy' | 'gone' | 'silent';
export const PASS_OVER_REASONS: readonly PassOverReason[] = ['busy', 'gone', 'silent'];

/** How long a worker that answered `busy` is passed over (unless one of this replica's calls on it ends first). */
export const BUSY_PASS_OVER_MS = 25;

export class WorkerChoice {
  /** Calls of this replica's sent to each worker (by bus id) and not ended. */
  private readonly held = new Map<string, number>();
  /** Workers passed over until a time: they answered `busy`, or nobody listened on their subject, or they fell silent. */
  private readonly passedOver = new Map<string, { until: number; why: PassOverReason }>();
  private turn = 0;

  /**
   * The worker to send the next call to, or null when every live worker's slots are held by this replica's calls
   * or passed over (the call then waits for one to free: `nextChanceIn` says how long at most).
   */
  choose(live: readonly WorkerPresence[], now: number): Addressable | null {
    let best: Addressable | null = null;
    let bestFree = 0;
    // Equals take turns: the walk starts one worker further each time, and the first of the most free wins.
    const start = this.turn++;
    for (let i = 0; i < live.length; i++) {
      const worker = live[(start + i) % live.length];
      if (worker.v !== PROTOCOL || worker.bus === undefined || worker.leaving === true) continue;
      const passed = this.passedOver.get(worker.bus);
      if (passed !== undefined && passed.until > now) continue;
      const free = worker.slots - (this.held.get(worker.bus) ?? 0);
      if (free > bestFree) {
        best = worker as Addressable;
        bestFree = free;
      }
    }
    return best;
  }

  /** The longest a call that found no worker should wait before choosing again (a pass-over ending). */
  nextChanceIn(now: number, ceilingMs: number): number {
    let soonest = ceilingMs;
    for (const [bus, passed] of this.passedOver) {
      if (passed.until <= now) this.passedOver.delete(bus);
      else if (passed.why === 'busy') soonest = Math.min(soonest, passed.until - now);
    }
    return soonest;
  }

  /** A call was sent to the worker. */
  sent(bus: string): void {
    this.held.set(bus, (this.held.get(bus) ?? 0) + 1);
  }

  /** A call the worker took ended: its slot is free now, whatever the worker answered another send before. */
  ended(bus: string): void {
    this.unhold(bus);
    if (this.passedOver.get(bus)?.why === 'busy') this.passedOver.delete(bus);
  }

  /** The worker answered the send `busy`: other replicas' calls fill it; it is passed over for a moment. */
  busy(bus: string, now: number): void {
    this.unhold(bus);
    this.passOver(bus, now, { until: now + BUSY_PASS_OVER_MS, why: 'busy' });
  }

  /** Nobody listens on the worker's subject: it is passed over until its presence, still live here, would lapse. */
  gone(bus: string, now: number, lapseMs: number): void {
    this.unhold(bus);
    this.passOver(bus, now, { until: now + lapseMs, why: 'gone' });
  }

  /**
   * The worker said nothing of a call sent to it for as long as its heartbeat allows (its process frozen, or deaf to
   * its subject): passed over as a gone one is, until its presence, still live here, would lapse.
   */
  silent(bus: string, now: number, lapseMs: number): void {
    this.unhold(bus);
    this.passOver(bus, now, { until: now + lapseMs, why: 'silent' });
  }

  /** The workers passed over now, by why. */
  passedOverNow(now: number): Record<PassOverReason, number> {
    const counts = Object.fromEntries(PASS_OVER_REASONS.map((why) => [why, 0])) as Record<PassOverReason, number>;
    for (const passed of this.passedOver.values()) if (passed.until > now) counts[passed.why] += 1;
    return counts;
  }

  private unhold(bus: string): void {
    const left = (this.held.get(bus) ?? 1) - 1;
    if (left > 0) this.held.set(bus, left);
    else this.held.delete(bus);
  }

  /** How many workers are passed over now or were (an ended pass-over is forgotten at the next one). */
  get passedOverCount(): number {
    return this.passedOver.size;
  }

  private passOver(bus: string, now: number, passed: { until: number; why: PassOverReason }): void {
    // Workers come and go with new bus ids: what no longer holds is forgotten, so the map is the workers passed over now.
    for (const [other, was] of this.passedOver) if (was.until <= now) this.passedOver.delete(other);
    this.passedOver.set(bus, passed);
  }
}
