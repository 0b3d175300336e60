/**
 * Reusable HTTPS connections for `subako_http`, so a request does not pay a TCP and TLS handshake each time.
 *
 * A connection is reused only for a request that would have opened exactly the same connection: the same
 * host name (SNI, certificate name, Host header), port, set of checked addresses it is pinned to, trust
 * (the certificates it was verified with) and authority partition (see below). Every request still resolves
 * and checks its destination first (destination.ts); the key built from that fresh, checked answer then
 * picks the connection, so a pooled connection always goes to an address checked for this very request.
 *
 * The authority partition keeps connection-bound authentication (NTLM, Negotiate, sticky sessions) of one
 * principal from serving another: requests carrying credential or `authorization`/`cookie` headers share a
 * connection only with requests carrying the very same values, and anonymous requests only with each other.
 *
 * Each undici Client is one connection and is lent to one request at a time (concurrent requests open more
 * connections rather than queue behind each other), then returned idle. Idle clients are bounded in number
 * (oldest closed first) and closed after `idleMs` unused; idle sockets are unref'd by undici, so the pool
 * never keeps a process alive.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { buildConnector, Client } from 'undici';
import type { ResolvedAddress } from './destination.js';
import type { TlsTrust } from './trust.js';

export interface ConnectionTarget {
  /** The bare name or IP literal: SNI, certificate check and Host header. */
  hostname: string;
  port: number;
  /** The checked addresses; the connection may go to these and no others. */
  addresses: readonly ResolvedAddress[];
  trust: TlsTrust;
  /** authorityPartition() of the request's headers. */
  partition: string;
}

export interface HttpsConnectionPoolOptions {
  /** Idle connections kept at most, over all destinations (default 64). */
  maxIdle?: number;
  /** Idle connections kept at most per destination (default 8). */
  maxIdlePerTarget?: number;
  /** An idle connection unused this long is closed (default 30 s). */
  idleMs?: number;
}

/** A client lent to one request; give it back exactly once. */
export interface ConnectionLease {
  client: Client;
  /** `reusable` false (the exchange did not complete cleanly) closes the connection instead of keeping it. */
  release(reusable: boolean): void;
}

interface IdleClient {
  key: string;
  since: number;
}

/** The idle clients of one key, and the connector they were made with (it holds the key's TLS sessions). */
interface TargetEntry {
  connector: buildConnector.connector;
  /** Most recently returned last. */
  clients: Client[];
}

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A net.connect `lookup` that never consults DNS: it answers with the checked addresses only, so the
 * connection cannot go anywhere the check did not see (no second resolution, no rebinding window).
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]) {
  type Callback = (error: NodeJS.ErrnoException | null, address: string | ResolvedAddress[], family?: number) => void;
  const answer = addresses.map((a) => ({ address: a.address, family: a.family }));
  return (_hostname: string, options: { all?: boolean } | number, callback: Callback): void => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    if (all) callback(null, answer.map((a) => ({ ...a })));
    else callback(null, answer[0].address, answer[0].family);
  };
}

/** A per-process key, so partitions derived from secrets are not the secrets or a plain digest of them. */
const partitionKey = randomBytes(32);

/**
 * The authority partition of a request: '' when it carries none of `names`, else a keyed digest of those
 * headers' names and values (never the values themselves).
 */
export function authorityPartition(headers: Record<string, string>, names: Iterable<string>): string {
  const present = [...new Set(names)].filter((name) => Object.hasOwn(headers, name)).sort();
  if (present.length === 0) return '';
  const mac = createHmac('sha256', partitionKey);
  for (const name of present) mac.update(`${name}\0${headers[name]}\0`);
  return mac.digest('base64url');
}

function targetKey(target: ConnectionTarget): string {
  const addresses = target.addresses.map((a) => `${a.family}/${a.address}`).sort().join(',');
  return `${target.hostname}\n${target.port}\n${addresses}\n${target.trust.id}\n${target.partition}`;
}

export class HttpsConnectionPool {
  private readonly maxIdle: number;
  private readonly maxIdlePerTarget: number;
  private readonly idleMs: number;
  /** Keys with idle clients; an entry goes with its last idle client, so this is bounded by maxIdle. */
  private readonly targets = new Map<string, TargetEntry>();
  /** Every idle client in the order it was returned: the first is the oldest. */
  private readonly idle = new Map<Client, IdleClient>();
  private readonly lent = new Set<Client>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;
  private opened = 0;

  constructor(options: HttpsConnectionPoolOptions = {}) {
    this.maxIdle = options.maxIdle ?? 64;
    this.maxIdlePerTarget = options.maxIdlePerTarget ?? 8;
    this.idleMs = options.idleMs ?? 30_000;
  }

  /** Lends a client for `target`: an idle one for the same key when there is one, else a new one. */
  acquire(target: ConnectionTarget): ConnectionLease {
    const key = targetKey(target);
    const entry = this.targets.get(key);
    // A new client for a known key shares its connector, so its handshake can resume a TLS session.
    const connector = entry?.connector ?? newConnector(target);
    let client = this.takeIdle(key);
    if (!client) {
      client = newClient(target, connector, this.idleMs);
      this.opened++;
    }
    this.lent.add(client);
    let released = false;
    const lent = client;
    return {
      client: lent,
      release: (reusable) => {
        if (released) return;
        released = true;
        this.lent.delete(lent);
        if (reusable && !this.closed && !lent.closed && !lent.destroyed) this.keepIdle(key, lent, connector);
        else lent.destroy().catch(() => {}); // a connection we are done with: its failure to close leaves nothing of ours
      },
    };
  }

  /** Counts, for observability and tests: clients idle, lent, and made since the pool was created. */
  stats(): { idle: number; lent: number; created: number; targets: number } {
    return { idle: this.idle.size, lent: this.lent.size, created: this.opened, targets: this.targets.size };
  }

  /** Closes idle clients unused since `idleMs` before `now`. Runs on a timer while anything is idle. */
  sweep(now = performance.now()): void {
    for (const [client, entry] of this.idle) {
      if (now - entry.since < this.idleMs) break; // insertion order is age order
      this.dropIdle(client, entry);
    }
    if (this.idle.size === 0) this.stopSweeper();
  }

  /**
   * Closes the idle connections and keeps serving: what a host sharing this pool with others calls when
   * it closes (close() would end reuse for everyone).
   */
  closeIdle(): void {
    this.sweep(Number.POSITIVE_INFINITY);
  }

  /** Closes every connection, idle or lent (a lent one fails its exchange); later leases are not kept. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopSweeper();
    const all = [...this.idle.keys(), ...this.lent];
    this.idle.clear();
    this.targets.clear();
    this.lent.clear();
    await Promise.all(all.map((client) => client.destroy().catch(() => {})));
  }

  private takeIdle(key: string): Client | undefined {
    const entry = this.targets.get(key);
    while (entry && entry.clients.length > 0) {
      const client = entry.clients.pop() as Client;
      this.idle.delete(client);
      if (entry.clients.length === 0) this.targets.delete(key);
      if (!client.closed && !client.destroyed) return client;
    }
    return undefined;
  }

  private keepIdle(key: string, client: Client, connector: buildConnector.connector): void {
    let entry = this.targets.get(key);
    if (!entry) {
      entry = { connector, clients: [] };
      this.targets.set(key, entry);
    }
    entry.clients.push(client);
    this.idle.set(client, { key, since: performance.now() });
    if (entry.clients.length > this.maxIdlePerTarget) {
      const oldest = entry.clients[0];
      this.dropIdle(oldest, this.idle.get(oldest) as IdleClient);
    }
    while (this.idle.size > this.maxIdle) {
      const [oldest, idle] = this.idle.entries().next().value as [Client, IdleClient];
      this.dropIdle(oldest, idle);
    }
    if (this.idle.size > 0 && this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.floor(this.idleMs / 2)));
      this.sweeper.unref();
    }
  }

  private dropIdle(client: Client, idle: IdleClient): void {
    this.idle.delete(client);
    const entry = this.targets.get(idle.key);
    if (entry) {
      const at = entry.clients.indexOf(client);
      if (at !== -1) entry.clients.splice(at, 1);
      if (entry.clients.length === 0) this.targets.delete(idle.key);
    }
    client.destroy().catch(() => {});
  }

  private stopSweeper(): void {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}

type Undici = typeof import('undici');
let undiciLibrary: Undici | null = null;

/** undici, loaded with the first request rather than with this module: most hosts' calls make none. */
function undici(): Undici {
  undiciLibrary ??= createRequire(import.meta.url)('undici') as Undici;
  return undiciLibrary;
}

function newConnector(target: ConnectionTarget): buildConnector.connector {
  return undici().buildConnector({
    lookup: pinnedLookup(target.addresses) as never,
    ...(target.trust.secureContext !== undefined ? { secureContext: target.trust.secureContext } : {}),
    rejectUnauthorized: true,
    timeout: CONNECT_TIMEOUT_MS,
    maxCachedSessions: 4,
  });
}

function newClient(target: ConnectionTarget, connector: buildConnector.connector, idleMs: number): Client {
  const host = target.hostname.includes(':') ? `[${target.hostname}]` : target.hostname;
  // The request's deadline is its abort signal; undici's own idle timers stay as a backstop.
  return new (undici().Client)(`https://${host}:${target.port}`, { connect: connector, pipelining: 1, keepAliveMaxTimeout: idleMs });
}

/** The process-wide pool bridges use unless given one. */
export const sharedHttpsConnectionPool = new HttpsConnectionPool();
