/**
 * What an API replica counts of its calls over NATS, for `/metrics` (server/metrics.ts reads a snapshot; it
 * never reaches into the runtime): calls running on each worker, how long the bus and a worker took to take a
 * call and to answer it, the sends no worker was free for, and how calls ended.
 *
 * The durations are counted into fixed buckets here rather than kept, so the figures take the same room
 * after a million calls as after one; a scrape reads the buckets as they are.
 */

import type { BusDropReason } from './nats-envelope.js';
import type { PassOverReason } from './nats-choice.js';
import type { FleetSummary } from './nats-fleet.js';

/** How a call over the bus ended, as `subako_nats_calls_total{result}` says it. */
export type NatsCallResult = 'outcome' | 'interrupted' | 'unavailable' | 'refused' | 'cancelled';

export const NATS_CALL_RESULTS: readonly NatsCallResult[] = ['outcome', 'interrupted', 'unavailable', 'refused', 'cancelled'];

/** Taking a call runs from a tenth of a millisecond (loopback) up; answering one up to the 30 s deadline. */
export const DISPATCH_BUCKETS_SECONDS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
export const CALL_BUCKETS_SECONDS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A histogram as read: each bound's cumulative count (`le`), then the sum and the count of all observed. */
export interface HistogramSnapshot {
  buckets: readonly { le: number; count: number }[];
  sum: number;
  count: number;
}

export interface NatsDispatchStats {
  /**
   * Calls this replica has running, by the worker's name while its presence is live (`unknown` otherwise: the
   * labels are the live fleet's, never any name a message gives); a worker with none is absent.
   */
  inFlightByWorker: Readonly<Record<string, number>>;
  /**
   * Sends of a call no worker took — answered `busy`, or "no responders", or arguments in pieces never `accepted` —,
   * each followed by a send again to another worker.
   */
  noResponders: number;
  /** Calls that ended, by result. */
  calls: Readonly<Record<NatsCallResult, number>>;
  /** From the send a worker took to its first word about it (its outcome, for a quick call). */
  dispatchSeconds: HistogramSnapshot;
  /** From the first send to the worker's outcome (calls that ended with one). */
  callSeconds: HistogramSnapshot;
  /** Messages dropped off the bus (never acted on), by why (nats-envelope.ts). */
  busDropped: Readonly<Record<BusDropReason, number>>;
  /** The live fleet as this replica hears it (nats-fleet.ts). */
  fleet: FleetSummary;
  /** Workers this replica sends no call to just now, by why (nats-choice.ts). */
  passedOver: Readonly<Record<PassOverReason, number>>;
}

class FixedHistogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
  }

  observe(seconds: number): void {
    this.sum += seconds;
    this.count += 1;
    const index = this.bounds.findIndex((bound) => seconds <= bound);
    if (index >= 0) this.counts[index] += 1;
  }

  snapshot(): HistogramSnapshot {
    let below = 0;
    return { buckets: this.bounds.map((le, i) => ({ le, count: (below += this.counts[i]) })), sum: this.sum, count: this.count };
  }
}

export class DispatchCounters {
  private readonly inFlight = new Map<string, number>();
  private noResponders = 0;
  private readonly results = Object.fromEntries(NATS_CALL_RESULTS.map((r) => [r, 0])) as Record<NatsCallResult, number>;
  private readonly dispatch = new FixedHistogram(DISPATCH_BUCKETS_SECONDS);
  private readonly call = new FixedHistogram(CALL_BUCKETS_SECONDS);

  noWorkerFree(): void {
    this.noResponders += 1;
  }

  /** A worker took the call `seconds` after the send it took. */
  accepted(worker: string, seconds: number): void {
    this.inFlight.set(worker, (this.inFlight.get(worker) ?? 0) + 1);
    this.dispatch.observe(seconds);
  }

  /** A call ended; `worker` is the one that had taken it, if any, `seconds` its time on the bus when it had an outcome. */
  ended(result: NatsCallResult, worker: string | null, outcomeSeconds?: number): void {
    this.results[result] += 1;
    if (outcomeSeconds !== undefined) this.call.observe(outcomeSeconds);
    if (worker === null) return;
    const left = (this.inFlight.get(worker) ?? 1) - 1;
    // A worker's series goes once it has nothing running here: the label set stays the workers now busy.
    if (left > 0) this.inFlight.set(worker, left);
    else this.inFlight.delete(worker);
  }

  snapshot(): Omit<NatsDispatchStats, 'busDropped' | 'fleet' | 'passedOver'> {
    return {
      inFlightByWorker: Object.fromEntries(this.inFlight),
      noResponders: this.noResponders,
      calls: { ...this.results },
      dispatchSeconds: this.dispatch.snapshot(),
      callSeconds: this.call.snapshot(),
    };
  }
}
