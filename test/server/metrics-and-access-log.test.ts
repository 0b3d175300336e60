/**
 * `/metrics` of a real `subako serve`, parsed by a strict Prometheus text-format parser (helpers/prometheus.ts):
 * its counters move with real calls (REST and MCP, an answered and a refused egress request, the compile cache,
 * HTTP routes);
 * it takes an API key, a read-only one being enough. The access log: one JSON line per request with method,
 * route template, status and duration, and no secret anywhere in what the server wrote.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { packBundle } from '../../src/package/index.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { runCli } from '../cli/helpers/run-cli.js';
import { makeApi, probePackageDir, spawnServe, tempDir, type ChildServer } from './helpers/harness.js';
import { parsePrometheusText, valueOf, type Family } from './helpers/prometheus.js';

describe('the strict Prometheus text parser refuses what a scraper would', () => {
  const refuses = (text: string, pattern: RegExp) => assert.throws(() => parsePrometheusText(text), pattern);
  it('parses a well-formed exposition, escapes included', () => {
    const families = parsePrometheusText('# HELP a_total A \\\\ help.\n# TYPE a_total counter\na_total{x="q\\"\\n\\\\"} 3\n' +
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 2.5\nh_count 2\n');
    assert.equal(valueOf(families, 'a_total', { x: 'q"\n\\' }), 3);
    assert.equal(families.get('a_total')!.help, 'A \\ help.');
    assert.equal(valueOf(families, 'h_count'), 2);
    assert.ok(Number.isNaN(valueOf(parsePrometheusText('g Nan\n'), 'g')), 'NaN in any case, as Go\'s ParseFloat reads it');
  });
  it('refuses malformed lines, bad escapes, split families, repeated series and broken histograms', () => {
    refuses('a 1', /end with a newline/);
    refuses('a{b="c} 1\n', /unterminated/);
    refuses('a{b="\\t"} 1\n', /escape/);
    refuses('a one\n', /not a value/);
    refuses('a 1\nb 1\na 2\n', /not together/);
    refuses('a{x="1"} 1\na{x="1"} 2\n', /given twice/);
    refuses('# TYPE a counter\na -1\n', /negative/);
    refuses('a 1\n# TYPE a counter\n', /after its samples/);
    refuses('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', /not cumulative/);
    refuses('# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', /\+Inf/);
    refuses('# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n', /_count differs/);
  });
});

describe('/metrics and the access log of a real subako serve', () => {
  let server: ChildServer;
  let readKey: string;

  let upstream: HttpsServer;
  let upstreamPort: number;

  before(async () => {
    // A loopback HTTPS server the probe may reach (allowlisted, private destinations allowed for this test).
    const ca = makeTestCa();
    const caFile = join(tempDir('subako-metrics-ca-'), 'ca.pem');
    writeFileSync(caFile, ca.ca);
    upstream = createHttpsServer({ cert: ca.cert, key: ca.key }, (_req, res) => res.end('{"answered":true}'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as AddressInfo).port;
    // The access log is at info; under the test runner the server would be silent otherwise.
    server = await spawnServe(tempDir(), undefined, ['--allow-private-destinations', '--access-log'], { env: { SUBAKO_LOG_LEVEL: 'info', NODE_EXTRA_CA_CERTS: caFile } });
    readKey = (await server.call('POST', '/v1/keys', { name: 'prometheus', scope: 'read' })).body.key;
  });

  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });

  const scrape = async (): Promise<Map<string, Family>> => {
    const answer = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${readKey}` } });
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await answer.text());
  };

  it('takes an API key: none is refused, a read-only one is enough', async () => {
    assert.equal((await fetch(`${server.url}/metrics`)).status, 401);
    assert.equal((await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer sk_notAKeyOfThisServer00000' } })).status, 401);
    const families = await scrape();
    for (const name of ['subako_calls_total', 'subako_call_duration_seconds', 'subako_egress_requests_total', 'subako_sandbox_workers',
      'subako_sandbox_queue_length', 'subako_compile_cache_lookups_total', 'subako_http_requests_total', 'process_cpu_user_seconds_total']) {
      assert.ok(families.get(name)?.help, `${name} is there with its help`);
    }
    assert.equal(families.get('subako_calls_total')!.type, 'counter');
    assert.equal(families.get('subako_call_duration_seconds')!.type, 'histogram');
    assert.equal(valueOf(families, 'subako_sandbox_workers', { state: 'busy' }) + valueOf(families, 'subako_sandbox_workers', { state: 'idle' }), 2);
    assert.equal(valueOf(families, 'subako_sandbox_queue_length'), 0);
  });

  it('counters move with real calls: by source, tool and outcome; durations; egress refusals; compile cache; HTTP routes', async () => {
    const before = await scrape();
    assert.equal((await server.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const agent = (await server.call('POST', '/v1/agents', {
      name: 'metered', tools: [{ package: 'greet' }, { package: 'probe', egress: { allow: [`localhost:${upstreamPort}`] } }],
    })).body;
    const session = (await server.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    const rest = await server.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'Ada' } });
    assert.equal(rest.body.call.outcome, 'ok');
    // Not on the allowlist: the guest's request is refused before any connection, and the call itself ends ok.
    const refused = await server.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'http', arguments: { request: { url: 'https://example.com/' } } });
    assert.equal(refused.body.call.egress[0].error, 'host_not_allowed');
    const answered = await server.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'http', arguments: { request: { url: `https://localhost:${upstreamPort}/forecast` } } });
    assert.equal(answered.body.call.egress[0].status, 200, JSON.stringify(answered.body.call.egress));
    const mcp = await runCli(['mcp', 'call', '--url', session.mcp.capability_url, 'greet', '{"name":"Bo"}'], {});
    assert.equal(mcp.status, 0, mcp.stderr);
    // The MCP call's record is written as its answer goes out: wait for it to be counted.
    let afterCalls = await scrape();
    for (let i = 0; i < 100 && valueOf(afterCalls, 'subako_calls_total', { via: 'mcp', tool: 'greet', outcome: 'ok' }) === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      afterCalls = await scrape();
    }
    const moved = (name: string, labels: Record<string, string>) => valueOf(afterCalls, name, labels) - valueOf(before, name, labels);
    assert.equal(moved('subako_calls_total', { via: 'api', tool: 'greet', outcome: 'ok' }), 1);
    assert.equal(moved('subako_calls_total', { via: 'mcp', tool: 'greet', outcome: 'ok' }), 1);
    assert.equal(moved('subako_calls_total', { via: 'api', tool: 'http', outcome: 'ok' }), 2);
    assert.equal(moved('subako_call_duration_seconds_count', { tool: 'greet', outcome: 'ok' }), 2);
    assert.ok(moved('subako_call_duration_seconds_sum', { tool: 'greet', outcome: 'ok' }) > 0);
    assert.equal(moved('subako_egress_requests_total', { outcome: 'host_not_allowed' }), 1);
    assert.equal(moved('subako_egress_requests_total', { outcome: 'response' }), 1);
    assert.equal(moved('subako_compile_cache_lookups_total', { result: 'miss' }), 1, 'the probe was compiled once, at upload');
    assert.ok(moved('subako_compile_cache_lookups_total', { result: 'hit' }) >= 2, 'the session found both modules compiled');
    assert.equal(moved('subako_http_requests_total', { method: 'POST', route: '/v1/sessions/{id}/calls', status: '200' }), 3);
    assert.equal(moved('subako_http_requests_total', { method: 'POST', route: '/v1/packages', status: '201' }), 1);
    assert.ok(moved('subako_http_requests_total', { method: 'POST', route: '/mcp/{token}', status: '200' }) >= 1);

    // A second session of the same agent compiles nothing: it is all cache hits.
    const second = (await server.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    await server.call('POST', `/v1/sessions/${second.id}/calls`, { tool: 'greet', arguments: { name: 'Cy' } });
    const later = await scrape();
    assert.equal(valueOf(later, 'subako_compile_cache_lookups_total', { result: 'miss' }), valueOf(afterCalls, 'subako_compile_cache_lookups_total', { result: 'miss' }));
    assert.ok(valueOf(later, 'subako_compile_cache_lookups_total', { result: 'hit' }) > valueOf(afterCalls, 'subako_compile_cache_lookups_total', { result: 'hit' }));

    // No label value carries a token: routes are templates.
    for (const family of later.values()) {
      for (const sample of family.samples) {
        for (const value of Object.values(sample.labels)) assert.doesNotMatch(value, /\b(st|sk)_[A-Za-z0-9_-]{20,}/, `${sample.name} ${value}`);
      }
    }
  });

  it('a worker running a guest counts as busy while it runs, and idle again after', async () => {
    const agent = (await server.call('POST', '/v1/agents', { name: 'spinner', tools: [{ package: 'probe' }] })).body;
    const session = (await server.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    const caller = new AbortController();
    // The probe's `timeout` tool spins until stopped; the caller going away stops it (cancelled).
    const spinning = fetch(`${server.url}/v1/sessions/${session.id}/calls`, {
      method: 'POST', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'timeout', arguments: {} }), signal: caller.signal,
    }).catch((error: unknown) => error);
    let busy = 0;
    for (let i = 0; i < 200 && busy === 0; i++) {
      busy = valueOf(await scrape(), 'subako_sandbox_workers', { state: 'busy' });
      if (busy === 0) await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(busy, 1);
    assert.equal(valueOf(await scrape(), 'subako_calls_in_flight'), 1);
    caller.abort();
    await spinning;
    let families = await scrape();
    for (let i = 0; i < 200 && valueOf(families, 'subako_calls_total', { via: 'api', tool: 'timeout', outcome: 'cancelled' }) === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      families = await scrape();
    }
    assert.equal(valueOf(families, 'subako_calls_total', { via: 'api', tool: 'timeout', outcome: 'cancelled' }), 1);
    assert.equal(valueOf(families, 'subako_calls_in_flight'), 0);
    for (let i = 0; i < 200 && valueOf(families, 'subako_sandbox_workers', { state: 'busy' }) !== 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      families = await scrape();
    }
    assert.equal(valueOf(families, 'subako_sandbox_workers', { state: 'idle' }), 2);
  });

  it('the access log has one JSON line per request, by route template, and no secret in anything the server wrote', async () => {
    const session = (await server.call('POST', `/v1/agents/${server.agentId}/sessions`, {})).body;
    const token: string = session.token;
    // Secrets where a careless log would pick them up: a capability URL's path, query strings, the header.
    await fetch(`${session.mcp.capability_url}?token=${token}`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    await fetch(`${server.url}/v1/health?api_key=${server.apiKey}`);
    await fetch(`${server.url}/v1/no/such/${token}`, { headers: { authorization: `Bearer ${readKey}` } });
    await makeApi(server.url, readKey).call('GET', `/v1/sessions/${session.id}`);
    // Log lines are buffered (out within 250 ms): wait for the last request's line, bounded.
    for (let i = 0; i < 100 && !server.stderr().includes('"route":"/v1/sessions/{id}"'); i++) await new Promise((r) => setTimeout(r, 50));

    const written = server.stderr();
    const lines = written.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const requests = lines.filter((line) => line.component === 'http' && line.msg === 'request');
    assert.ok(requests.length >= 10, `${requests.length} request lines`);
    for (const line of requests) {
      assert.equal(typeof line.method, 'string');
      assert.ok(line.route === null || line.route === 'console' || line.route.startsWith('/'), String(line.route));
      assert.equal(typeof line.duration_ms, 'number');
      assert.ok(line.status === null || Number.isInteger(line.status));
      assert.deepEqual(Object.keys(line).filter((k) => !['level', 'time', 'name', 'component', 'method', 'route', 'status', 'duration_ms', 'remote_address', 'aborted', 'msg', 'pid', 'hostname'].includes(k)), []);
    }
    const routes = requests.map((line) => `${line.method} ${line.route} ${line.status}`);
    assert.ok(routes.includes('POST /mcp/{token} 200'), routes.join('\n'));
    assert.ok(routes.includes('GET /v1/health 200'));
    assert.ok(routes.includes('GET null 404'), 'an unmatched path is logged without its path');
    assert.ok(routes.includes('GET /v1/sessions/{id} 200'));
    for (const secret of [token, server.apiKey, readKey, token.slice(3), server.apiKey.slice(3)]) {
      assert.ok(!written.includes(secret), 'no secret in the server\'s output');
    }
    assert.ok(!server.stdout().slice(server.stdout().indexOf('API reference')).includes(token));
  });
});
