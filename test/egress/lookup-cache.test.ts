/**
 * The resolution cache: answers reused for a short time, failures and empty answers never, and an answer
 * from the cache checked against the forbidden ranges exactly like a fresh one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cachingLookup, HttpsConnectionPool, createHttpBridge, type HostLookup } from '../../src/egress/index.js';
import { testRoutes } from './helpers/routes.js';
import { callBridge, mapLookup, startServer, type TestServer } from './helpers/servers.js';
import { makeTestCa } from './helpers/test-ca.js';

/** A lookup whose answers a test changes as it goes, counting calls. */
function changingLookup(initial: Record<string, string[]>) {
  const answers = { ...initial };
  const calls: string[] = [];
  const lookup: HostLookup = async (hostname) => {
    calls.push(hostname);
    const found = answers[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }) as const);
  };
  return { lookup, calls, answers };
}

describe('cachingLookup', () => {
  it('reuses an answer until its time is up, then asks again and sees the change', async () => {
    let clock = 0;
    const base = changingLookup({ 'a.test': ['203.0.113.7'] });
    const lookup = cachingLookup(base.lookup, { ttlMs: 1000, now: () => clock });
    assert.deepEqual(await lookup('a.test'), [{ address: '203.0.113.7', family: 4 }]);
    base.answers['a.test'] = ['198.51.100.9'];
    clock = 999;
    assert.deepEqual(await lookup('a.test'), [{ address: '203.0.113.7', family: 4 }]);
    clock = 1000;
    assert.deepEqual(await lookup('a.test'), [{ address: '198.51.100.9', family: 4 }]);
    assert.deepEqual(base.calls, ['a.test', 'a.test']);
  });

  it('keeps names apart, shares a lookup in flight, and hands out copies', async () => {
    const base = changingLookup({ 'a.test': ['203.0.113.7'], 'b.test': ['203.0.113.8'] });
    const lookup = cachingLookup(base.lookup, { now: () => 0 });
    const [a1, a2, b] = await Promise.all([lookup('a.test'), lookup('a.test'), lookup('b.test')]);
    assert.deepEqual(base.calls, ['a.test', 'b.test']);
    assert.equal(b[0].address, '203.0.113.8');
    a1[0].address = '127.0.0.1';
    assert.equal(a2[0].address, '203.0.113.7');
    assert.equal((await lookup('a.test'))[0].address, '203.0.113.7');
  });

  it('never caches a failure or an empty answer', async () => {
    const base = changingLookup({ 'empty.test': [] });
    const lookup = cachingLookup(base.lookup, { now: () => 0 });
    await assert.rejects(lookup('missing.test'), /ENOTFOUND/);
    base.answers['missing.test'] = ['203.0.113.1'];
    assert.equal((await lookup('missing.test'))[0].address, '203.0.113.1');
    assert.deepEqual(await lookup('empty.test'), []);
    base.answers['empty.test'] = ['203.0.113.2'];
    assert.equal((await lookup('empty.test'))[0].address, '203.0.113.2');
  });

  it('remembers at most maxEntries names, forgetting the oldest', async () => {
    const base = changingLookup({ 'a.test': ['203.0.113.1'], 'b.test': ['203.0.113.2'], 'c.test': ['203.0.113.3'] });
    const lookup = cachingLookup(base.lookup, { maxEntries: 2, now: () => 0 });
    for (const name of ['a.test', 'b.test', 'c.test', 'c.test', 'b.test', 'a.test']) await lookup(name);
    assert.deepEqual(base.calls, ['a.test', 'b.test', 'c.test', 'a.test']);
  });
});

describe('a cached answer is held to the same rules', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer(testRoutes);
  });
  after(() => server.close());

  it('a name cached while private destinations were allowed is refused where they are not', async () => {
    const base = mapLookup({ 'cached.example.test': '127.0.0.1' });
    const lookup = cachingLookup(base, { ttlMs: 60_000 });
    const pool = new HttpsConnectionPool();
    const bridge = (privateDestinations: 'allow' | 'deny') =>
      createHttpBridge({
        policy: { allow: [`cached.example.test:${server.port}`], grants: [], privateDestinations },
        credentials: [],
        volume: [],
        ca: makeTestCa().ca,
        log: [],
        lookup,
        connections: pool,
      });
    const url = `https://cached.example.test:${server.port}/quiet`;
    const arrivals = server.arrivals.length;
    assert.equal((await callBridge(bridge('allow'), { url })).ok?.status, 200);
    assert.equal((await callBridge(bridge('deny'), { url })).error?.kind, 'forbidden_destination');
    assert.deepEqual(base.calls, ['cached.example.test'], 'the second request was answered from the cache');
    assert.equal(server.arrivals.length - arrivals, 1);
    await pool.close();
  });
});
