/**
 * Each of the 13 error kinds, produced through the bridge handler where the ABI page says, against real
 * HTTPS servers on loopback. Where a refusal must happen before anything is sent, the server's arrivals
 * prove nothing reached it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createHttpBridge, MAX_INLINE_BODY_BYTES, type EgressLogEntry, type HttpBridgeOptions, type VaultCredential,
} from '../../src/egress/index.js';
import { HTTP_ERROR_KINDS } from '../../src/sandbox/index.js';
import type { BridgeHandler } from '../../src/sandbox/types.js';
import { testRoutes } from './helpers/routes.js';
import { callBridge, makeRun, mapLookup, startServer, type TestServer } from './helpers/servers.js';
import { makeTestCa } from './helpers/test-ca.js';

const SECRET = 'Bearer tok-9f8e7d-SECRET';
let server: TestServer;
let untrusted: TestServer;
let volume: string;
const lookup = mapLookup({ 'api.example.test': '127.0.0.1', 'self.example.test': '127.0.0.1', 'gone.example.test': '127.0.0.1' });

function bridge(overrides: Partial<HttpBridgeOptions> = {}, log: EgressLogEntry[] = []): BridgeHandler {
  return createHttpBridge({
    policy: {
      allow: [`api.example.test:${server.port}`, `self.example.test:${untrusted.port}`, 'gone.example.test:1'],
      grants: [],
      privateDestinations: 'allow',
    },
    credentials: [],
    volume: [{ guestPath: '/volume/tmp', hostPath: join(volume, 'tmp') }],
    ca: makeTestCa().ca,
    log,
    lookup,
    ...overrides,
  });
}
const url = (path: string): string => server.url('api.example.test', path);

before(async () => {
  server = await startServer(testRoutes);
  untrusted = await startServer(testRoutes, { untrusted: true });
  volume = mkdtempSync(join(tmpdir(), 'subako-egress-kinds-'));
  mkdirSync(join(volume, 'tmp'));
});
after(async () => {
  await server.close();
  await untrusted.close();
  rmSync(volume, { recursive: true, force: true });
});

async function expectKind(handler: BridgeHandler, request: unknown, kind: string, run = makeRun()): Promise<string> {
  const answer = await callBridge(handler, request, run);
  assert.equal(answer.error?.kind, kind, JSON.stringify(answer).slice(0, 300));
  assert.equal(typeof answer.error.message, 'string');
  assert.deepEqual(Object.keys(answer), ['error']);
  return answer.error.message;
}

/** Runs `action` and asserts how many requests reached the main server meanwhile. */
async function arrivalsDuring(action: () => Promise<unknown>): Promise<number> {
  const before = server.arrivals.length;
  await action();
  return server.arrivals.length - before;
}

describe('the 13 error kinds', () => {
  it('the kinds the answers are typed against (the subako_http ABI table) are exactly those of the page', () => {
    assert.deepEqual([...HTTP_ERROR_KINDS].sort(), [
      'abi', 'bad_path', 'connection', 'credential_header', 'credential_unavailable', 'forbidden_destination', 'host_not_allowed',
      'invalid_request', 'not_text', 'timeout', 'too_large', 'too_many_redirects', 'write_budget',
    ]);
  });

  it('invalid_request: an impossible method, header or field, and nothing is sent', async () => {
    const handler = bridge();
    const sent = await arrivalsDuring(async () => {
      await expectKind(handler, { method: 'TRACE', url: url('/echo') }, 'invalid_request');
      await expectKind(handler, { url: url('/echo'), headers: { Authorization: 'x' } }, 'invalid_request');
      await expectKind(handler, { url: url('/echo'), cookies: {} }, 'invalid_request');
      await expectKind(handler, '{not json', 'invalid_request');
    });
    assert.equal(sent, 0);
  });

  it('host_not_allowed: a host or port the allowlist does not admit, and nothing is sent', async () => {
    const handler = bridge({ lookup: mapLookup({ 'api.example.test': '127.0.0.1', 'notlisted.example.test': '127.0.0.1' }) });
    const sent = await arrivalsDuring(async () => {
      const message = await expectKind(handler, { url: server.url('notlisted.example.test', '/echo') }, 'host_not_allowed');
      assert.match(message, /notlisted\.example\.test.* is not in this function's network allowlist/);
      await expectKind(handler, { url: `https://api.example.test/echo` }, 'host_not_allowed');
      await expectKind(handler, { url: `https://127.0.0.1:${server.port}/echo` }, 'host_not_allowed');
    });
    assert.equal(sent, 0);
  });

  it('forbidden_destination: plain http', async () => {
    await expectKind(bridge(), { url: `http://api.example.test:${server.port}/echo` }, 'forbidden_destination');
  });

  it('credential_header: the guest sets a header the credential for that origin sets; nothing is sent', async () => {
    const origin = `https://api.example.test:${server.port}`;
    const handler = bridge({
      policy: { allow: [`api.example.test:${server.port}`], grants: [origin], privateDestinations: 'allow' },
      credentials: [{ origin, headers: { authorization: SECRET } }],
    });
    const sent = await arrivalsDuring(async () => {
      const message = await expectKind(handler, { url: url('/quiet'), headers: { authorization: 'Bearer mine' } }, 'credential_header');
      assert.ok(!message.includes('tok-9f8e7d'));
    });
    assert.equal(sent, 0);
  });

  it('credential_unavailable: a granted origin with no single usable credential; nothing is sent', async () => {
    const origin = `https://api.example.test:${server.port}`;
    const policy = { allow: [`api.example.test:${server.port}`], grants: [origin], privateDestinations: 'allow' as const };
    const sent = await arrivalsDuring(async () => {
      await expectKind(bridge({ policy, credentials: [] }), { url: url('/quiet') }, 'credential_unavailable');
      const two: VaultCredential[] = [{ origin, headers: { authorization: SECRET } }, { origin, headers: { 'x-api-key': SECRET } }];
      const message = await expectKind(bridge({ policy, credentials: two }), { url: url('/quiet') }, 'credential_unavailable');
      assert.ok(!message.includes('tok-9f8e7d'));
    });
    assert.equal(sent, 0);
  });

  it('too_many_redirects: past 10 hops; exactly 10 are followed', async () => {
    const handler = bridge();
    const sent = await arrivalsDuring(() => expectKind(handler, { url: url('/loop') }, 'too_many_redirects'));
    assert.equal(sent, 11, 'the first request and 10 redirects, no more');
    const ten = await callBridge(handler, { url: url('/hops?n=10') });
    assert.equal(ten.ok?.body.text, 'done');
    await expectKind(handler, { url: url('/hops?n=11') }, 'too_many_redirects');
  });

  it('timeout: timeout_ms bounds waiting for the headers', async () => {
    await expectKind(bridge(), { url: url('/hang'), timeout_ms: 300 }, 'timeout');
  });
  it('timeout: timeout_ms bounds reading the body (inline and file)', async () => {
    await expectKind(bridge(), { url: url('/drip'), timeout_ms: 300 }, 'timeout');
    await expectKind(bridge(), { url: url('/drip'), timeout_ms: 300, output: { type: 'file', path: '/volume/tmp/drip.txt' } }, 'timeout');
    assert.equal(existsSync(join(volume, 'tmp', 'drip.txt')), false, 'a partial download is removed');
  });
  it("timeout: the call's remaining time bounds a request without timeout_ms, and one with a longer timeout_ms", async () => {
    await expectKind(bridge(), { url: url('/hang') }, 'timeout', makeRun({ remainingMs: 300 }));
    await expectKind(bridge(), { url: url('/hang'), timeout_ms: 60_000 }, 'timeout', makeRun({ remainingMs: 300 }));
  });
  it('timeout: the run ending aborts the request', async () => {
    const ended = new AbortController();
    setTimeout(() => ended.abort(), 200);
    await expectKind(bridge(), { url: url('/hang') }, 'timeout', makeRun({ signal: ended.signal }));
    const already = new AbortController();
    already.abort();
    const sent = await arrivalsDuring(() => expectKind(bridge(), { url: url('/quiet') }, 'timeout', makeRun({ signal: already.signal })));
    assert.equal(sent, 0);
  });

  it(`too_large: an inline body over ${MAX_INLINE_BODY_BYTES} bytes; exactly that many is fine`, async () => {
    const exact = await callBridge(bridge(), { url: url(`/bytes?n=${MAX_INLINE_BODY_BYTES}`) });
    assert.equal(exact.ok?.body.text.length, MAX_INLINE_BODY_BYTES);
    await expectKind(bridge(), { url: url(`/bytes?n=${MAX_INLINE_BODY_BYTES + 1}`) }, 'too_large');
    await expectKind(bridge(), { url: url(`/bytes?n=${64 * 1024 * 1024}`) }, 'too_large');
  });

  it('not_text: an inline body that is not UTF-8', async () => {
    await expectKind(bridge(), { url: url('/binary') }, 'not_text');
  });

  it("write_budget: a file output past the call's write budget, and the partial file is removed", async () => {
    const run = makeRun({ budgetBytes: 100_000 });
    await expectKind(bridge(), { url: url('/bytes?n=500000'), output: { type: 'file', path: '/volume/tmp/over.bin' } }, 'write_budget', run);
    assert.ok(run.writeBudget.used() <= 100_000);
    assert.equal(existsSync(join(volume, 'tmp', 'over.bin')), false);
  });

  it('bad_path: a body or output path that is not a usable volume file; nothing is sent', async () => {
    const handler = bridge();
    const sent = await arrivalsDuring(async () => {
      await expectKind(handler, { url: url('/quiet'), output: { type: 'file', path: '/etc/passwd' } }, 'bad_path');
      await expectKind(handler, { url: url('/quiet'), output: { type: 'file', path: '/volume/tmp/../../x' } }, 'bad_path');
      await expectKind(handler, { url: url('/quiet'), output: { type: 'file', path: '/volume/data/x' } }, 'bad_path');
      await expectKind(handler, { method: 'POST', url: url('/quiet'), body: { type: 'file', path: '/volume/tmp/missing.bin' } }, 'bad_path');
      await expectKind(handler, { method: 'POST', url: url('/quiet'), body: { type: 'file', path: 'relative.bin' } }, 'bad_path');
    });
    assert.equal(sent, 0);
  });

  it('connection: a broken exchange, an untrusted certificate, a refused port, an unknown name', async () => {
    const handler = bridge();
    await expectKind(handler, { url: url('/broken') }, 'connection');
    const tlsMessage = await expectKind(handler, { url: untrusted.url('self.example.test', '/quiet') }, 'connection');
    assert.match(tlsMessage, /self\.example\.test/);
    assert.equal(untrusted.arrivals.length, 0, 'no request is sent over an unverified connection');
    await expectKind(handler, { url: 'https://gone.example.test:1/' }, 'connection');
    await expectKind(bridge({ policy: { allow: ['nowhere.example.test'], grants: [], privateDestinations: 'allow' } }), { url: 'https://nowhere.example.test/' }, 'connection');
  });
});

describe('secrets never appear in answers or logs', () => {
  it('a credential is sent to its origin, and is absent from the answer and the log', async () => {
    const origin = `https://api.example.test:${server.port}`;
    const log: EgressLogEntry[] = [];
    const handler = bridge({
      policy: { allow: [`api.example.test:${server.port}`], grants: [origin], privateDestinations: 'allow' },
      credentials: [{ origin, headers: { authorization: SECRET } }],
    }, log);
    const before = server.arrivals.length;
    const answers = [
      await callBridge(handler, { url: url('/headers') }),
      await callBridge(handler, { url: url('/broken') }),
      await callBridge(handler, { url: url('/hang'), timeout_ms: 200 }),
      await callBridge(handler, { url: url('/loop') }),
    ];
    assert.equal(server.arrivals[before].headers.authorization, SECRET);
    assert.ok(server.arrivals.slice(before).every((a) => a.headers.authorization === SECRET), 'every same-origin hop carries it');
    const everything = JSON.stringify(answers) + JSON.stringify(log);
    assert.ok(!everything.includes('tok-9f8e7d'), everything.slice(0, 500));
  });
});
