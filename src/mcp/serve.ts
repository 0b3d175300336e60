/**
 * `serve(toolbox, subscriber)`: publishes a toolbox as an MCP server at a freshly minted capability URL for
 * exactly as long as the subscriber runs. The subscriber gets the URL (to hand to an AI session or a
 * teammate's client) and an AbortSignal; when it returns or throws, or the caller's signal aborts, the URL
 * is revoked (404 from then on), in-flight exchanges are aborted, and a server started for it is closed.
 * The subscriber's value is serve's value.
 *
 * By default serve listens on its own loopback server (127.0.0.1, a free port). A host with its own
 * node:http server passes it as `server` (serve mounts a router on it), or passes `router` (a
 * CapabilityRouter its server forwards the prefix to) and `baseUrl`.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServedToolbox } from './served.js';
import { CapabilityRouter, routerFor } from './capability-router.js';
import { createToolboxHandler, type ToolboxHandlerOptions } from './toolbox-handler.js';

export interface ServeOptions extends ToolboxHandlerOptions {
  /** Ends the serve: the URL is revoked and serve rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Loopback address of the server serve starts (default 127.0.0.1). */
  host?: string;
  /** Port of the server serve starts (default 0: any free port). */
  port?: number;
  /** Mount on an existing router instead of starting a server; needs `baseUrl`. */
  router?: CapabilityRouter;
  /** Mount on an existing, listening node:http server (its other routes keep working; see routerFor). */
  server?: HttpServer;
  /** Where `router` or `server` is reachable, e.g. `http://127.0.0.1:8080` (for `server`, default: its address). */
  baseUrl?: string;
  /** One line per request, capability token redacted (only for the server serve starts itself). */
  log?: (line: string) => void;
}

export type Subscriber<T> = (url: string, signal: AbortSignal) => T | Promise<T>;

interface Mount {
  router: CapabilityRouter;
  baseUrl: string;
  close(): Promise<void>;
}

/** A router on a node:http server of its own: unknown paths are 404, a failure of the router a bare 500. */
export async function listenRouter(router: CapabilityRouter, host = '127.0.0.1', port = 0): Promise<{ server: HttpServer; baseUrl: string }> {
  const server: HttpServer = createServer((req, res) => {
    router.handleNode(req, res).then(
      (handled) => {
        if (!handled) {
          req.resume();
          res.writeHead(404).end();
        }
      },
      () => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return { server, baseUrl: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}` };
}

async function startOwnServer(options: ServeOptions): Promise<Mount> {
  const router = new CapabilityRouter({ log: options.log, maxBodyBytes: options.maxBodyBytes });
  const { server, baseUrl } = await listenRouter(router, options.host, options.port);
  return {
    router,
    baseUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function mountOnServer(server: HttpServer, options: ServeOptions): Mount {
  const router = routerFor(server, { log: options.log, maxBodyBytes: options.maxBodyBytes });
  let baseUrl = options.baseUrl;
  if (baseUrl === undefined) {
    const address = server.address();
    if (address === null || typeof address === 'string') throw new TypeError('serve on a server needs it listening on TCP, or a baseUrl');
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    baseUrl = `http://${host}:${address.port}`;
  }
  return { router, baseUrl: baseUrl.replace(/\/+$/, ''), close: async () => undefined };
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The serve was aborted', 'AbortError');
}

export async function serve<T>(toolbox: ServedToolbox, subscriber: Subscriber<T>, options: ServeOptions = {}): Promise<T> {
  if (options.signal?.aborted) throw abortReason(options.signal);
  if (options.router && !options.baseUrl) throw new TypeError('serve on an existing router needs its baseUrl');
  // Made before anything listens: a toolbox it refuses leaves no server behind.
  const handler = createToolboxHandler(toolbox, options);
  let mount: Mount;
  try {
    mount = options.router
      ? { router: options.router, baseUrl: options.baseUrl!.replace(/\/+$/, ''), close: async () => undefined }
      : options.server
        ? mountOnServer(options.server, options)
        : await startOwnServer(options);
  } catch (err) {
    await handler.close();
    throw err;
  }
  const capability = mount.router.mint(handler);
  const lifetime = new AbortController();
  const forwardAbort = () => lifetime.abort(abortReason(options.signal!));
  options.signal?.addEventListener('abort', forwardAbort, { once: true });
  try {
    const work = Promise.resolve().then(() => subscriber(`${mount.baseUrl}${capability.path}`, lifetime.signal));
    work.catch(() => undefined); // once aborted, its late failure is nobody's concern
    const aborted = new Promise<never>((_, reject) => {
      lifetime.signal.addEventListener('abort', () => reject(lifetime.signal.reason), { once: true });
    });
    return await Promise.race([work, aborted]);
  } finally {
    capability.revoke();
    options.signal?.removeEventListener('abort', forwardAbort);
    if (!lifetime.signal.aborted) lifetime.abort(new DOMException('The serve has ended', 'AbortError'));
    await handler.close();
    await mount.close();
  }
}
