/**
 * Connection limits of the HTTP server: how many connections it holds at once, how many one client address
 * may hold, and how long a connection may take to send its headers, its whole request, and how long it may
 * sit idle between requests. Without them, a client that opens connections and trickles header bytes fills
 * the file-descriptor table and nobody else (health checks included) gets in.
 *
 * The trade-off: the total limit protects the process (descriptors are also needed for the store, volumes,
 * workers and egress); the per-address limit keeps one client from taking the whole table, so others (a
 * health check from another address) still get in. Behind a reverse proxy every connection comes from the
 * proxy's address: raise the per-address limit to the total there (or set it to 0, no per-address limit) and
 * let the proxy limit its clients. A flood from many addresses can still fill the total; the header timeout
 * then frees each slot within `headersTimeoutMs`.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import { isSystemError } from '../common/index.js';

export interface ConnectionLimits {
  /** Connections held at once; past it new ones are closed as they arrive. */
  maxConnections: number;
  /** Connections one client address may hold at once; 0: no per-address limit. */
  maxConnectionsPerAddress: number;
  /** Time a connection has to send a request's headers (from its first byte, or from being accepted). */
  headersTimeoutMs: number;
  /** Time a connection has to send a whole request, body included; 0: no limit. Answers are not counted. */
  requestTimeoutMs: number;
  /** Time an idle keep-alive connection is kept after an answer. */
  keepAliveTimeoutMs: number;
}

/** The most connections the server holds by default, however many descriptors the process may open. */
export const MAX_DEFAULT_CONNECTIONS = 4_096;

/** Half the process's descriptor limit, at most MAX_DEFAULT_CONNECTIONS: the other half is for everything else. */
export function defaultMaxConnections(fdLimit: number | null = openFileLimit()): number {
  if (fdLimit === null) return 1_024;
  return Math.max(64, Math.min(MAX_DEFAULT_CONNECTIONS, Math.floor(fdLimit / 2)));
}

export function defaultConnectionLimits(fdLimit: number | null = openFileLimit()): ConnectionLimits {
  return {
    maxConnections: defaultMaxConnections(fdLimit),
    // Generous for one client (a browser takes 6, an agent runtime one per call in flight), small enough
    // that sixteen addresses are needed to fill the default table.
    maxConnectionsPerAddress: 256,
    // Real clients send headers in one packet; a slow-header (slowloris) connection is cut within 10 s.
    headersTimeoutMs: 10_000,
    // A package bundle may be large: five minutes to upload a request body.
    requestTimeoutMs: 300_000,
    keepAliveTimeoutMs: 5_000,
  };
}

/** The process's soft limit on open files (RLIMIT_NOFILE), where Linux tells it; null elsewhere. */
export function openFileLimit(): number | null {
  try {
    const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (!match) return null;
    return match[1] === 'unlimited' ? null : Number(match[1]);
  } catch (error) {
    if (!isSystemError(error)) throw error; // expected: no /proc here (not Linux) or it cannot be read
    return null;
  }
}

/** How often Node checks connections against the header and request timeouts: often enough to honour them. */
export function checkingIntervalMs(limits: Pick<ConnectionLimits, 'headersTimeoutMs' | 'requestTimeoutMs'>): number {
  const shortest = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs > 0 ? limits.requestTimeoutMs : Infinity);
  return Math.max(50, Math.min(1_000, Math.floor(shortest / 4)));
}

/** A client address as counted: an IPv4 address mapped into IPv6 counts as the IPv4 address. */
export function clientAddress(remote: string | undefined): string {
  if (!remote) return 'unknown';
  return remote.startsWith('::ffff:') && remote.includes('.') ? remote.slice(7) : remote;
}

/**
 * Applies the limits Node does not apply by itself to `server` (whose own headersTimeout, requestTimeout,
 * keepAliveTimeout and maxConnections are set by its creator): the per-address limit, and a deadline for a
 * connection's first request. Returns the live per-address counts (for diagnostics and tests).
 */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits): Map<string, number> {
  const counts = limitConnectionsPerAddress(server, limits.maxConnectionsPerAddress);
  closeConnectionsWithoutRequest(server, limits.headersTimeoutMs);
  return counts;
}

/**
 * Counts connections per client address on `server` and closes, as it arrives, each one past `perAddress`.
 */
function limitConnectionsPerAddress(server: Server, perAddress: number): Map<string, number> {
  const counts = new Map<string, number>();
  if (perAddress <= 0) return counts;
  server.on('connection', (socket: Socket) => {
    const address = clientAddress(socket.remoteAddress);
    const held = counts.get(address) ?? 0;
    if (held >= perAddress) {
      socket.destroy();
      return;
    }
    counts.set(address, held + 1);
    socket.once('close', () => {
      const left = (counts.get(address) ?? 1) - 1;
      if (left <= 0) counts.delete(address);
      else counts.set(address, left);
    });
  });
  return counts;
}

/**
 * Node's header timeout runs from a request's first byte: a connection that never sends one is kept for
 * ever. Each new connection therefore has `ms` to complete its first request's headers, or is closed.
 * (Later requests on a kept-alive connection are Node's: keepAliveTimeout, then headersTimeout.)
 */
function closeConnectionsWithoutRequest(server: Server, ms: number): void {
  const pending = new WeakMap<Socket, NodeJS.Timeout>();
  server.on('connection', (socket: Socket) => {
    if (socket.destroyed) return;
    const timer = setTimeout(() => socket.destroy(), ms);
    timer.unref();
    pending.set(socket, timer);
    socket.once('close', () => clearTimeout(timer));
  });
  server.on('request', (req: IncomingMessage) => {
    const timer = pending.get(req.socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    pending.delete(req.socket);
  });
}
