/**
 * Real HTTPS servers on loopback for the egress tests. Each records what reached it (method, path,
 * headers, body) so a test can assert what arrived — or that nothing did.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { HostLookup } from '../../../src/egress/index.js';
import type { RunContext } from '../../../src/sandbox/types.js';
import { makeTestCa } from './test-ca.js';

export interface Arrival {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** Raw header lines as sent, to prove a header name never arrived in any case. */
  rawHeaders: string[];
  body: Buffer;
  /** Index in `connections` of the TLS connection the request came on. */
  connection: number;
}

/** A TLS connection the server accepted: one handshake each. */
export interface AcceptedConnection {
  /** The SNI name the client sent (false when it sent none, as for an IP literal). */
  servername: string | false | null;
  /** The server address the client connected to. */
  localAddress: string;
  /** True once the connection has closed. */
  closed: boolean;
}

export type Route = (req: IncomingMessage, res: ServerResponse, arrival: Arrival) => void | Promise<void>;

export interface TestServer {
  port: number;
  arrivals: Arrival[];
  /** Every TLS connection accepted, in order (each a full or resumed handshake). */
  connections: AcceptedConnection[];
  /** `https://<name>:<port><path>`. */
  url(name: string, path?: string): string;
  close(): Promise<void>;
}

/** Starts an HTTPS server on `host` with the test CA's leaf (or an untrusted self-signed one). */
export async function startServer(
  route: Route,
  options: { host?: string; port?: number; untrusted?: boolean; keepBody?: boolean } = {},
): Promise<TestServer> {
  const tls = makeTestCa();
  const arrivals: Arrival[] = [];
  const connections: AcceptedConnection[] = [];
  const connectionOf = new WeakMap<object, number>();
  const server: Server = createServer(
    { cert: options.untrusted ? tls.untrustedCert : tls.cert, key: options.untrusted ? tls.untrustedKey : tls.key },
    (req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (options.keepBody !== false) chunks.push(chunk);
      });
      req.on('end', () => {
        const arrival: Arrival = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body: options.keepBody === false ? Buffer.alloc(0) : Buffer.concat(chunks, size),
          connection: connectionOf.get(req.socket) ?? -1,
        };
        arrivals.push(arrival);
        Promise.resolve(route(req, res, arrival)).catch(() => res.destroy());
      });
    },
  );
  server.on('secureConnection', (socket: TLSSocket) => {
    const accepted: AcceptedConnection = { servername: socket.servername, localAddress: socket.localAddress ?? '', closed: false };
    connectionOf.set(socket, connections.push(accepted) - 1);
    socket.on('close', () => {
      accepted.closed = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    arrivals,
    connections,
    url: (name, path = '/') => `https://${name}:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A lookup that maps test names to addresses and counts every call (unknown names fail like DNS). */
export function mapLookup(map: Record<string, string | string[]>): HostLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const found = map[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return (Array.isArray(found) ? found : [found]).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }) as const);
  };
  return Object.assign(lookup, { calls });
}

/** A run context like the sandbox gives a bridge handler. */
export function makeRun(options: { remainingMs?: number; budgetBytes?: number; signal?: AbortSignal } = {}): RunContext {
  let used = 0;
  const budget = options.budgetBytes ?? 1024 * 1024 * 1024;
  const deadline = Date.now() + (options.remainingMs ?? 30_000);
  return {
    writeBudget: {
      tryConsume(bytes: number) {
        if (used + bytes > budget) return false;
        used += bytes;
        return true;
      },
      used: () => used,
    },
    signal: options.signal ?? new AbortController().signal,
    remainingMs: () => deadline - Date.now(),
  };
}

/** Calls a bridge handler with a request object and parses the answer. */
export async function callBridge(
  handler: (payload: Uint8Array, run: RunContext) => Promise<Uint8Array>,
  request: unknown,
  run: RunContext = makeRun(),
): Promise<any> {
  const payload = typeof request === 'string' ? request : JSON.stringify(request);
  const answer = await handler(new TextEncoder().encode(payload), run);
  return JSON.parse(new TextDecoder().decode(answer));
}
