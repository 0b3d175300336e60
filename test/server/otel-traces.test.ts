/**
 * Issue 29, point 6: with OTEL_EXPORTER_OTLP_ENDPOINT set, each call is a trace exported over OTLP/HTTP — the call's
 * span under the client's `_meta.traceparent`, the guest's run under it, each egress request under the run, the
 * request to a remote MCP server under its call — and the traceparent each one sends on is its own span's. A log
 * line written in a call carries the call's trace_id and span_id.
 *
 * Real parts only: a `subako serve` child (a real sandbox running the ABI probe guest), an OTLP/HTTP receiver on
 * loopback that parses what it is sent (protobuf, the default encoding), an HTTPS
 * server the guest is allowed to reach, a v2 McpServer upstream, and the official v2 client on the session.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { packBundle } from '../../src/package/index.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { eventually } from '../helpers/eventually.js';
import { SPAN_KIND, spanUnder, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { probePackageDir, spawnServe, tempDir, type ChildServer } from './helpers/harness.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const TRACE = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;

let server: ChildServer;
let receiver: OtlpReceiver;
let egress: HttpsServer;
let egressPort: number;
let upstream: { url: string; stop(): Promise<void> };
const headersSeen: (string | undefined)[] = [];
const metaSeen: unknown[] = [];
let sessionId: string;
let agentId: string;
let client: Client;

function traced(): McpServer {
  const s = new McpServer({ name: 'traced', version: '1.0.0' });
  s.registerTool('ping', { inputSchema: z.object({}) }, async (_args, ctx) => {
    metaSeen.push((ctx.mcpReq._meta as Record<string, unknown> | undefined)?.traceparent);
    return { content: [{ type: 'text', text: 'pong' }] };
  });
  return s;
}

before(async () => {
  receiver = await startOtlpReceiver();

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
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
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
  await receiver?.close();
  if (egress) {
    egress.closeAllConnections();
    await new Promise((resolve) => egress.close(resolve));
  }
});

const spans = (): ReceivedSpan[] => receiver.spans;

describe('a call is a trace exported over OTLP/HTTP', () => {
  it('the call, its guest\'s run and its egress request, linked under the client\'s traceparent, and the request carries its span', async () => {
    const result = await client.callTool({ name: 'http', arguments: { request: { url: `https://localhost:${egressPort}/traced` } }, _meta: { traceparent: TRACE } });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    await eventually('the call\'s three spans are exported', () => spans().length, () =>
      spans().some((s) => s.name === 'tools/call http') && spans().some((s) => s.name === 'guest run http') && spans().some((s) => s.name === 'GET'));

    const call = spanUnder(spans(), 'tools/call http', CLIENT_SPAN);
    assert.equal(call.traceId, TRACE_ID);
    assert.equal(call.kind, SPAN_KIND.server);
    assert.equal(call.service, 'subako-under-test');
    assert.equal(call.attributes['subako.tool'], 'http');
    assert.equal(call.attributes['subako.session'], sessionId);
    assert.equal(call.attributes['subako.agent'], agentId);
    assert.equal(call.attributes['subako.call.outcome'], 'ok');
    assert.match(String(call.attributes['subako.call.id']), /^call_/);

    const run = spanUnder(spans(), 'guest run http', call.spanId);
    assert.equal(run.traceId, TRACE_ID);
    assert.equal(run.attributes['subako.package'], 'probe');
    assert.equal(run.attributes['subako.call.outcome'], 'ok');

    const request = spanUnder(spans(), 'GET', run.spanId);
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
    await eventually('the ping call\'s spans are exported', () => spans().filter((s) => s.name === 'tools/call ping').length, (n) => n === 2);

    const call = spanUnder(spans(), 'tools/call ping', CLIENT_SPAN);
    assert.equal(call.kind, SPAN_KIND.server);
    assert.equal(call.attributes['subako.call.outcome'], 'ok');
    const request = spanUnder(spans(), 'tools/call ping', call.spanId);
    assert.equal(request.traceId, TRACE_ID);
    assert.equal(request.kind, SPAN_KIND.client);
    assert.equal(request.attributes['mcp.method.name'], 'tools/call');
    assert.equal(request.attributes['server.address'], new URL(upstream.url).hostname);
    assert.deepEqual(metaSeen, [`00-${TRACE_ID}-${request.spanId}-01`]);
  });

  it('a call without a traceparent starts a trace of its own, and what it sends on belongs to it', async () => {
    metaSeen.length = 0;
    await client.callTool({ name: 'ping', arguments: {} });
    await eventually('the untraced ping\'s spans are exported', () => spans().filter((s) => s.name === 'tools/call ping' && s.traceId !== TRACE_ID).length, (n) => n === 2);
    const call = spans().find((s) => s.name === 'tools/call ping' && s.traceId !== TRACE_ID && s.parentSpanId === undefined)!;
    assert.ok(call, 'the call span is a root');
    const request = spanUnder(spans(), 'tools/call ping', call.spanId);
    assert.equal(request.traceId, call.traceId);
    assert.deepEqual(metaSeen, [`00-${call.traceId}-${request.spanId}-01`]);
    assert.deepEqual(receiver.unreadable, []);
    // Nothing asked for an encoding: the specification's default, protobuf.
    assert.deepEqual(new Set(receiver.encodings), new Set(['application/x-protobuf']));
  });
});
