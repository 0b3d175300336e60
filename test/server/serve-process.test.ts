/**
 * Against a real `subako serve` process: the official v2 client and a 2025-era client list and call an
 * agent's tools through a session's MCP URLs; killing the server mid-work and starting it again loses no
 * package, agent, vault, session or call record.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, spawnServe, tempDir, type ChildServer } from './helpers/harness.js';

describe('a session\'s MCP endpoint, served by `subako serve`', () => {
  let server: ChildServer;
  let session: { id: string; token: string; mcp: { capability_url: string; url: string; authorization: string } };

  before(async () => {
    server = await spawnServe(tempDir());
    assert.ok(server.agentId, 'the first start creates a demo agent');
    session = (await server.call('POST', `/v1/agents/${server.agentId}/sessions`, {})).body;
  });
  after(async () => {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });

  it('the official v2 client lists and calls the tools through the capability URL (2026-07-28)', async () => {
    const client = new Client({ name: 'v2-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['greet']);
      const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
      assert.deepEqual(result.structuredContent, { message: 'Hello, Ada!' });
    } finally {
      await client.close();
    }
  });

  it('a 2025-era client (the v1 SDK) lists and calls the tools through the API URL with the session token', async () => {
    const client = new LegacyClient({ name: 'v1-test', version: '1' });
    await client.connect(new LegacyTransport(new URL(session.mcp.url), { requestInit: { headers: { authorization: session.mcp.authorization } } }));
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ['greet']);
      const result = await client.callTool({ name: 'greet', arguments: { name: 'Bo' } });
      assert.deepEqual(result.structuredContent, { message: 'Hello, Bo!' });
    } finally {
      await client.close();
    }
  });

  it('logs every MCP call', async () => {
    const calls = (await server.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
    const viaMcp = calls.filter((c: { via: string }) => c.via === 'mcp');
    assert.deepEqual(viaMcp.map((c: { arguments: unknown }) => c.arguments), [{ name: 'Ada' }, { name: 'Bo' }]);
    assert.ok(viaMcp.every((c: { outcome: string }) => c.outcome === 'ok'));
  });

  it('refuses the API URL without the session token, and an unknown capability URL', async () => {
    const denied = await fetch(session.mcp.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${server.apiKey}` }, body: '{}' });
    assert.equal(denied.status, 401);
    const unknown = await fetch(`${server.url}/mcp/st_notarealtokenatall`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unknown.status, 404);
  });
});

describe('restarting the server', () => {
  it('loses no package, agent, vault, session or call record, even when killed mid-call', async () => {
    const dataDir = tempDir();
    const first = await spawnServe(dataDir);
    const api = first;
    assert.equal((await api.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const vault = (await api.call('POST', '/v1/vaults', { name: 'keep' })).body;
    await api.call('POST', `/v1/vaults/${vault.id}/credentials`, { target: 'https://api.example.com', payload: { auth_scheme: 'static_bearer', token: 'tok-kept-123' } });
    const agent = (await api.call('POST', '/v1/agents', { name: 'durable', tools: [{ package: 'probe' }, { package: 'greet' }] })).body;
    const session = (await api.call('POST', `/v1/agents/${agent.id}/sessions`, { vault_ids: [vault.id] })).body;
    const done = await api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'Ada' } });
    assert.equal(done.body.call.outcome, 'ok');
    // A call that hangs until its deadline: the server is killed while it runs.
    const hanging = api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'timeout', arguments: {} }).catch(() => null);
    for (let i = 0; i < 100; i += 1) {
      const calls = (await api.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
      if (calls.length === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    first.child.kill('SIGKILL');
    await first.exited;
    await hanging;

    const second = await spawnServe(dataDir, first.apiKey);
    try {
      assert.doesNotMatch(second.stdout(), /First start/);
      const packages = (await second.call('GET', '/v1/packages')).body.items.map((p: { name: string; version: string }) => `${p.name}@${p.version}`);
      assert.deepEqual(packages.sort(), ['greet@1.0.0', 'probe@1.0.0']);
      assert.equal((await second.call('GET', `/v1/agents/${agent.id}`)).body.name, 'durable');
      assert.equal((await second.call('GET', `/v1/vaults/${vault.id}/credentials`)).body.items.length, 1);
      assert.equal((await second.call('GET', `/v1/sessions/${session.id}`)).status, 200);
      const calls = (await second.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
      assert.deepEqual(calls.map((c: { tool: string; outcome: string }) => `${c.tool}:${c.outcome}`), ['greet:ok', 'timeout:unknown']);
      assert.equal(calls[1].crash.reason, 'interrupted');
      // The session still works, with the same token, and its vault credential still opens.
      const again = await second.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'Cy' } });
      assert.deepEqual(again.body.result.structuredContent, { message: 'Hello, Cy!' });
      const client = new Client({ name: 'after-restart', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url.replace(first.url, second.url))));
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'greet'));
      await client.close();
    } finally {
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);
    }
  });
});
