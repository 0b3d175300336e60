/**
 * `/metrics`: what an operator scrapes, in the Prometheus text format (prom-client, a registry of our own).
 *
 * - calls by source (`via`), tool and outcome, and their duration, heard from the call log's live feed as
 *   each call ends (no polling of SQLite);
 * - egress requests by outcome (`response`, or the refusal or failure kind: `host_not_allowed`, …), from the
 *   same ended calls' egress records;
 * - sandbox workers busy and idle, runs waiting for one, and compile-cache hits and misses, read when scraped
 *   from the runtime's read-only stats (the composition root hands us the function: server/ runs no guest);
 * - HTTP requests by method, route template (never the path: it may carry a capability token) and status;
 * - Node's process metrics (CPU, memory, event-loop delay).
 *
 * Labels are bounded sets: tools are the ones installed, routes the route table's, outcomes and kinds fixed.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CallEvents, CallRecord } from '../platform/index.js';

/** The runtime's read-only stats (FunctionRuntime.stats()). */
export interface RuntimeStats {
  workers: number;
  busy: number;
  queued: number;
  compileCacheHits: number;
  compileCacheMisses: number;
}

/** Call durations run from under a millisecond (a warm echo) to the 30 s deadline. */
const CALL_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30];

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route'>;
  private readonly stopListening: () => void;

  constructor(events: CallEvents, runtimeStats: (() => RuntimeStats) | undefined, callsInFlight: () => number) {
    const registers = [this.registry];
    const calls = new Counter({ name: 'subako_calls_total', help: 'Calls of session tools that ended, by source, tool and outcome.', labelNames: ['via', 'tool', 'outcome'], registers });
    const duration = new Histogram({ name: 'subako_call_duration_seconds', help: 'Call durations, as the call log records them (a call that never got a turn: the time it waited).', labelNames: ['tool', 'outcome'], buckets: CALL_BUCKETS, registers });
    const egress = new Counter({ name: 'subako_egress_requests_total', help: 'subako_http requests of function calls, by outcome: response, or the refusal or failure kind.', labelNames: ['outcome'], registers });
    new Gauge({ name: 'subako_calls_in_flight', help: 'Calls admitted and not ended yet (running or waiting for a turn).', registers, collect() { this.set(callsInFlight()); } });
    this.httpRequests = new Counter({ name: 'subako_http_requests_total', help: 'HTTP requests answered, by method, route template and status (aborted: the client left first).', labelNames: ['method', 'route', 'status'], registers });
    this.httpDuration = new Histogram({ name: 'subako_http_request_duration_seconds', help: 'HTTP request durations by method and route template (a stream counts until it ends).', labelNames: ['method', 'route'], buckets: HTTP_BUCKETS, registers });
    if (runtimeStats) {
      new Gauge({
        name: 'subako_sandbox_workers', help: 'Sandbox worker threads, by state (busy: running a guest).', labelNames: ['state'], registers,
        collect() {
          const stats = runtimeStats();
          this.set({ state: 'busy' }, stats.busy);
          this.set({ state: 'idle' }, stats.workers - stats.busy);
        },
      });
      new Gauge({ name: 'subako_sandbox_queue_length', help: 'Function runs waiting for a sandbox worker.', registers, collect() { this.set(runtimeStats().queued); } });
      new Counter({
        name: 'subako_compile_cache_lookups_total', help: 'Modules asked for by digest: hit (compiled before) or miss (compiled now).', labelNames: ['result'], registers,
        collect() {
          const stats = runtimeStats();
          this.reset();
          this.inc({ result: 'hit' }, stats.compileCacheHits);
          this.inc({ result: 'miss' }, stats.compileCacheMisses);
        },
      });
    }
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

let processMetrics: Registry | null = null;

/** Node's process metrics (CPU, memory, event-loop delay, GC), collected once per process however many servers it runs. */
function processRegistry(): Registry {
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
