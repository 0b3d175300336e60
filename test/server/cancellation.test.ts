/**
 * Cancellation end to end (issue 12, point 2): a client that goes away mid-call — a real HTTP client aborting
 * a REST call, an MCP client aborting its request — leaves the call logged `cancelled` (not a `timeout`
 * crash), the run stopped long before its deadline, and the next call served. A remote MCP tool's call
 * cancelled the same way keeps the pooled connection to that server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createToolboxHandler } from '../../src/mcp/toolbox-handler.js';
import { defineTool } from '../../src/mcp/define-tool.js';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, startInProcess, type InProcess } from './helpers/harness.js';

const DEADLINE_MS = 30_000;
let s: InProcess;
let remote: Server;
let remoteUrl: string;
/** Resolves the remote `slow` tool's pending calls (so the server side never waits out a test). */
const releaseSlow: (() => void)[] = [];

before(async () => {
  s = await startInProcess({ limits: { callTimeoutMs: DEADLINE_MS } });
  assert.equal((await s.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
  const toolbox = {
    slow: defineTool({
      name: 'slow', inputSchema: { type: 'object' },
      handler: (_args, ctx) => new Promise<string>((resolve) => {
        releaseSlow.push(() => resolve('late'));
        ctx.signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
      }),
    }),
    quick: defineTool({ name: 'quick', inputSchema: { type: 'object' }, handler: () => 'quick' }),
  };
  const handler = toNodeHandler({ fetch: createToolboxHandler(toolbox) });
  remote = createServer((req, res) => { void handler(req, res); });
  await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/mcp`;
});
after(async () => {
  for (const release of releaseSlow.splice(0)) release();
  await s.close();
  remote.closeAllConnections();
  remote.close();
});

async function newSession(body: Record<string, unknown>): Promise<{ id: string; mcpUrl: string }> {
  const agent = await s.call('POST', '/v1/agents', { name: `c-${Math.random().toString(36).slice(2)}`, ...body });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
  return { id: session.id, mcpUrl: session.mcp.capability_url };
}

type Logged = { tool: string; via: string; outcome: string; crash: unknown; duration_ms: number | null };
const callLog = async (sessionId: string): Promise<Logged[]> => (await s.call('GET', `/v1/sessions/${sessionId}/calls`)).body.items;

/** Polls the call log until `check` holds (bounded: a call that is never logged fails the test, it does not hang it). */
async function waitForLog(sessionId: string, check: (calls: Logged[]) => boolean, what: string): Promise<Logged[]> {
  for (let i = 0; i < 200; i += 1) {
    const calls = await callLog(sessionId);
    if (check(calls)) return calls;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the call log never showed ${what}: ${JSON.stringify(await callLog(sessionId))}`);
}

const restCall = (sessionId: string, tool: string, signal?: AbortSignal) =>
  fetch(`${s.url}/v1/sessions/${sessionId}/calls`, {
    method: 'POST', signal,
    headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool, arguments: {} }),
  });

/** Aborts once the call log shows the call running (and the run has had a moment to start). */
async function abortWhenRunning(sessionId: string, controller: AbortController): Promise<void> {
  await waitForLog(sessionId, (calls) => calls.some((c) => c.outcome === 'running'), 'the call running');
  await new Promise((r) => setTimeout(r, 150));
  controller.abort();
}

describe('a client that goes away mid-call', () => {
  it('a REST client aborting: the function call is logged cancelled, its run stopped, the next call served', async () => {
    const session = await newSession({ tools: [{ package: 'probe' }] });
    const controller = new AbortController();
    const call = restCall(session.id, 'timeout', controller.signal);
    await abortWhenRunning(session.id, controller);
    await assert.rejects(call, { name: 'AbortError' });
    const [logged] = await waitForLog(session.id, (calls) => calls[0]?.outcome !== 'running', 'the call ended');
    assert.equal(logged.outcome, 'cancelled');
    assert.equal(logged.crash, null);
    assert.ok((logged.duration_ms ?? DEADLINE_MS) < DEADLINE_MS / 2, `the run went on towards its deadline: ${logged.duration_ms} ms`);
    const next = await (await restCall(session.id, 'echo')).json();
    assert.equal(next.call.outcome, 'ok');
  });

  it('an MCP client aborting: the function call is logged cancelled, its run stopped, the next call served', async () => {
    const session = await newSession({ tools: [{ package: 'probe' }] });
    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcpUrl)));
    try {
      const controller = new AbortController();
      const call = client.callTool({ name: 'timeout', arguments: {} }, { signal: controller.signal });
      await abortWhenRunning(session.id, controller);
      await assert.rejects(call);
      const [logged] = await waitForLog(session.id, (calls) => calls[0]?.outcome !== 'running', 'the call ended');
      assert.equal(logged.via, 'mcp');
      assert.equal(logged.outcome, 'cancelled');
      assert.ok((logged.duration_ms ?? DEADLINE_MS) < DEADLINE_MS / 2, `the run went on towards its deadline: ${logged.duration_ms} ms`);
      const next = (await client.callTool({ name: 'echo', arguments: { again: true } })) as { isError?: boolean };
      assert.notEqual(next.isError, true);
    } finally {
      await client.close();
    }
  });

  it('a remote MCP tool\'s call cancelled by its REST client is logged cancelled and keeps the pooled connection', async () => {
    const session = await newSession({ mcp_servers: [{ name: 'remote', url: remoteUrl }] });
    // Warm the connection, then count: a dropped connection would make the next call connect again.
    assert.equal((await (await restCall(session.id, 'quick')).json()).call.outcome, 'ok');
    const connects = s.remotePool.connectsMade;
    const controller = new AbortController();
    const call = restCall(session.id, 'slow', controller.signal);
    await abortWhenRunning(session.id, controller);
    await assert.rejects(call, { name: 'AbortError' });
    const calls = await waitForLog(session.id, (c) => c[1]?.outcome !== undefined && c[1].outcome !== 'running', 'the call ended');
    assert.equal(calls[1].tool, 'slow');
    assert.equal(calls[1].outcome, 'cancelled');
    assert.equal((await (await restCall(session.id, 'quick')).json()).call.outcome, 'ok');
    assert.equal(s.remotePool.connectsMade, connects, 'the cancelled call dropped the pooled connection');
  });
});
