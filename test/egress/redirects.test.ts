/**
 * Redirects: each hop checked like the first, credentials riding only to their own origin, the guest's
 * authorization, cookie and proxy-authorization dropped on a hop to another origin, and the method/body rules.
 * Server A is origin https://a.example.test:PA, server B is https://b.other.test:PB (both on loopback, with
 * the private-destinations opt-in of tests); server C is reachable but not in the allowlist.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHttpBridge, type VaultCredential } from '../../src/egress/index.js';
import type { BridgeHandler } from '../../src/sandbox/types.js';
import { testRoutes } from './helpers/routes.js';
import { callBridge, mapLookup, startServer, type Arrival, type TestServer } from './helpers/servers.js';
import { makeTestCa } from './helpers/test-ca.js';

const A_SECRET = 'Bearer a-secret-1f2e3d';
const B_SECRET = 'b-secret-8c7b6a';
let a: TestServer;
let b: TestServer;
let c: TestServer;
let aOrigin: string;
let bOrigin: string;
let volume: string;

function bridge(grants: string[], credentials: VaultCredential[]): BridgeHandler {
  return createHttpBridge({
    policy: { allow: [`a.example.test:${a.port}`, `b.other.test:${b.port}`], grants, privateDestinations: 'allow' },
    credentials,
    volume: [{ guestPath: '/volume/tmp', hostPath: volume }],
    ca: makeTestCa().ca,
    log: [],
    lookup: mapLookup({ 'a.example.test': '127.0.0.1', 'b.other.test': '127.0.0.1', 'c.example.test': '127.0.0.1' }),
  });
}

before(async () => {
  a = await startServer(testRoutes);
  b = await startServer(testRoutes);
  c = await startServer(testRoutes);
  aOrigin = `https://a.example.test:${a.port}`;
  bOrigin = `https://b.other.test:${b.port}`;
  volume = mkdtempSync(join(tmpdir(), 'subako-egress-redirects-'));
});
after(async () => {
  await Promise.all([a.close(), b.close(), c.close()]);
  rmSync(volume, { recursive: true, force: true });
});

const via = (to: string, status = 302): string => `${aOrigin}/redirect?status=${status}&to=${encodeURIComponent(to)}`;
const lastAt = (server: TestServer): Arrival => server.arrivals[server.arrivals.length - 1];
/** Header names as they arrived on the wire, lowercased (so no variant of a name can hide). */
const namesAt = (arrival: Arrival): string[] => arrival.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());

describe('credentials ride only to their own origin', () => {
  it('A\'s credential reaches A and never B; the guest\'s cookie and proxy-authorization are dropped at B', async () => {
    const handler = bridge([aOrigin], [{ origin: aOrigin, headers: { authorization: A_SECRET } }]);
    const answer = await callBridge(handler, {
      url: via(`${bOrigin}/echo`),
      headers: { cookie: 'session=guest', 'proxy-authorization': 'Basic Z3Vlc3Q=', 'x-custom': 'kept' },
    });
    assert.equal(answer.ok?.status, 200, JSON.stringify(answer));
    assert.equal(lastAt(a).headers.authorization, A_SECRET);
    assert.equal(lastAt(a).headers.cookie, 'session=guest', 'the first hop carries the guest headers');
    const atB = lastAt(b);
    for (const name of ['authorization', 'cookie', 'proxy-authorization']) assert.ok(!namesAt(atB).includes(name), `${name} reached B`);
    assert.equal(atB.headers['x-custom'], 'kept');
    assert.ok(!JSON.stringify(atB.rawHeaders).includes('a-secret'));
  });

  it("the guest's own authorization is dropped on a hop to another origin, kept on a same-origin hop", async () => {
    const handler = bridge([], []);
    await callBridge(handler, { url: via(`${aOrigin}/echo`), headers: { authorization: 'Bearer guest' } });
    assert.equal(lastAt(a).headers.authorization, 'Bearer guest');
    await callBridge(handler, { url: via(`${bOrigin}/echo`), headers: { authorization: 'Bearer guest' } });
    assert.ok(!namesAt(lastAt(b)).includes('authorization'));
  });

  it('another port of the same host is another origin', async () => {
    const otherPortOfA = await startServer(testRoutes);
    const localHandler = createHttpBridge({
      policy: { allow: [`a.example.test:${a.port}`, `a.example.test:${otherPortOfA.port}`], grants: [], privateDestinations: 'allow' },
      credentials: [], volume: [], ca: makeTestCa().ca, log: [], lookup: mapLookup({ 'a.example.test': '127.0.0.1' }),
    });
    try {
      await callBridge(localHandler, { url: via(otherPortOfA.url('a.example.test', '/echo')), headers: { cookie: 'c=1' } });
      assert.ok(!namesAt(lastAt(otherPortOfA)).includes('cookie'));
    } finally {
      await otherPortOfA.close();
    }
  });

  it("B's credential rides to B when B is granted, and A's never does", async () => {
    const handler = bridge([aOrigin, bOrigin], [
      { origin: aOrigin, headers: { authorization: A_SECRET } },
      { origin: bOrigin, headers: { 'x-api-key': B_SECRET } },
    ]);
    await callBridge(handler, { url: via(`${bOrigin}/echo`) });
    assert.equal(lastAt(a).headers.authorization, A_SECRET);
    assert.equal(lastAt(a).headers['x-api-key'], undefined);
    assert.equal(lastAt(b).headers['x-api-key'], B_SECRET);
    assert.ok(!namesAt(lastAt(b)).includes('authorization'));
  });

  it("back at A after B, A's credential is attached again but the guest's dropped headers stay dropped", async () => {
    const handler = bridge([aOrigin], [{ origin: aOrigin, headers: { 'x-api-key': 'a-key' } }]);
    const backToA = `${bOrigin}/redirect?to=${encodeURIComponent(`${aOrigin}/echo`)}`;
    const answer = await callBridge(handler, { url: via(backToA), headers: { authorization: 'Bearer guest' } });
    const arrived = JSON.parse(answer.ok.body.text);
    assert.equal(arrived.headers['x-api-key'], 'a-key');
    assert.equal(arrived.headers.authorization, undefined);
  });
});

describe('each redirect hop is checked like the first', () => {
  it('a hop to a host outside the allowlist is host_not_allowed, and nothing reaches it', async () => {
    const answer = await callBridge(bridge([], []), { url: via(c.url('c.example.test', '/echo')) });
    assert.equal(answer.error?.kind, 'host_not_allowed');
    assert.equal(c.arrivals.length, 0);
  });
  it('a hop to a granted origin without a usable credential is credential_unavailable, and nothing reaches it', async () => {
    const before = b.arrivals.length;
    const answer = await callBridge(bridge([bOrigin], []), { url: via(`${bOrigin}/echo`) });
    assert.equal(answer.error?.kind, 'credential_unavailable');
    assert.equal(b.arrivals.length, before);
  });
  it('a hop where a guest header collides with that origin\'s credential is credential_header', async () => {
    const handler = bridge([bOrigin], [{ origin: bOrigin, headers: { 'x-api-key': B_SECRET } }]);
    const answer = await callBridge(handler, { url: via(`${bOrigin}/echo`), headers: { 'x-api-key': 'guest' } });
    assert.equal(answer.error?.kind, 'credential_header');
  });
});

describe('methods and bodies across redirects', () => {
  const post = { method: 'POST', headers: { 'content-type': 'application/x-custom' }, body: { type: 'text', text: 'payload' } };
  for (const status of [301, 302, 303]) {
    it(`${status} turns POST into GET and drops the body and its headers`, async () => {
      const answer = await callBridge(bridge([], []), { ...post, url: via('/echo', status) });
      const arrived = JSON.parse(answer.ok.body.text);
      assert.equal(arrived.method, 'GET');
      assert.equal(arrived.body, '');
      assert.equal(arrived.headers['content-type'], undefined);
      assert.equal(arrived.headers['content-length'], undefined);
    });
  }
  for (const status of [307, 308]) {
    it(`${status} keeps the method and the body`, async () => {
      const answer = await callBridge(bridge([], []), { ...post, url: via('/echo', status) });
      const arrived = JSON.parse(answer.ok.body.text);
      assert.deepEqual([arrived.method, arrived.body, arrived.headers['content-type']], ['POST', 'payload', 'application/x-custom']);
    });
  }
  it('307 sends a file body again, from the volume', async () => {
    writeFileSync(join(volume, 'again.txt'), 'file body');
    const answer = await callBridge(bridge([], []), { method: 'PUT', url: via('/echo', 307), body: { type: 'file', path: '/volume/tmp/again.txt' } });
    const arrived = JSON.parse(answer.ok.body.text);
    assert.deepEqual([arrived.method, arrived.body], ['PUT', 'file body']);
  });
  it('302 keeps PUT, and 303 keeps HEAD', async () => {
    const put = JSON.parse((await callBridge(bridge([], []), { method: 'PUT', url: via('/echo', 302), body: { type: 'text', text: 'x' } })).ok.body.text);
    assert.deepEqual([put.method, put.body], ['PUT', 'x']);
    const before = a.arrivals.length;
    await callBridge(bridge([], []), { method: 'HEAD', url: via('/echo', 303) });
    assert.deepEqual(a.arrivals.slice(before).map((x) => x.method), ['HEAD', 'HEAD']);
  });
  it('a relative location resolves against the hop that sent it', async () => {
    const answer = await callBridge(bridge([], []), { url: `${aOrigin}/redirect?to=${encodeURIComponent('quiet')}` });
    assert.equal(answer.ok?.body.text, 'ok');
  });
});
