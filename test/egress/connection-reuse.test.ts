/**
 * Connection reuse: requests of separate calls share a TLS connection when, and only when, they would have
 * opened the same one — same name, port, checked addresses, trust and authority. Counted at the servers:
 * each accepted TLS connection is one handshake, and each arrival names the connection it came on.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HttpsConnectionPool, createHttpBridge, type HostLookup, type VaultCredential } from '../../src/egress/index.js';
import { authorityPartition } from '../../src/egress/connection-pool.js';
import { FunctionHost } from '../../src/function/host.js';
import type { BridgeHandler } from '../../src/sandbox/types.js';
import { fixture } from '../helpers/paths.js';
import { testRoutes } from './helpers/routes.js';
import { callBridge, mapLookup, startServer, type Arrival, type Route, type TestServer } from './helpers/servers.js';
import { makeTestCa } from './helpers/test-ca.js';

let one: TestServer; // 127.0.0.1:P
let two: TestServer; // 127.0.0.2:P — the same port on another address
let other: TestServer; // 127.0.0.1:Q
let volume: string;

/** Answers /pair only once two /pair requests are in: two requests on one connection would never finish. */
let waitingPair: Array<() => void> = [];
const routes: Route = (req, res, arrival) => {
  if (req.url === '/pair') {
    waitingPair.push(() => res.end('paired'));
    if (waitingPair.length === 2) {
      for (const answer of waitingPair) answer();
      waitingPair = [];
    }
    return;
  }
  if (req.url === '/big-redirect') {
    res.writeHead(302, { location: '/quiet', 'content-length': String(100_000) });
    res.end(Buffer.alloc(100_000, 0x61));
    return;
  }
  return testRoutes(req, res, arrival);
};

before(async () => {
  one = await startServer(routes);
  two = await startServer(routes, { host: '127.0.0.2', port: one.port });
  other = await startServer(routes);
  volume = mkdtempSync(join(tmpdir(), 'subako-egress-reuse-'));
});
after(async () => {
  await Promise.all([one.close(), two.close(), other.close()]);
  rmSync(volume, { recursive: true, force: true });
});

interface BridgeSetup {
  pool: HttpsConnectionPool;
  lookup?: HostLookup;
  grants?: string[];
  credentials?: VaultCredential[];
  trustTestCa?: boolean;
  privateDestinations?: 'allow' | 'deny';
}

/** A bridge as one call gets it: a fresh handler each time, sharing only the pool. */
function bridge(setup: BridgeSetup): BridgeHandler {
  return createHttpBridge({
    policy: {
      allow: [`*.example.test:${one.port}`, `*.other.test:${one.port}`],
      grants: setup.grants ?? [],
      privateDestinations: setup.privateDestinations ?? 'allow',
    },
    credentials: setup.credentials ?? [],
    volume: [{ guestPath: '/volume/tmp', hostPath: volume }],
    ca: setup.trustTestCa === false ? undefined : makeTestCa().ca,
    log: [],
    lookup: setup.lookup ?? mapLookup({ 'a.example.test': '127.0.0.1', 'b.example.test': '127.0.0.1', 'c.example.test': '127.0.0.1', 'b.other.test': '127.0.0.1' }),
    connections: setup.pool,
  });
}

async function get(setup: BridgeSetup, url: string, extra: Record<string, unknown> = {}): Promise<any> {
  return callBridge(bridge(setup), { url, timeout_ms: 10_000, ...extra });
}

function okStatus(answer: any): number {
  assert.ok(answer.ok, `expected an ok answer, got ${JSON.stringify(answer)}`);
  return answer.ok.status;
}

/** Arrivals from index `from` on, as [connection, host header] pairs. */
const since = (server: TestServer, from: number): Arrival[] => server.arrivals.slice(from);
const connectionsUsed = (arrivals: Arrival[]): Set<number> => new Set(arrivals.map((a) => a.connection));

/** Waits (bounded) for something the server sees asynchronously, such as a connection closing. */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`never happened: ${what}`);
}

describe('requests that would open the same connection share one', () => {
  it('requests of separate calls to one origin use one connection, each resolved and checked afresh', async () => {
    const pool = new HttpsConnectionPool();
    const lookup = mapLookup({ 'a.example.test': '127.0.0.1' });
    const from = one.arrivals.length;
    const handshakes = one.connections.length;
    for (let i = 0; i < 4; i++) assert.equal(okStatus(await get({ pool, lookup }, `https://a.example.test:${one.port}/quiet`)), 200);
    assert.equal(one.connections.length - handshakes, 1, 'one TLS handshake for four requests');
    assert.equal(connectionsUsed(since(one, from)).size, 1);
    assert.deepEqual(lookup.calls, ['a.example.test', 'a.example.test', 'a.example.test', 'a.example.test']);
    assert.deepEqual(pool.stats(), { idle: 1, lent: 0, created: 1, targets: 1 });
    await pool.close();
  });

  it('the process-wide pool serves calls through FunctionHost: two calls, one handshake', async () => {
    const host = new FunctionHost({ poolSize: 1 });
    try {
      const probe = await host.load({ name: 'probe', moduleBytes: readFileSync(fixture('c', 'mcp', 'abi_probe.wasm')), assetsDir: null });
      const egress = { allow: [`localhost:${other.port}`], grants: [], credentials: [], privateDestinations: 'allow' as const, ca: makeTestCa().ca };
      const handshakes = other.connections.length;
      for (let i = 0; i < 2; i++) {
        const outcome = await host.call(probe, 'http', { request: { url: other.url('localhost', '/quiet') } }, { tmpDir: volume, egress });
        assert.equal(outcome.status, 'ok');
        assert.match(String(outcome.model[0]?.text), /"status":200/);
      }
      assert.equal(other.connections.length - handshakes, 1);
    } finally {
      await host.close();
    }
  });
});

describe('reuse never crosses what defines a connection', () => {
  it('a name that now resolves to another address gets a connection to that address, never the old one', async () => {
    const pool = new HttpsConnectionPool();
    const toOne = mapLookup({ 'a.example.test': '127.0.0.1' });
    const toTwo = mapLookup({ 'a.example.test': '127.0.0.2' });
    const [fromOne, fromTwo] = [one.arrivals.length, two.arrivals.length];
    const [connOne, connTwo] = [one.connections.length, two.connections.length];
    const url = `https://a.example.test:${one.port}/quiet`;
    okStatus(await get({ pool, lookup: toOne }, url));
    okStatus(await get({ pool, lookup: toTwo }, url));
    okStatus(await get({ pool, lookup: toOne }, url));
    okStatus(await get({ pool, lookup: toTwo }, url));
    assert.equal(since(one, fromOne).length, 2, 'two requests reached 127.0.0.1');
    assert.equal(since(two, fromTwo).length, 2, 'two requests reached 127.0.0.2');
    assert.equal(one.connections.length - connOne, 1);
    assert.equal(two.connections.length - connTwo, 1);
    assert.equal(two.connections[two.connections.length - 1].localAddress, '127.0.0.2');
    await pool.close();
  });

  it('two names on one address and port never share a connection, and each connection carries one name', async () => {
    const pool = new HttpsConnectionPool();
    const from = one.arrivals.length;
    const firstConnection = one.connections.length;
    for (let i = 0; i < 2; i++) {
      okStatus(await get({ pool }, `https://a.example.test:${one.port}/echo`));
      okStatus(await get({ pool }, `https://b.example.test:${one.port}/echo`));
    }
    const arrivals = since(one, from);
    assert.equal(one.connections.length - firstConnection, 2, 'one connection per name');
    for (const arrival of arrivals) {
      const connection = one.connections[arrival.connection];
      assert.equal(arrival.headers.host, `${connection.servername}:${one.port}`, 'the Host header matches the SNI name of its connection');
    }
    assert.deepEqual(new Set(arrivals.map((a) => one.connections[a.connection].servername)), new Set(['a.example.test', 'b.example.test']));
    await pool.close();
  });

  it('a redirect to another origin goes over another connection, and the credential rides only on the first', async () => {
    const pool = new HttpsConnectionPool();
    const aOrigin = `https://a.example.test:${one.port}`;
    const secret = 'Bearer reuse-secret-77aa';
    const setup = { pool, grants: [aOrigin], credentials: [{ origin: aOrigin, headers: { authorization: secret } }] };
    const from = one.arrivals.length;
    // Warm a connection to A first, so the redirect's second hop finds one idle connection in the pool.
    okStatus(await get(setup, `${aOrigin}/quiet`));
    const target = `https://b.other.test:${one.port}/echo`;
    assert.equal(okStatus(await get(setup, `${aOrigin}/redirect?to=${encodeURIComponent(target)}`)), 200);
    const [warm, redirect, echo] = since(one, from);
    assert.equal(redirect.connection, warm.connection, 'the first hop reused A\'s connection');
    assert.notEqual(echo.connection, redirect.connection, 'the hop to B opened its own');
    assert.equal(one.connections[echo.connection].servername, 'b.other.test');
    assert.equal(redirect.headers.authorization, secret);
    assert.equal(echo.headers.authorization, undefined);
    await pool.close();
  });

  it('a same-origin redirect chain with short bodies stays on one connection; a long redirect body closes it', async () => {
    const pool = new HttpsConnectionPool();
    const from = one.arrivals.length;
    assert.equal((await get({ pool }, `https://a.example.test:${one.port}/hops?n=3`)).ok?.body.text, 'done');
    const hops = since(one, from);
    assert.equal(hops.length, 4);
    assert.equal(connectionsUsed(hops).size, 1);

    const next = one.arrivals.length;
    okStatus(await get({ pool }, `https://a.example.test:${one.port}/big-redirect`));
    const [redirect, target] = since(one, next);
    assert.equal(redirect.connection, hops[0].connection, 'the chain\'s connection was idle in the pool');
    assert.notEqual(target.connection, redirect.connection);
    await eventually(() => one.connections[redirect.connection].closed, 'the connection with the unread body closed');
    await pool.close();
  });

  it('a request with a credential and one without, or with another credential, use separate connections', async () => {
    const pool = new HttpsConnectionPool();
    const aOrigin = `https://a.example.test:${one.port}`;
    const withSecret = (value: string): BridgeSetup => ({ pool, grants: [aOrigin], credentials: [{ origin: aOrigin, headers: { 'x-api-key': value } }] });
    const from = one.arrivals.length;
    okStatus(await get(withSecret('key-one'), `${aOrigin}/quiet`));
    okStatus(await get({ pool }, `${aOrigin}/quiet`));
    okStatus(await get(withSecret('key-two'), `${aOrigin}/quiet`));
    okStatus(await get({ pool }, `${aOrigin}/quiet`, { headers: { cookie: 'session=guest-one' } }));
    okStatus(await get(withSecret('key-one'), `${aOrigin}/quiet`));
    okStatus(await get({ pool }, `${aOrigin}/quiet`));
    const used = since(one, from).map((a) => a.connection);
    assert.equal(new Set(used.slice(0, 4)).size, 4, 'four authorities, four connections');
    assert.equal(used[4], used[0], 'the same credential finds its connection again');
    assert.equal(used[5], used[1], 'anonymous requests share theirs');
    await pool.close();
  });

  it('a connection verified with extra certificates is never lent to a request that trusts only Node\'s roots', async () => {
    const pool = new HttpsConnectionPool();
    const url = `https://a.example.test:${one.port}/quiet`;
    const from = one.arrivals.length;
    okStatus(await get({ pool }, url));
    const refused = await get({ pool, trustTestCa: false }, url);
    assert.equal(refused.error?.kind, 'connection', JSON.stringify(refused));
    assert.equal(since(one, from).length, 1, 'the untrusting request reached nothing');
    await pool.close();
  });

  it('the forbidden-destination check runs on every request, however warm the pool', async () => {
    const pool = new HttpsConnectionPool();
    const url = `https://a.example.test:${one.port}/quiet`;
    const from = one.arrivals.length;
    okStatus(await get({ pool }, url));
    const refused = await get({ pool, privateDestinations: 'deny' }, url);
    assert.equal(refused.error?.kind, 'forbidden_destination');
    assert.equal(since(one, from).length, 1);
    await pool.close();
  });
});

describe('lending and bounds', () => {
  it('concurrent requests to one origin each get their own connection', async () => {
    const pool = new HttpsConnectionPool();
    const url = `https://a.example.test:${one.port}/pair`;
    const from = one.arrivals.length;
    const answers = await Promise.all([get({ pool }, url), get({ pool }, url)]);
    for (const answer of answers) assert.equal(answer.ok?.body.text, 'paired', JSON.stringify(answer));
    assert.equal(connectionsUsed(since(one, from)).size, 2);
    assert.equal(pool.stats().idle, 2);
    await pool.close();
  });

  it('a body not read to its end closes its connection instead of returning it', async () => {
    const pool = new HttpsConnectionPool();
    const from = one.arrivals.length;
    const tooLarge = await get({ pool }, `https://a.example.test:${one.port}/bytes?n=1000000`);
    assert.equal(tooLarge.error?.kind, 'too_large');
    okStatus(await get({ pool }, `https://a.example.test:${one.port}/quiet`));
    const [first, second] = since(one, from);
    assert.notEqual(second.connection, first.connection);
    await eventually(() => one.connections[first.connection].closed, 'the unread connection closed');
    await pool.close();
  });

  it('idle connections are bounded (oldest closed first), expire, close on demand, and all close with the pool', async () => {
    const pool = new HttpsConnectionPool({ maxIdle: 2, idleMs: 60_000 });
    const from = one.arrivals.length;
    for (const name of ['a', 'b', 'c']) okStatus(await get({ pool }, `https://${name}.example.test:${one.port}/quiet`));
    const [a, b, c] = since(one, from).map((arrival) => one.connections[arrival.connection]);
    assert.equal(pool.stats().idle, 2);
    await eventually(() => a.closed, 'the oldest idle connection closed');
    assert.equal(b.closed || c.closed, false);

    pool.sweep(performance.now() + 120_000);
    assert.equal(pool.stats().idle, 0);
    await eventually(() => b.closed && c.closed, 'expired connections closed');

    okStatus(await get({ pool }, `https://a.example.test:${one.port}/quiet`));
    const kept = one.connections[one.arrivals[one.arrivals.length - 1].connection];
    pool.closeIdle();
    assert.equal(pool.stats().idle, 0);
    await eventually(() => kept.closed, 'closeIdle closed the idle connection');
    okStatus(await get({ pool }, `https://a.example.test:${one.port}/quiet`));
    assert.equal(pool.stats().idle, 1, 'the pool still keeps connections after closeIdle');

    const last = one.connections[one.arrivals[one.arrivals.length - 1].connection];
    await pool.close();
    await eventually(() => last.closed, 'the pool\'s connection closed with it');
    // A pool closed keeps nothing, yet still serves.
    okStatus(await get({ pool }, `https://a.example.test:${one.port}/quiet`));
    assert.equal(pool.stats().idle, 0);
  });
});

describe('authorityPartition', () => {
  const names = ['authorization', 'cookie', 'proxy-authorization', 'x-api-key'];
  it('is empty without authority headers and keyed by their values otherwise, never showing them', () => {
    assert.equal(authorityPartition({ accept: 'text/plain' }, names), '');
    const p1 = authorityPartition({ authorization: 'Bearer one', accept: 'a' }, names);
    assert.equal(p1, authorityPartition({ accept: 'b', authorization: 'Bearer one' }, names));
    assert.notEqual(p1, authorityPartition({ authorization: 'Bearer two' }, names));
    assert.notEqual(p1, authorityPartition({ cookie: 'Bearer one' }, names));
    assert.match(p1, /^[A-Za-z0-9_-]{43}$/, 'a digest, not the header text');
  });
});
