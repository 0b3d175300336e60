/**
 * Forbidden destinations through the handler: no request reaches a loopback, private or metadata address
 * without the explicit opt-in — by IP literal, by a name that resolves there, or through a redirect — and
 * the connection goes to the address that was checked (no second resolution).
 *
 * Setup: server PUBLIC listens on 127.0.0.1, which these bridges treat as public through the testing-only
 * exception; server PRIVATE listens on 127.0.0.2, which stays forbidden. Arrivals at PRIVATE are counted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHttpBridge, type EgressLogEntry, type HostLookup, type HttpBridgeOptions } from '../../src/egress/index.js';
import type { BridgeHandler } from '../../src/sandbox/types.js';
import { testRoutes } from './helpers/routes.js';
import { callBridge, mapLookup, startServer, type TestServer } from './helpers/servers.js';
import { makeTestCa } from './helpers/test-ca.js';

let pub: TestServer;
let priv: TestServer;

const NAMES = {
  'public.example.test': '127.0.0.1',
  'private.test': '127.0.0.2',
  'mixed.example.test': ['127.0.0.1', '127.0.0.2'],
  'metadata.example.test': '169.254.169.254',
  'mapped.example.test': '::ffff:127.0.0.2',
  'tennet.example.test': '10.1.2.3',
};

function bridge(overrides: Partial<HttpBridgeOptions> = {}, log: EgressLogEntry[] = []): BridgeHandler {
  return createHttpBridge({
    policy: {
      allow: [
        `public.example.test:${pub.port}`, `private.test:${priv.port}`, `mixed.example.test:${pub.port}`, 'metadata.example.test',
        `mapped.example.test:${priv.port}`, 'tennet.example.test', `rebind.test:${pub.port}`, `127.0.0.2:${priv.port}`,
        `[::ffff:127.0.0.2]:${priv.port}`, '169.254.169.254', '[fd00::1]', `localhost:${pub.port}`, `[::1]:${pub.port}`,
      ],
      grants: [],
    },
    credentials: [],
    volume: [],
    ca: makeTestCa().ca,
    log,
    lookup: mapLookup(NAMES),
    testingOnlyPublicAddresses: ['127.0.0.1'],
    ...overrides,
  });
}

before(async () => {
  pub = await startServer(testRoutes, { host: '127.0.0.1' });
  priv = await startServer(testRoutes, { host: '127.0.0.2' });
});
after(async () => {
  await pub.close();
  await priv.close();
});

async function refused(handler: BridgeHandler, request: unknown): Promise<void> {
  const answer = await callBridge(handler, request);
  assert.equal(answer.error?.kind, 'forbidden_destination', JSON.stringify(answer));
}

describe('forbidden destinations are refused before connecting', () => {
  it('a public destination is reached (the setup works)', async () => {
    const answer = await callBridge(bridge(), { url: pub.url('public.example.test', '/quiet') });
    assert.equal(answer.ok?.status, 200);
  });

  it('a name that resolves to a private address is refused without the opt-in; nothing reaches it', async () => {
    await refused(bridge(), { url: priv.url('private.test', '/quiet') });
    await refused(bridge(), { url: priv.url('mapped.example.test', '/quiet') });
    await refused(bridge(), { url: 'https://tennet.example.test/' });
    assert.equal(priv.arrivals.length, 0);
  });

  it('localhost, resolved by the system resolver, is refused', async () => {
    const before = pub.arrivals.length;
    await refused(bridge({ lookup: undefined, testingOnlyPublicAddresses: [] }), { url: pub.url('localhost', '/quiet') });
    assert.equal(pub.arrivals.length, before);
  });

  it('IP literals in forbidden ranges are refused: loopback, IPv4-mapped, metadata, unique-local', async () => {
    const log: EgressLogEntry[] = [];
    await refused(bridge({}, log), { url: priv.url('127.0.0.2', '/quiet') });
    await refused(bridge({}, log), { url: priv.url('[::ffff:127.0.0.2]', '/quiet') });
    await refused(bridge({ testingOnlyPublicAddresses: [] }), { url: pub.url('[::1]', '/quiet') });
    await refused(bridge({}, log), { url: 'https://169.254.169.254/latest/meta-data/' });
    await refused(bridge({}, log), { url: 'https://[fd00::1]/' });
    assert.equal(priv.arrivals.length, 0);
    assert.ok(log.every((e) => e.status === undefined && e.error === 'forbidden_destination'));
  });

  it('a name that resolves to cloud metadata is refused', async () => {
    await refused(bridge(), { url: 'https://metadata.example.test/latest/meta-data/' });
  });

  it('a name with one public and one private address is refused', async () => {
    const before = pub.arrivals.length;
    await refused(bridge(), { url: pub.url('mixed.example.test', '/quiet') });
    assert.equal(pub.arrivals.length, before);
    assert.equal(priv.arrivals.length, 0);
  });
});

describe('redirects to forbidden destinations are refused', () => {
  for (const [what, target] of [
    ['a name that resolves to a private address', () => priv.url('private.test', '/quiet')],
    ['a loopback literal', () => priv.url('127.0.0.2', '/quiet')],
    ['an IPv4-mapped loopback literal', () => priv.url('[::ffff:127.0.0.2]', '/quiet')],
    ['cloud metadata', () => 'https://169.254.169.254/latest/meta-data/'],
    ['plain http', () => `http://private.test:${priv.port}/quiet`],
  ] as const) {
    it(`a redirect to ${what}`, async () => {
      const before = pub.arrivals.length;
      await refused(bridge(), { url: pub.url('public.example.test', `/redirect?to=${encodeURIComponent(target())}`) });
      assert.equal(pub.arrivals.length, before + 1, 'the first hop was sent');
      assert.equal(priv.arrivals.length, 0, 'the second never was');
    });
  }
});

describe('the explicit opt-in', () => {
  it('privateDestinations "allow" reaches a private address (the refusals above are policy, not failure)', async () => {
    const handler = bridge({
      policy: { allow: [`private.test:${priv.port}`, `public.example.test:${pub.port}`], grants: [], privateDestinations: 'allow' },
    });
    assert.equal((await callBridge(handler, { url: priv.url('private.test', '/quiet') })).ok?.status, 200);
    const redirected = await callBridge(handler, { url: pub.url('public.example.test', `/redirect?to=${encodeURIComponent(priv.url('private.test', '/quiet'))}`) });
    assert.equal(redirected.ok?.status, 200);
    assert.equal(priv.arrivals.length, 2);
    priv.arrivals.length = 0;
  });
  it('with the opt-in, an IPv6 loopback literal is reached too', async () => {
    const v6 = await startServer(testRoutes, { host: '::1' });
    try {
      const handler = bridge({ policy: { allow: [`[::1]:${v6.port}`], grants: [], privateDestinations: 'allow' } });
      assert.equal((await callBridge(handler, { url: v6.url('[::1]', '/quiet') })).ok?.status, 200);
      const denied = bridge({ policy: { allow: [`[::1]:${v6.port}`], grants: [] } });
      assert.equal((await callBridge(denied, { url: v6.url('[::1]', '/quiet') })).error?.kind, 'forbidden_destination');
      assert.equal(v6.arrivals.length, 1);
    } finally {
      await v6.close();
    }
  });
});

describe('the connection is pinned to the checked address', () => {
  it('a name is resolved once per hop and the connection uses that answer, not a second lookup', async () => {
    const calls: string[] = [];
    // First answer public, every later answer private: a rebinding resolver.
    const rebinding: HostLookup = async (hostname) => {
      calls.push(hostname);
      return [{ address: calls.length === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    const before = pub.arrivals.length;
    const answer = await callBridge(bridge({ lookup: rebinding }), { url: pub.url('rebind.test', '/echo') });
    assert.equal(answer.ok?.status, 200, JSON.stringify(answer));
    assert.deepEqual(calls, ['rebind.test']);
    assert.equal(pub.arrivals.length, before + 1);
    assert.equal(priv.arrivals.length, 0);
    // SNI and Host are the original name (the certificate was verified for it).
    assert.equal(JSON.parse(answer.ok.body.text).headers.host, `rebind.test:${pub.port}`);
  });
});
