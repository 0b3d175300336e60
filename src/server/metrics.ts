/**
 * `/metrics`: what an operator scrapes, in the Prometheus text format (prom-client, a registry of our own).
 *
 * - calls by source (`via`), tool and outcome, and their duration, heard from the call log's live feed as
 *   each call ends (no polling of SQLite);
 * - egress requests by outcome (`response`, or the refusal or failure kind: `host_not_allowed`, …), from the
 *   same ended calls' egress records;
 * - sandbox workers busy and idle, runs waiting for one, and compile-cache hits and misses, read when scraped
 *   from the runtime's read-only stats (the composition root hands us the function: server/ runs no guest);
 * - with NATS (scale-out), the calls this replica has running on each worker, how long the bus and a worker
 *   took to take a call and to answer it, the sends no worker was free for, and how calls over the bus ended,
 *   read when scraped from the NATS runtime's read-only stats (handed in the same way);
 * - HTTP requests by method, route template (never the path: it may carry a capability token) and status;
 * - Node's process metrics (CPU, memory, event-loop delay).
 *
 * Labels are bounded sets: tools are the ones installed, routes the route table's, outcomes and kinds fixed,
 * workers the live fleet's with calls of this replica running (a worker's series goes when it has none; a name
 * no live presence vouches for is `unknown`).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CallEvents, CallRecord, HistogramSnapshot, NatsDispatchStats } from '../platform/index.js';

/** The runtime's read-only stats (FunctionRuntime.stats()). */
export interface RuntimeStats {
  workers: number;
  busy: number;
  queued: number;
  compileCacheHits: number;
  compileCacheMisses: number;
}

/** The NATS runtime's read-only stats (NatsRuntime.stats()), handed over by the composition root. */
export type NatsStats = NatsDispatchStats;

/** Call durations run from under a millisecond (a warm echo) to the 30 s deadline. */
const CALL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30];

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly stopListening: () => void;

  constructor(events: CallEvents, runtimeStats: (() => RuntimeStats) | undefined, callsInFlight: () => number, natsStats?: () => NatsStats) {
    const registers = [this.registry];
    const calls = new Counter({ name: 'subako_calls_total', help: 'Calls of session tools that ended, by source, tool and outcome.', labelNames: ['via', 'tool', 'outcome'], registers });
    const duration = new Histogram({ name: 'subako_call_duration_seconds', help: 'Call durations, as the call log records them (a call that never got a turn: the time it waited).', labelNames: ['tool', 'outcome'], buckets: CALL_BUCKETS, registers });
    const egress = new Counter({ name: 'subako_egress_requests_total', help: 'subako_http requests of function calls, by outcome: response, or the refusal or failure kind.', labelNames: ['outcome'], registers });
    new Gauge({ name: 'subako_calls_in_flight', help: 'Calls admitted and not ended yet (running or waiting for a turn).', registers, collect() { this.set(callsInFlight()); } });
    this.httpRequests = new Counter({ name: 'subako_http_requests_total', help: 'HTTP requests answered, by method, route template and status (aborted: the client left first).', labelNames: ['method', 'route', 'status'], registers });
    this.httpDuration = new Histogram({ name: 'subako_http_request_duration_seconds', help: 'HTTP request durations by method and route template (a stream counts until it ends).', labelNames: ['method', 'route'], buckets: HTTP_BUCKETS, registers });
    if (runtimeStats) registerSandboxMetrics(this.registry, runtimeStats);
    if (natsStats) registerNatsMetrics(this.registry, natsStats);
    this.stopListening = events.observe((event) => {
      const call: CallRecord = event.call;
      if (call.outcome === 'running') return;
      calls.inc({ via: call.via, tool: call.tool, outcome: call.outcome });
      if (call.durationMs !== null) duration.observe({ tool: call.tool, outcome: call.outcome }, call.durationMs / 1000);
      for (const request of call.egress) egress.inc({ outcome: request.error ?? 'response' });
    });
  }

  /** One answered (or abandoned) HTTP request; `route` is the route template (`console` for its files), or null when none matched. */
  httpRequest(method: string, route: string | null, status: number | null, seconds: number): void {
    const labels = { method: knownMethod(method), route: route ?? 'unmatched' };
    this.httpRequests.inc({ ...labels, status: status === null ? 'aborted' : String(status) });
    this.httpDuration.observe(labels, seconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Ours, then the process's (one registry per process: its collectors watch the process, not a server). */
  async text(): Promise<string> {
    return `${await this.registry.metrics()}\n${await processRegistry().metrics()}`;
  }

  close(): void {
    this.stopListening();
  }
}

/**
 * Messages a replica or worker dropped off the NATS bus — not a subako message, not sealed with this
 * deployment's key, expired, replayed, or out of place — by reason: none was ever acted on. A steady rise of
 * `unauthentic` means something on the bus without the key publishes on the deployment's subjects.
 */
export function registerBusDropMetrics(registry: Registry, dropped: () => Readonly<Record<string, number>>): void {
  new Counter({
    name: 'subako_bus_dropped_total', help: 'Messages dropped off the NATS bus and never acted on, by reason: malformed, unauthentic, expired, replayed, unexpected.',
    labelNames: ['reason'], registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(dropped())) this.inc({ reason }, count);
    },
  });
}

/** The sandbox's workers, queue and compile cache, read from `stats` when scraped (a replica's, or a worker node's). */
export function registerSandboxMetrics(registry: Registry, stats: () => RuntimeStats): void {
  const registers = [registry];
  new Gauge({
    name: 'subako_sandbox_workers', help: 'Sandbox worker threads, by state (busy: running a guest).', labelNames: ['state'], registers,
    collect() {
      const now = stats();
      this.set({ state: 'busy' }, now.busy);
      this.set({ state: 'idle' }, now.workers - now.busy);
    },
  });
  new Gauge({ name: 'subako_sandbox_queue_length', help: 'Function runs waiting for a sandbox worker.', registers, collect() { this.set(stats().queued); } });
  new Counter({
    name: 'subako_compile_cache_lookups_total', help: 'Modules asked for by digest: hit (compiled before) or miss (compiled now).', labelNames: ['result'], registers,
    collect() {
      const now = stats();
      this.reset();
      this.inc({ result: 'hit' }, now.compileCacheHits);
      this.inc({ result: 'miss' }, now.compileCacheMisses);
    },
  });
}

/** A replica's calls over NATS, read from the runtime's stats when scraped. */
function registerNatsMetrics(registry: Registry, stats: () => NatsStats): void {
  const registers = [registry];
  registerBusDropMetrics(registry, () => stats().busDropped);
  new Gauge({
    name: 'subako_fleet_workers', help: 'Workers of this replica\'s protocol whose presence it heard in the last 3 s (other: live workers of another protocol, which take none of its calls).',
    labelNames: ['protocol'], registers,
    collect() {
      const { fleet } = stats();
      this.set({ protocol: 'same' }, fleet.workers);
      this.set({ protocol: 'other' }, fleet.otherProtocol);
    },
  });
  new Gauge({
    name: 'subako_fleet_slots', help: 'Slots of the live workers of this replica\'s protocol, by state (busy: running a call of any replica), as their presence says.',
    labelNames: ['state'], registers,
    collect() {
      const { fleet } = stats();
      this.set({ state: 'busy' }, fleet.busy);
      this.set({ state: 'idle' }, fleet.slots - fleet.busy);
    },
  });
  new Gauge({
    name: 'subako_nats_calls_in_flight', help: 'Calls this replica has running on each worker, by the worker\'s name while its presence is live, else `unknown` (a worker with none has no series).', labelNames: ['worker'], registers,
    collect() {
      this.reset();
      for (const [worker, count] of Object.entries(stats().inFlightByWorker)) this.set({ worker }, count);
    },
  });
  new Gauge({
    name: 'subako_nats_workers_passed_over',
    help: 'Workers this replica sends no call to just now, by why: busy (it answered `busy`: other replicas fill it; 25 ms), gone (nobody listened on its subject), silent (it said nothing of a call for 2 s: its process frozen, or deaf to its subject); gone and silent until its presence would have lapsed (3 s).',
    labelNames: ['why'], registers,
    collect() {
      for (const [why, count] of Object.entries(stats().passedOver)) this.set({ why }, count);
    },
  });
  new Counter({
    name: 'subako_nats_no_responders_total',
    help: 'Sends of a call no worker took: answered `busy` (other replicas filled the worker), "no responders" (the worker was gone), or arguments in pieces the worker never accepted; each sent again to another. A call a worker may have run is never sent again.',
    registers,
    collect() {
      this.reset();
      this.inc(stats().noResponders);
    },
  });
  new Counter({
    name: 'subako_nats_calls_total', help: 'Calls sent over NATS that ended, by result: outcome (the worker answered), interrupted, unavailable, refused, cancelled.', labelNames: ['result'], registers,
    collect() {
      this.reset();
      for (const [result, count] of Object.entries(stats().calls)) this.inc({ result }, count);
    },
  });
  registry.registerMetric(snapshotHistogram('subako_nats_dispatch_seconds', 'From the send a worker took to its first word about it (its outcome, for a quick call): the bus\'s and the worker\'s time to take a call.', () => stats().dispatchSeconds));
  registry.registerMetric(snapshotHistogram('subako_nats_call_seconds', 'From the first send of a call to its worker\'s outcome (waiting for a free slot included), for calls that ended with one.', () => stats().callSeconds));
}

/**
 * A histogram whose buckets another part keeps (the runtime counts into fixed bounds, server/ only reads):
 * a metric object of prom-client's shape, its values read when scraped.
 */
function snapshotHistogram(name: string, help: string, read: () => HistogramSnapshot): Parameters<Registry['registerMetric']>[0] {
  return {
    name, help, type: 'histogram', aggregator: 'sum',
    get: async () => {
      const { buckets, sum, count } = read();
      return {
        name, help, type: 'histogram', aggregator: 'sum',
        values: [
          ...buckets.map((b) => ({ metricName: `${name}_bucket`, labels: { le: b.le }, value: b.count })),
          { metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: count },
          { metricName: `${name}_sum`, labels: {}, value: sum },
          { metricName: `${name}_count`, labels: {}, value: count },
        ],
      };
    },
  } as unknown as Parameters<Registry['registerMetric']>[0];
}

let processMetrics: Registry | null = null;

/** Node's process metrics (CPU, memory, event-loop delay, GC), collected once per process however many servers it runs. */
export function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

/** A client picks the method: only the ones HTTP defines become label values. */
function knownMethod(method: string): string {
  return ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].includes(method) ? method : 'other';
}
