/**
 * Issue 29, point 6: with OTEL_EXPORTER_OTLP_ENDPOINT set, each call is a trace exported over OTLP/HTTP — the call's
 * span under the client's `_meta.traceparent`, the guest's run under it, each egress request under the run, the
 * request to a remote MCP server under its call — and the traceparent each one sends on is its own span's. A log
 * line written in a call carries the call's trace_id and span_id.
 *
 * Real parts only: a `subako serve` child (a real sandbox running the ABI probe guest), an OTLP/HTTP receiver on
 * loopback that parses what it is sent (JSON, as @opentelemetry/exporter-trace-otlp-http sends it), an HTTPS
 * server the guest is allowed to reach, a v2 McpServer upstream, and the official v2 client on the session.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { packBundle } from '../../src/package/index.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { eventually } from '../helpers/eventually.js';
import { probePackageDir, spawnServe, tempDir, type ChildServer } from './helpers/harness.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const TRACE = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;

/** A span as the OTLP/JSON encoding carries it (ids in hex), with its resource's service name. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number };
  service: unknown;
}
const SPAN_KIND = { internal: 1, server: 2, client: 3 };

let server: ChildServer;
let receiver: HttpServer;
const received: ReceivedSpan[] = [];
/** What the receiver was sent that it could not read: none expected. */
const unreadable: string[] = [];
let egress: HttpsServer;
let egressPort: number;
let upstream: { url: string; stop(): Promise<void> };
const headersSeen: (string | undefined)[] = [];
const metaSeen: unknown[] = [];
let sessionId: string;
let agentId: string;
let client: Client;

/** OTLP's attribute list as a record of plain values. */
function attributesOf(list: { key: string; value: Record<string, unknown> }[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    const [kind] = Object.keys(value);
    out[key] = kind === 'intValue' ? Number(value[kind]) : value[kind];
  }
  return out;
}

/** An ExportTraceServiceRequest (OTLP/JSON) as the spans it carries. */
function spansOf(body: unknown): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of (body as { resourceSpans: { resource?: { attributes?: never }; scopeSpans: { spans: Record<string, never>[] }[] }[] }).resourceSpans) {
    const service = attributesOf(rs.resource?.attributes)['service.name'];
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, kind: s.kind, attributes: attributesOf(s.attributes), status: s.status, service });
      }
    }
  }
  return spans;
}

function traced(): McpServer {
  const s = new McpServer({ name: 'traced', version: '1.0.0' });
  s.registerTool('ping', { inputSchema: z.object({}) }, async (_args, ctx) => {
    metaSeen.push((ctx.mcpReq._meta as Record<string, unknown> | undefined)?.traceparent);
    return { content: [{ type: 'text', text: 'pong' }] };
  });
  return s;
}

before(async () => {
  receiver = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        assert.equal(req.method, 'POST');
        assert.equal(req.url, '/v1/traces');
        assert.match(String(req.headers['content-type']), /^application\/json/);
        const raw = Buffer.concat(chunks);
        const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
        received.push(...spansOf(JSON.parse(text)));
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      } catch (err) {
        unreadable.push(String(err));
        res.statusCode = 400;
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverPort = (receiver.address() as AddressInfo).port;

  const ca = makeTestCa();
  const caFile = join(tempDir('subako-otel-ca-'), 'ca.pem');
  writeFileSync(caFile, ca.ca);
  egress = createHttpsServer({ cert: ca.cert, key: ca.key }, (req, res) => {
    headersSeen.push(req.headers.traceparent as string | undefined);
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => egress.listen(0, '127.0.0.1', resolve));
  egressPort = (egress.address() as AddressInfo).port;
  upstream = await serveMcpServer(traced);
  server = await spawnServe(tempDir(), undefined, ['--allow-private-destinations'], {
    env: {
      NODE_EXTRA_CA_CERTS: caFile,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
      OTEL_SERVICE_NAME: 'subako-under-test',
      // Batches go out every 100 ms rather than every 5 s: the test waits for them.
      OTEL_BSP_SCHEDULE_DELAY: '100',
      SUBAKO_LOG_LEVEL: 'debug',
    },
  });
  assert.equal((await server.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
  const agent = await server.call('POST', '/v1/agents', {
    name: 'traced', tools: [{ package: 'probe', egress: { allow: [`localhost:${egressPort}`] } }], mcp_servers: [{ name: 'traced', url: upstream.url }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  agentId = agent.body.id;
  const session = (await server.call('POST', `/v1/agents/${agentId}/sessions`, {})).body;
  sessionId = session.id;
  client = new Client({ name: 'otel-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
});

after(async () => {
  await client?.close();
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await upstream?.stop();
  for (const s of [egress, receiver]) {
    if (!s) continue;
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** The one received span named `name` whose parent is `parent`. */
function spanUnder(name: string, parent: string): ReceivedSpan {
  const found = received.filter((s) => s.name === name && s.parentSpanId === parent);
  assert.equal(found.length, 1, `one span ${name} under ${parent}: ${JSON.stringify(received.map((s) => [s.name, s.spanId, s.parentSpanId]))}`);
  return found[0];
}

describe('a call is a trace exported over OTLP/HTTP', () => {
  it('the call, its guest\'s run and its egress request, linked under the client\'s traceparent, and the request carries its span', async () => {
    const result = await client.callTool({ name: 'http', arguments: { request: { url: `https://localhost:${egressPort}/traced` } }, _meta: { traceparent: TRACE } });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    await eventually('the call\'s three spans are exported', () => received.length, () =>
      received.some((s) => s.name === 'tools/call http') && received.some((s) => s.name === 'guest run http') && received.some((s) => s.name === 'GET'));

    const call = spanUnder('tools/call http', CLIENT_SPAN);
    assert.equal(call.traceId, TRACE_ID);
    assert.equal(call.kind, SPAN_KIND.server);
    assert.equal(call.service, 'subako-under-test');
    assert.equal(call.attributes['subako.tool'], 'http');
    assert.equal(call.attributes['subako.session'], sessionId);
    assert.equal(call.attributes['subako.agent'], agentId);
    assert.equal(call.attributes['subako.call.outcome'], 'ok');
    assert.match(String(call.attributes['subako.call.id']), /^call_/);

    const run = spanUnder('guest run http', call.spanId);
    assert.equal(run.traceId, TRACE_ID);
    assert.equal(run.attributes['subako.package'], 'probe');
    assert.equal(run.attributes['subako.call.outcome'], 'ok');

    const request = spanUnder('GET', run.spanId);
    assert.equal(request.traceId, TRACE_ID);
    assert.equal(request.kind, SPAN_KIND.client);
    assert.equal(request.attributes['http.response.status_code'], 200);
    assert.equal(request.attributes['url.full'], `https://localhost:${egressPort}/traced`);
    // The HTTPS server heard the egress request's own span as its parent.
    assert.deepEqual(headersSeen, [`00-${TRACE_ID}-${request.spanId}-01`]);

    // The call record keeps the trace context the client sent.
    const calls = (await server.call('GET', `/v1/sessions/${sessionId}/calls`)).body.items as Record<string, unknown>[];
    assert.equal(calls.find((c) => c.id === call.attributes['subako.call.id'])?.traceparent, TRACE);

    // A log line written in the call carries the call's trace and span.
    const line = await eventually('the call\'s log line is written', () => server.stderr().split('\n').filter((l) => l.includes('"call ended"')).map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.callId === call.attributes['subako.call.id']), (l) => l !== undefined);
    assert.equal(line!.trace_id, TRACE_ID);
    assert.equal(line!.span_id, call.spanId);
  });

  it('the request to a remote MCP server is a span under its call, and the server receives that span as its parent', async () => {
    metaSeen.length = 0;
    const result = await client.callTool({ name: 'ping', arguments: {}, _meta: { traceparent: TRACE } });
    assert.equal((result.content as { text: string }[])[0].text, 'pong');
    await eventually('the ping call\'s spans are exported', () => received.filter((s) => s.name === 'tools/call ping').length, (n) => n === 2);

    const call = spanUnder('tools/call ping', CLIENT_SPAN);
    assert.equal(call.kind, SPAN_KIND.server);
    assert.equal(call.attributes['subako.call.outcome'], 'ok');
    const request = spanUnder('tools/call ping', call.spanId);
    assert.equal(request.traceId, TRACE_ID);
    assert.equal(request.kind, SPAN_KIND.client);
    assert.equal(request.attributes['mcp.method.name'], 'tools/call');
    assert.equal(request.attributes['server.address'], new URL(upstream.url).hostname);
    assert.deepEqual(metaSeen, [`00-${TRACE_ID}-${request.spanId}-01`]);
  });

  it('a call without a traceparent starts a trace of its own, and what it sends on belongs to it', async () => {
    metaSeen.length = 0;
    await client.callTool({ name: 'ping', arguments: {} });
    await eventually('the untraced ping\'s spans are exported', () => received.filter((s) => s.name === 'tools/call ping' && s.traceId !== TRACE_ID).length, (n) => n === 2);
    const call = received.find((s) => s.name === 'tools/call ping' && s.traceId !== TRACE_ID && s.parentSpanId === undefined)!;
    assert.ok(call, 'the call span is a root');
    const request = spanUnder('tools/call ping', call.spanId);
    assert.equal(request.traceId, call.traceId);
    assert.deepEqual(metaSeen, [`00-${call.traceId}-${request.spanId}-01`]);
    assert.deepEqual(unreadable, []);
  });
});
