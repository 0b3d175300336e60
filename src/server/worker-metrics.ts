/**
 * A worker node's `/metrics` (`subako worker --metrics-port N`): its slots, the calls it runs and has
 * answered, its sandbox, and Node's process metrics, read from the worker's read-only stats when scraped.
 *
 * No API key: the worker holds no records and answers nothing else here, and the listener binds loopback by
 * default; an operator who binds another address puts it on a network only the scraper reaches.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Registry } from 'prom-client';
import { processRegistry, registerBusDropMetrics, registerSandboxMetrics, type RuntimeStats } from './metrics.js';

/** The worker's read-only stats (NatsWorker.stats()). */
export interface WorkerStats {
  slots: number;
  inFlight: number;
  calls: Readonly<Record<string, number>>;
  busDropped: Readonly<Record<string, number>>;
  sandbox: RuntimeStats;
}

export class WorkerMetrics {
  readonly registry = new Registry();

  constructor(stats: () => WorkerStats) {
    const registers = [this.registry];
    new Gauge({ name: 'subako_worker_slots', help: 'Calls this worker runs at once (its --pool).', registers, collect() { this.set(stats().slots); } });
    new Gauge({ name: 'subako_worker_calls_in_flight', help: 'Calls this worker took and has not answered yet.', registers, collect() { this.set(stats().inFlight); } });
    new Counter({
      name: 'subako_worker_calls_total', help: 'Calls this worker answered, by outcome: ok, tool_error, crash, cancelled, or refused (not run: unreadable, or it failed before running it).',
      labelNames: ['outcome'], registers,
      collect() {
        this.reset();
        for (const [outcome, count] of Object.entries(stats().calls)) this.inc({ outcome }, count);
      },
    });
    registerSandboxMetrics(this.registry, () => stats().sandbox);
    registerBusDropMetrics(this.registry, () => stats().busDropped);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  async text(): Promise<string> {
    return `${await this.registry.metrics()}\n${await processRegistry().metrics()}`;
  }
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/** Serves `GET /metrics` (and nothing else) on host:port; port 0 picks a free one (tests). */
export async function listenForMetrics(metrics: WorkerMetrics, host: string, port: number): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: this listener serves GET /metrics only.\n');
      return;
    }
    metrics.text().then(
      (body) => res.writeHead(200, { 'content-type': metrics.contentType }).end(req.method === 'HEAD' ? undefined : body),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics could not be read: ${err instanceof Error ? err.message : String(err)}\n`),
    );
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      done();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}/metrics`,
    close: () => new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    }),
  };
}
