/**
 * Every field of a subako_http request, through the bridge handler, against a real HTTPS server on
 * loopback (names mapped to 127.0.0.1 with the explicit private-destinations opt-in of tests).
 */
import { ENTRY_COST_BYTES } from '../../src/wasi/index.js';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHttpBridge, type EgressLogEntry } from '../../src/egress/index.js';
import type { BridgeHandler } from '../../src/sandbox/types.js';
import { testRoutes } from './helpers/routes.js';
import { callBridge, makeRun, mapLookup, startServer, type TestServer } from './helpers/servers.js';
import { makeTestCa } from './helpers/test-ca.js';

let server: TestServer;
let handler: BridgeHandler;
let log: EgressLogEntry[];
let volume: string;
const url = (path: string): string => server.url('api.example.test', path);

before(async () => {
  server = await startServer(testRoutes);
  volume = mkdtempSync(join(tmpdir(), 'subako-egress-fields-'));
  mkdirSync(join(volume, 'tmp'));
  mkdirSync(join(volume, 'data'));
  log = [];
  handler = createHttpBridge({
    policy: { allow: [`api.example.test:${server.port}`], grants: [], privateDestinations: 'allow' },
    credentials: [],
    volume: [{ guestPath: '/volume/tmp', hostPath: join(volume, 'tmp') }, { guestPath: '/volume/data', hostPath: join(volume, 'data') }],
    ca: makeTestCa().ca,
    log,
    lookup: mapLookup({ 'api.example.test': '127.0.0.1' }),
  });
});
after(async () => {
  await server.close();
  rmSync(volume, { recursive: true, force: true });
});

const echo = async (request: Record<string, unknown>): Promise<any> => {
  const answer = await callBridge(handler, { url: url('/echo'), ...request });
  assert.ok(answer.ok, JSON.stringify(answer));
  return { answer, arrived: JSON.parse(answer.ok.body.text) };
};

describe('method', () => {
  it('GET is the default', async () => {
    const { arrived } = await echo({});
    assert.equal(arrived.method, 'GET');
  });
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    it(`${method} reaches the server as ${method}`, async () => {
      const { arrived } = await echo({ method });
      assert.equal(arrived.method, method);
    });
  }
  it('HEAD reaches the server and answers an empty inline body', async () => {
    const before = server.arrivals.length;
    const answer = await callBridge(handler, { method: 'HEAD', url: url('/echo') });
    assert.equal(answer.ok.status, 200);
    assert.deepEqual(answer.ok.body, { type: 'inline', text: '' });
    assert.equal(server.arrivals[before].method, 'HEAD');
  });
});

describe('url', () => {
  it('path and query are sent as given; the fragment is not', async () => {
    const { arrived } = await echo({ url: url('/echo?a=1&b=%20x#frag') });
    assert.equal(arrived.path, '/echo?a=1&b=%20x');
  });
});

describe('headers', () => {
  it('are sent as given, and the Host is the URL host whatever the guest says', async () => {
    const { arrived } = await echo({ headers: { accept: 'application/json', 'x-trace': 'abc', host: 'evil.example', connection: 'close', 'content-length': '999' } });
    assert.equal(arrived.headers.accept, 'application/json');
    assert.equal(arrived.headers['x-trace'], 'abc');
    assert.equal(arrived.headers.host, `api.example.test:${server.port}`);
    assert.notEqual(arrived.headers['content-length'], '999');
  });
});

describe('body', () => {
  it('text goes as text/plain; charset=utf-8 unless a header says otherwise', async () => {
    const { arrived } = await echo({ method: 'POST', body: { type: 'text', text: 'héllo' } });
    assert.equal(arrived.body, 'héllo');
    assert.equal(arrived.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(arrived.headers['content-length'], String(Buffer.byteLength('héllo')));
    const custom = await echo({ method: 'POST', headers: { 'content-type': 'text/csv' }, body: { type: 'text', text: 'a,b' } });
    assert.equal(custom.arrived.headers['content-type'], 'text/csv');
  });
  it('json goes as application/json', async () => {
    const { arrived } = await echo({ method: 'POST', body: { type: 'json', json: { order: 1042, items: ['x'] } } });
    assert.deepEqual(JSON.parse(arrived.body), { order: 1042, items: ['x'] });
    assert.equal(arrived.headers['content-type'], 'application/json');
  });
  it('file is streamed from the volume with its length', async () => {
    const content = Buffer.alloc(300_000, 0x62);
    mkdirSync(join(volume, 'data', 'in'), { recursive: true });
    writeFileSync(join(volume, 'data', 'in', 'upload.bin'), content);
    const before = server.arrivals.length;
    const answer = await callBridge(handler, { method: 'PUT', url: url('/quiet'), body: { type: 'file', path: '/volume/data/in/upload.bin' } });
    assert.equal(answer.ok.status, 200);
    assert.ok(server.arrivals[before].body.equals(content));
    assert.equal(server.arrivals[before].headers['content-length'], '300000');
    assert.equal(log.at(-1)?.bytesOut, 300_000);
  });
});

describe('output', () => {
  it('inline is the default and holds the body as text', async () => {
    const answer = await callBridge(handler, { url: url('/quiet') });
    assert.deepEqual(answer, { ok: { status: 200, headers: answer.ok.headers, body: { type: 'inline', text: 'ok' } } });
  });
  it('file saves the body to the volume, creating parents and overwriting', async () => {
    writeFileSync(join(volume, 'tmp', 'existing.bin'), Buffer.alloc(5000, 0x7a));
    for (const path of ['/volume/tmp/a/b/c/out.bin', '/volume/tmp/existing.bin']) {
      const answer = await callBridge(handler, { url: url('/bytes?n=1234'), output: { type: 'file', path } });
      assert.deepEqual(answer.ok.body, { type: 'file', path, bytes: 1234 });
    }
    assert.ok(readFileSync(join(volume, 'tmp', 'a', 'b', 'c', 'out.bin')).equals(Buffer.alloc(1234, 0x61)));
    assert.ok(readFileSync(join(volume, 'tmp', 'existing.bin')).equals(Buffer.alloc(1234, 0x61)));
  });
  it('file output counts against the call\'s write budget', async () => {
    const run = makeRun();
    await callBridge(handler, { url: url('/bytes?n=4321'), output: { type: 'file', path: '/volume/data/counted.bin' } }, run);
    assert.equal(run.writeBudget.used(), ENTRY_COST_BYTES + 4321, 'the new file is an entry, then its bytes');
    // Overwriting the same file creates no entry.
    await callBridge(handler, { url: url('/bytes?n=4321'), output: { type: 'file', path: '/volume/data/counted.bin' } }, run);
    assert.equal(run.writeBudget.used(), ENTRY_COST_BYTES + 2 * 4321);
  });
  it('the directories and the file a download creates are entries: a budget without room for them refuses it', async () => {
    const run = makeRun({ budgetBytes: ENTRY_COST_BYTES }); // room for one entry: the directory, not the file
    const answer = await callBridge(handler, { url: url('/bytes?n=10'), output: { type: 'file', path: '/volume/tmp/newdir/f.bin' } }, run);
    assert.equal(answer.error?.kind, 'write_budget', JSON.stringify(answer));
    assert.equal(existsSync(join(volume, 'tmp', 'newdir', 'f.bin')), false);
  });
  it('a non-UTF-8 body saved to a file is fine', async () => {
    const answer = await callBridge(handler, { url: url('/binary'), output: { type: 'file', path: '/volume/tmp/bin.dat' } });
    assert.equal(answer.ok.body.bytes, 5);
  });
});

describe('follow_redirects and timeout_ms', () => {
  it('follow_redirects false answers the redirect itself', async () => {
    const answer = await callBridge(handler, { url: url(`/redirect?to=${encodeURIComponent('/quiet')}`), follow_redirects: false });
    assert.equal(answer.ok.status, 302);
    assert.equal(answer.ok.headers.location, '/quiet');
    assert.equal(answer.ok.body.text, 'moved');
  });
  it('follow_redirects true (the default) follows it', async () => {
    const answer = await callBridge(handler, { url: url(`/redirect?to=${encodeURIComponent('/quiet')}`) });
    assert.equal(answer.ok.status, 200);
    assert.equal(answer.ok.body.text, 'ok');
  });
  it('a request that completes within timeout_ms succeeds', async () => {
    const answer = await callBridge(handler, { url: url('/quiet'), timeout_ms: 20_000 });
    assert.equal(answer.ok.status, 200);
  });
});

describe('response headers', () => {
  it('names are lowercase and repeated headers are joined with ", "', async () => {
    const answer = await callBridge(handler, { url: url('/headers') });
    assert.equal(answer.ok.headers['x-multi'], 'one, two');
    assert.equal(answer.ok.headers['set-cookie'], 'a=1, b=2');
    assert.equal(answer.ok.headers['content-type'], 'text/plain');
    for (const name of Object.keys(answer.ok.headers)) assert.equal(name, name.toLowerCase());
  });
});

describe('egress log', () => {
  it('one entry per exchange: method, URL with its query, status, bytes, duration', async () => {
    const start = log.length;
    await callBridge(handler, { method: 'POST', url: url('/bytes?n=77'), body: { type: 'text', text: '12345' } });
    const entry = log[start];
    assert.equal(log.length, start + 1);
    assert.deepEqual({ ...entry, durationMs: 0 }, { method: 'POST', url: url('/bytes?n=77'), status: 200, bytesIn: 77, bytesOut: 5, durationMs: 0 });
    assert.ok(entry.durationMs >= 0);
  });
  it('each redirect hop is its own entry', async () => {
    const start = log.length;
    await callBridge(handler, { url: url(`/redirect?to=${encodeURIComponent('/quiet')}&status=301`) });
    assert.deepEqual(log.slice(start).map((e) => [e.method, new URL(e.url).pathname, e.status]), [['GET', '/redirect', 301], ['GET', '/quiet', 200]]);
  });
  it('a refused request is logged with its error kind and no status', async () => {
    const start = log.length;
    await callBridge(handler, { url: 'https://elsewhere.example.test/x?q=1' });
    assert.deepEqual(log.slice(start).map((e) => [e.url, e.error, e.status]), [['https://elsewhere.example.test/x?q=1', 'host_not_allowed', undefined]]);
  });
});
