/**
 * The HTTP server: node:http, the router over the route table, connection limits (connection-limits.ts),
 * graceful shutdown with a ceiling. Closing stops accepting connections and ends the live call streams at
 * once (the MCP endpoints are stateless: none of their streams outlives its call); it then waits for the calls
 * in flight — each ends within its deadline — and for their answers, at most the call deadline plus
 * SHUTDOWN_GRACE_MS in all; what is still open then (a slow upload, a client that never reads) is cut. Then the
 * MCP handlers and the platform (workers and store) close. Its start and its end are one JSON log line each,
 * saying what it waited for.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { withoutUndefined, type Logger } from '../common/index.js';
import type { OriginPolicy } from '../mcp/index.js';
import { DEFAULT_BUNDLE_LIMITS } from '../package/index.js';
import type { Platform } from '../platform/index.js';
import { isOAuthDiscoveryPath, noOAuthBody } from './bearer-challenge.js';
import { CallStreams } from './call-stream.js';
import { ConsoleFiles } from './console-files.js';
import { ServerMetrics, type NatsStats, type RuntimeStats } from './metrics.js';
import { checkingIntervalMs, defaultConnectionLimits, applyConnectionLimits, type ConnectionLimits } from './connection-limits.js';
import { SessionMcpEndpoints } from './mcp-endpoints.js';
import { OAuthDoor, type OAuthDoorOptions } from './oauth-door.js';
import type { Route } from './route.js';
import { Router, writeJson } from './router.js';
import { buildRoutes } from './routes/index.js';

export interface SubakoServerOptions {
  platform: Platform;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Origins allowed to reach MCP endpoints from browsers (loopback ones always are). */
  origins?: OriginPolicy;
  /** The URL clients reach the server at, for URLs in answers (see RouterOptions.publicUrl). */
  publicUrl?: string;
  /** A JSON line per request to the log (the `accessLog` setting); off unless asked for. The metrics count requests either way. */
  accessLog?: boolean;
  /** Connection limits; each one not given takes its default (defaultConnectionLimits). */
  connections?: Partial<ConnectionLimits>;
  /** The runtime's read-only stats (workers, queue, compile cache) for /metrics; handed by the composition root. */
  runtimeStats?: () => RuntimeStats;
  /** With NATS: the dispatch's read-only stats (calls per worker, latencies, no-responders) for /metrics. */
  natsStats?: () => NatsStats;
  /** OAuth at the door: the MCP endpoints accept access tokens from this authorization server (off when absent). */
  oauthDoor?: OAuthDoorOptions;
}

/**
 * What a shutdown gives beyond the longest call deadline: the calls' records written and their answers sent,
 * the workers and the store closed.
 */
export const SHUTDOWN_GRACE_MS = 5_000;

/** What a shutdown still waits for, for its log lines. */
export interface ShutdownPending {
  calls: number;
  requests: number;
}

export class SubakoServer {
  readonly routes: Route[];
  readonly connectionLimits: ConnectionLimits;
  /** Connections held per client address (only counted when a per-address limit is set). */
  readonly connectionsByAddress: Map<string, number>;
  private readonly endpoints: SessionMcpEndpoints;
  private readonly streams: CallStreams;
  readonly metrics: ServerMetrics;
  private readonly accessLog: Logger;
  /** Failures nobody else reports (a 500), and the shutdown's steps: JSON lines, one each. */
  private readonly serverLog: Logger;
  private readonly consoleFiles = new ConsoleFiles();
  private readonly router: Router;
  private readonly http: Server;
  private active = 0;
  private readonly idle: (() => void)[] = [];
  private closing: Promise<void> | null = null;

  private constructor(readonly platform: Platform, private readonly options: SubakoServerOptions) {
    this.endpoints = new SessionMcpEndpoints(platform, options.origins);
    this.streams = new CallStreams(platform.calls.events, platform.apiKeys);
    this.metrics = new ServerMetrics(platform.calls.events, options.runtimeStats, () => platform.calls.active, options.natsStats);
    this.accessLog = platform.log.child({ component: 'http' });
    this.serverLog = platform.log.child({ component: 'server' });
    const serverLog = this.serverLog;
    const door = options.oauthDoor ? new OAuthDoor(options.oauthDoor, platform.users) : undefined;
    this.routes = buildRoutes({
      door,
      endpoints: this.endpoints,
      streams: this.streams,
      metrics: this.metrics,
      maxBundleBytes: platform.options.bundleLimits?.maxArchiveBytes ?? DEFAULT_BUNDLE_LIMITS.maxArchiveBytes,
    });
    this.router = new Router(this.routes, {
      platform,
      publicUrl: options.publicUrl?.replace(/\/+$/, ''),
      door,
      onError: (err, route) => serverLog.error({ err, route: route ? `${route.method} ${route.path}` : null }, 'a request failed unexpectedly; it was answered 500'),
    });
    const limits = { ...defaultConnectionLimits(), ...withoutUndefined(options.connections) };
    // Node refuses a header timeout longer than the request timeout: the request's includes the headers.
    if (limits.requestTimeoutMs > 0) limits.headersTimeoutMs = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
    this.connectionLimits = limits;
    this.http = createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        connectionsCheckingInterval: checkingIntervalMs(limits),
      },
      (req, res) => void this.handle(req, res),
    );
    this.http.maxConnections = limits.maxConnections;
    this.connectionsByAddress = applyConnectionLimits(this.http, limits);
  }

  static async start(options: SubakoServerOptions): Promise<SubakoServer> {
    const server = new SubakoServer(options.platform, options);
    await new Promise<void>((resolve, reject) => {
      const failed = (err: Error): void => {
        server.metrics.close();
        reject(err);
      };
      server.http.once('error', failed);
      server.http.listen(options.port ?? 7070, options.host ?? '127.0.0.1', () => {
        server.http.off('error', failed);
        options.platform.connections.useBaseUrl(server.publicUrl);
        resolve();
      });
    });
    return server;
  }

  /** Where people reach this server: the public URL when set, else where it listens (consent links and the OAuth callback). */
  get publicUrl(): string {
    return this.options.publicUrl?.replace(/\/+$/, '') ?? this.url;
  }

  get url(): string {
    const address = this.http.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.active += 1;
    const started = performance.now();
    const aborter = new AbortController();
    let route: string | null = null;
    res.on('close', () => {
      if (!res.writableFinished) aborter.abort();
      this.logRequest(req, res, route, started);
    });
    try {
      if (this.closing) {
        writeJson(res, 503, { error: { code: 'shutting_down', message: 'the server is shutting down' } }, { connection: 'close' });
        return;
      }
      route = await this.router.handle(req, res, aborter.signal, (template) => { route = template; });
      if (route === null) {
        const pathname = new URL(req.url ?? '/', 'http://x').pathname;
        // A client looking for an OAuth flow is told there is none, and which token to send instead; then the
        // console's pages and files (console-files.ts), which leave API paths alone.
        if (isOAuthDiscoveryPath(pathname)) writeJson(res, 404, noOAuthBody(pathname));
        // Access logs and metrics name the console's pages and files as one route.
        else if (this.consoleFiles.handle(req, res)) route = 'console';
        else writeJson(res, 404, { error: { code: 'not_found', message: `no route for ${req.method} ${pathname}` } });
      }
    } catch (err) {
      this.serverLog.error({ err }, 'a request failed outside its route; it was answered 500');
      if (!res.headersSent) writeJson(res, 500, { error: { code: 'internal', message: 'the server failed to handle the request' } });
      else res.destroy();
    } finally {
      this.active -= 1;
      if (this.active === 0) for (const wake of this.idle.splice(0)) wake();
    }
  }

  /**
   * One access-log line and the HTTP metrics for a request that ended (answered, or its client gone). Only the
   * route template is named, never the path or query (a capability URL's token is in its path) nor a header.
   */
  private logRequest(req: IncomingMessage, res: ServerResponse, route: string | null, started: number): void {
    const seconds = (performance.now() - started) / 1000;
    const status = res.headersSent ? res.statusCode : null;
    this.metrics.httpRequest(req.method ?? 'GET', route, status, seconds);
    if (!this.options.accessLog) return;
    this.accessLog.info({
      method: req.method, route, status, duration_ms: Math.round(seconds * 1e4) / 10, remote_address: req.socket.remoteAddress ?? null,
      ...(res.writableFinished ? {} : { aborted: true }),
    }, 'request');
  }

  /** The longest a shutdown waits: the call deadline, plus SHUTDOWN_GRACE_MS. */
  get shutdownCeilingMs(): number {
    return this.platform.calls.callTimeoutMs + SHUTDOWN_GRACE_MS;
  }

  /** What a shutdown would wait for now. */
  pending(): ShutdownPending {
    return { calls: this.platform.calls.active, requests: this.active };
  }

  /**
   * Stops accepting, ends the streams, waits up to `ceilingMs` (the call deadline plus SHUTDOWN_GRACE_MS by
   * default) for the calls in flight and their answers, cuts what is left, then closes everything. Idempotent.
   */
  close(ceilingMs = this.shutdownCeilingMs): Promise<void> {
    this.closing ??= (async () => {
      const began = Date.now();
      const left = (): number => Math.max(0, ceilingMs - (Date.now() - began));
      const stopped = new Promise<void>((resolve) => this.http.close(() => resolve()));
      this.http.closeIdleConnections();
      // Live streams never finish on their own: ended now, they hold nothing. Held calls end now too (nobody can decide them).
      const streams = this.streams.closeAll();
      this.platform.beginClosing();
      const waiting = this.pending();
      this.serverLog.info({ calls_in_flight: waiting.calls, requests_open: waiting.requests, streams_ended: streams, ceiling_ms: ceilingMs },
        `stopping: ${streams} stream(s) ended; waiting for ${waiting.calls} call(s) in flight and ${waiting.requests} request(s) open, at most ${ceilingMs} ms`);
      const drained = await this.platform.calls.drain(left());
      // The calls' answers go out; a request that is no call's (a slow upload, a body never sent) is not waited for past the grace.
      await this.requestsDone(Math.min(left(), SHUTDOWN_GRACE_MS));
      const cut = this.pending();
      this.http.closeAllConnections();
      await stopped;
      await this.endpoints.closeAll();
      this.metrics.close();
      await this.platform.close(left());
      this.serverLog.info({ waited_ms: Date.now() - began, calls_unfinished: drained ? 0 : cut.calls, requests_cut: cut.requests },
        drained && cut.requests === 0 ? `stopped after ${Date.now() - began} ms; every call and request finished`
          : `stopped after ${Date.now() - began} ms; cut ${cut.requests} request(s) still open${drained ? '' : ` and ${cut.calls} call(s) past the ceiling`}`);
    })();
    return this.closing;
  }

  /** Resolves once no request is open, or after `ms`. */
  private async requestsDone(ms: number): Promise<void> {
    if (this.active === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
