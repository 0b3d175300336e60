/**
 * Traces across the bus: `subako serve --nats` records a call's span under the client's traceparent, and the
 * `subako worker` that runs it records the guest's run (and its egress request) as children of that span, each
 * process exporting to the same OTLP/HTTP receiver under its own service name. The worker's batch delay is a
 * minute: its spans arrive only because stopping it sends what it holds.
 *
 * Real parts only: the machine's NATS server (subjects and bucket named for this run), a serve and a worker child,
 * an OTLP/HTTP receiver and an HTTPS server on loopback, the official MCP client on the session.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, spawnServe, tempDir, TEST_KEY, type ChildServer } from '../server/helpers/harness.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { removeBuckets, runName, SHARED_NATS_URL, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { startServer as startHttps, type TestServer } from '../egress/helpers/servers.js';
import { eventually } from '../helpers/eventually.js';
import { SPAN_KIND, spanUnder, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';

const TRACE_ID = '5bf92f3577b34da6a3ce929d0e0e4737';
const CLIENT_SPAN = '10f067aa0ba902b8';

describe('a call over NATS is one trace across the replica and its worker', () => {
  const prefix = runName('subako');
  const dataDir = tempDir();
  const scratch = mkdtempSync(join(tmpdir(), 'subako-nats-traces-'));
  let serve: ChildServer;
  let worker: ChildWorker;
  let https: TestServer;
  let receiver: OtlpReceiver;
  const headersSeen: (string | undefined)[] = [];

  before(async () => {
    const caFile = join(scratch, 'ca.pem');
    writeFileSync(caFile, makeTestCa().ca);
    https = await startHttps((req, res) => {
      headersSeen.push(req.headers.traceparent as string | undefined);
      res.end('{}');
    });
    receiver = await startOtlpReceiver();
    serve = await spawnServe(dataDir, undefined, ['--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--no-examples', '--allow-private-destinations'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    worker = await spawnWorker({
      url: SHARED_NATS_URL, prefix, volumesDir: join(dataDir, 'volumes'), pool: 1, repoRoot: REPO_ROOT,
      env: { ...TEST_KEY, NODE_EXTRA_CA_CERTS: caFile, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: '60000',
        // The worker exports in JSON and the server in protobuf (the default): one trace, both encodings read back.
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' },
    });
  });

  after(async () => {
    await worker?.stop();
    if (serve) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    await removeBuckets(prefix);
    await https?.close();
    await receiver?.close();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the worker\'s guest run and egress request are children of the replica\'s call span, sent when the worker stops', async () => {
    assert.equal((await serve.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const agent = await serve.call('POST', '/v1/agents', { name: runName('agent'), tools: [{ package: 'probe', egress: { allow: [`localhost:${https.port}`] } }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await serve.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
    const client = new Client({ name: 'nats-traces-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    try {
      const result = await client.callTool({
        name: 'http', arguments: { request: { url: `https://localhost:${https.port}/t` } }, _meta: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
      });
      assert.equal(result.isError, undefined, JSON.stringify(result));
    } finally {
      await client.close();
    }
    const spans = receiver.spans;
    await eventually('the replica exports the call span', () => spans.some((s) => s.name === 'tools/call http'), (seen) => seen);
    assert.ok(!spans.some((s) => s.name === 'guest run http'), 'the worker holds its spans for its minute-long batch');
    await worker.stop();
    await eventually('the stopped worker has sent its spans', () => spans.some((s) => s.name === 'guest run http'), (seen) => seen, { ms: 10_000 });

    const call = spanUnder(spans, 'tools/call http', CLIENT_SPAN);
    assert.equal(call.traceId, TRACE_ID);
    assert.equal(call.kind, SPAN_KIND.server);
    assert.equal(call.service, 'subako');
    const run = spanUnder(spans, 'guest run http', call.spanId);
    assert.equal(run.traceId, TRACE_ID);
    assert.equal(run.service, 'subako-worker');
    const request = spanUnder(spans, 'GET', run.spanId);
    assert.equal(request.service, 'subako-worker');
    assert.deepEqual(headersSeen, [`00-${TRACE_ID}-${request.spanId}-01`]);
    assert.deepEqual(receiver.unreadable, []);
    assert.deepEqual(new Set(receiver.encodings), new Set(['application/x-protobuf', 'application/json']));
  });
});
