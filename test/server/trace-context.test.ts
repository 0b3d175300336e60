/**
 * Issue 27, point 7: a W3C `traceparent` in a request's `_meta` follows the call — into its record in the call log,
 * into the `_meta` of the request a remote tool's server receives, and into the `traceparent` header of each HTTP
 * request a function package makes through subako_http (unless the guest sent one of its own). One that is not a
 * valid trace context goes nowhere.
 *
 * Real parts only: a `subako serve` child (a real sandbox running the ABI probe guest), an HTTPS server on loopback
 * that the guest is allowed to reach, a v2 McpServer upstream, and the official v2 client on the session.
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
import { probePackageDir, spawnServe, tempDir, type ChildServer } from './helpers/harness.js';

const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const GUEST_TRACE = '00-11111111111111111111111111111111-2222222222222222-01';

let server: ChildServer;
let egress: HttpsServer;
let egressPort: number;
let upstream: { url: string; stop(): Promise<void> };
/** The traceparent header of each request the egress server got. */
const headersSeen: (string | undefined)[] = [];
/** The `_meta.traceparent` of each tools/call the upstream got. */
const metaSeen: unknown[] = [];
let sessionId: string;
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
  const ca = makeTestCa();
  const caFile = join(tempDir('subako-trace-ca-'), 'ca.pem');
  writeFileSync(caFile, ca.ca);
  egress = createHttpsServer({ cert: ca.cert, key: ca.key }, (req, res) => {
    headersSeen.push(req.headers.traceparent as string | undefined);
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => egress.listen(0, '127.0.0.1', resolve));
  egressPort = (egress.address() as AddressInfo).port;
  upstream = await serveMcpServer(traced);
  server = await spawnServe(tempDir(), undefined, ['--allow-private-destinations'], { env: { NODE_EXTRA_CA_CERTS: caFile } });
  assert.equal((await server.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
  const agent = await server.call('POST', '/v1/agents', {
    name: 'traced', tools: [{ package: 'probe', egress: { allow: [`localhost:${egressPort}`] } }], mcp_servers: [{ name: 'traced', url: upstream.url }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = (await server.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
  sessionId = session.id;
  client = new Client({ name: 'trace-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
});

after(async () => {
  await client?.close();
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await upstream?.stop();
  if (egress) {
    egress.closeAllConnections();
    await new Promise((resolve) => egress.close(resolve));
  }
});

const fetchUrl = () => `https://localhost:${egressPort}/traced`;

async function lastRecord(tool: string): Promise<Record<string, unknown>> {
  const calls = (await server.call('GET', `/v1/sessions/${sessionId}/calls`)).body.items as Record<string, unknown>[];
  return calls.filter((c) => c.tool === tool).at(-1)!;
}

describe('a request\'s traceparent follows its call', () => {
  it('into the guest\'s HTTP requests as the traceparent header, and into the call\'s record', async () => {
    headersSeen.length = 0;
    const result = await client.callTool({ name: 'http', arguments: { request: { url: fetchUrl() } }, _meta: { traceparent: TRACE } });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.deepEqual(headersSeen, [TRACE]);
    assert.equal((await lastRecord('http')).traceparent, TRACE);
  });

  it('a guest that sends a traceparent of its own keeps it', async () => {
    headersSeen.length = 0;
    await client.callTool({ name: 'http', arguments: { request: { url: fetchUrl(), headers: { traceparent: GUEST_TRACE } } }, _meta: { traceparent: TRACE } });
    assert.deepEqual(headersSeen, [GUEST_TRACE]);
  });

  it('into the _meta of the request a remote tool\'s server receives', async () => {
    metaSeen.length = 0;
    const result = await client.callTool({ name: 'ping', arguments: {}, _meta: { traceparent: TRACE } });
    assert.equal((result.content as { text: string }[])[0].text, 'pong');
    assert.deepEqual(metaSeen, [TRACE]);
    assert.equal((await lastRecord('ping')).traceparent, TRACE);
  });

  it('one that is not a valid trace context goes nowhere, and a call without one carries none', async () => {
    headersSeen.length = 0;
    metaSeen.length = 0;
    const invalid = '00-00000000000000000000000000000000-00f067aa0ba902b7-01';
    await client.callTool({ name: 'http', arguments: { request: { url: fetchUrl() } }, _meta: { traceparent: invalid } });
    await client.callTool({ name: 'ping', arguments: {}, _meta: { traceparent: 'x\r\ninjected: 1' } });
    await client.callTool({ name: 'ping', arguments: {} });
    assert.deepEqual(headersSeen, [undefined]);
    assert.deepEqual(metaSeen, [undefined, undefined]);
    assert.equal((await lastRecord('http')).traceparent, undefined);
    assert.equal((await lastRecord('ping')).traceparent, undefined);
  });
});
