/**
 * Sessions on the in-process server: volumes (each session its own /volume/tmp, the agent's /volume/data
 * shared), skills mounted, calls concurrent across sessions, a hanging package not disturbing others, and
 * remote MCP servers joined into the toolbox with policies, vault credentials and the naming rule.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createToolboxHandler } from '../../src/mcp/toolbox-handler.js';
import { defineTool } from '../../src/mcp/define-tool.js';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, skillDir, startInProcess, type InProcess } from './helpers/harness.js';
import { SteppedClock } from '../helpers/clock.js';

let s: InProcess;
/** Moved forward to expire a session, rather than waiting its TTL out. */
const clock = new SteppedClock();
let agentId: string;
const text = (res: { body: any }): string => res.body.result.content.map((b: { text?: string }) => b.text ?? '').join('');

before(async () => {
  s = await startInProcess({ limits: { callTimeoutMs: 3_000 }, clock });
  assert.equal((await s.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
  assert.equal((await s.call('POST', '/v1/skills', await packBundle(skillDir('howto')))).status, 201);
  const agent = await s.call('POST', '/v1/agents', { name: 'files', tools: [{ package: 'probe', data: true }], skills: [{ name: 'howto' }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  agentId = agent.body.id;
});
after(async () => { await s.close(); });

const newSession = async (id = agentId) => (await s.call('POST', `/v1/agents/${id}/sessions`, {})).body;
const call = (sessionId: string, tool: string, args: Record<string, unknown>) => s.call('POST', `/v1/sessions/${sessionId}/calls`, { tool, arguments: args });

describe('volumes', () => {
  it('a session\'s guests see only that session\'s /volume/tmp', async () => {
    const a = await newSession();
    const b = await newSession();
    assert.match(text(await call(a.id, 'write_file', { path: '/volume/tmp/note.txt', text: 'from a' })), /^wrote /);
    assert.match(text(await call(a.id, 'read_file', { path: '/volume/tmp/note.txt' })), /from a/);
    assert.match(text(await call(b.id, 'read_file', { path: '/volume/tmp/note.txt' })), /^cannot read/);
  });

  it('/volume/data belongs to the agent and persists across its sessions', async () => {
    const a = await newSession();
    await call(a.id, 'write_file', { path: '/volume/data/kept.txt', text: 'kept across sessions' });
    const b = await newSession();
    assert.match(text(await call(b.id, 'read_file', { path: '/volume/data/kept.txt' })), /kept across sessions/);
  });

  it('deleting a session removes its /volume/tmp and its call records', async () => {
    const a = await newSession();
    await call(a.id, 'write_file', { path: '/volume/tmp/x.txt', text: 'x' });
    const dir = join(s.dataDir, 'volumes', 'sessions', a.id);
    assert.ok(existsSync(dir));
    assert.equal((await s.call('DELETE', `/v1/sessions/${a.id}`)).status, 204);
    assert.equal(existsSync(dir), false);
    assert.equal((await s.call('GET', `/v1/sessions/${a.id}/calls`)).status, 404);
  });

  it('a session that expires is gone, with its volume', async () => {
    const short = (await s.call('POST', `/v1/agents/${agentId}/sessions`, { ttl_seconds: 1 })).body;
    assert.equal((await s.call('GET', `/v1/sessions/${short.id}`)).status, 200, 'alive within its TTL');
    clock.advance(1_001);
    assert.equal((await s.call('GET', `/v1/sessions/${short.id}`)).status, 404);
    assert.equal(await s.server.platform.sessions.sweepExpired() >= 1, true);
    assert.equal(existsSync(join(s.dataDir, 'volumes', 'sessions', short.id)), false);
  });

  it('skills are mounted read-only under /skills/<name>', async () => {
    const a = await newSession();
    assert.match(text(await call(a.id, 'read_file', { path: '/skills/howto/SKILL.md' })), /A test skill/);
    assert.match(text(await call(a.id, 'write_file', { path: '/skills/howto/SKILL.md', text: 'x' })), /^cannot write/);
  });
});

describe('calls', () => {
  it('a hanging package does not hold up a call in another session; it ends as a logged crash', async () => {
    const a = await newSession();
    const b = await newSession();
    const order: string[] = [];
    const hanging = call(a.id, 'timeout', {}).then((res) => { order.push('timeout'); return res; });
    const quick = call(b.id, 'echo', { hello: 'there' }).then((res) => { order.push('echo'); return res; });
    const [slow, fast] = await Promise.all([hanging, quick]);
    assert.deepEqual(order, ['echo', 'timeout']);
    assert.equal(fast.body.call.outcome, 'ok');
    assert.equal(slow.body.call.outcome, 'crash');
    assert.equal(slow.body.call.crash.reason, 'timeout');
    assert.equal(slow.body.result.isError, true);
  });

  it('pages through the call log with limit and after', async () => {
    const a = await newSession();
    for (let i = 0; i < 3; i += 1) await call(a.id, 'echo', { i });
    const first = (await s.call('GET', `/v1/sessions/${a.id}/calls?limit=2`)).body;
    assert.equal(first.items.length, 2);
    const second = (await s.call('GET', `/v1/sessions/${a.id}/calls?limit=2&after=${first.next_cursor}`)).body;
    assert.deepEqual([...first.items, ...second.items].map((c: { arguments: { i: number } }) => c.arguments.i), [0, 1, 2]);
    assert.equal(second.next_cursor, null);
  });

  it('the session token opens its own call routes, and no other session\'s', async () => {
    const a = await newSession();
    const b = await newSession();
    const own = await fetch(`${s.url}/v1/sessions/${a.id}/calls`, { headers: { authorization: `Bearer ${a.token}` } });
    assert.equal(own.status, 200);
    const other = await fetch(`${s.url}/v1/sessions/${b.id}/calls`, { headers: { authorization: `Bearer ${a.token}` } });
    assert.equal(other.status, 401);
  });

  it('a function package gets arguments as they are (its guest validates); the call is logged once', async () => {
    const a = await newSession();
    const res = await call(a.id, 'read_file', { path: 42 });
    assert.equal(res.status, 200);
    assert.notEqual(res.body.call.outcome, 'invalid_arguments');
    assert.equal((await s.call('GET', `/v1/sessions/${a.id}/calls`)).body.items.length, 1);
  });
});

describe('remote MCP servers in an agent', () => {
  let remote: Server;
  let remoteUrl: string;
  const TOKEN = 'remote-secret-token-0042';

  before(async () => {
    const toolbox = {
      greet: defineTool({ name: 'greet', inputSchema: { type: 'object' }, handler: () => 'remote hello' }),
      add: defineTool({
        name: 'add', inputSchema: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] },
        handler: (args: { x: number; y: number }) => ({ sum: args.x + args.y }),
      }),
      whoami: defineTool({ name: 'whoami', inputSchema: { type: 'object' }, handler: (_args, ctx) => `seen: ${String((ctx as { authorization?: string }).authorization ?? seenAuth)}` }),
      hidden: defineTool({ name: 'hidden', inputSchema: { type: 'object' }, handler: () => 'should not be reachable' }),
    };
    let seenAuth = '';
    const handler = toNodeHandler({ fetch: createToolboxHandler(toolbox) });
    remote = createServer((req, res) => {
      seenAuth = String(req.headers.authorization ?? '');
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401).end();
        return;
      }
      void handler(req, res);
    });
    await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
    remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/mcp`;
  });
  after(() => { remote.close(); });

  it('joins the allowed remote tools, prefixes colliding names with the source name, and authenticates from the vault', async () => {
    const vault = (await s.call('POST', '/v1/vaults', { name: 'remote' })).body;
    await s.call('POST', `/v1/vaults/${vault.id}/credentials`, { target: remoteUrl, payload: { auth_scheme: 'static_bearer', token: TOKEN } });
    const agent = await s.call('POST', '/v1/agents', {
      name: 'mixed',
      tools: [{ package: 'greet' }],
      mcp_servers: [{ name: 'remote', url: remoteUrl, credential: { vault_id: vault.id }, default_policy: 'allow', tools: [{ name: 'hidden', policy: 'deny' }] }],
    });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
    const tools = (await s.call('GET', `/v1/sessions/${session.id}/tools`)).body;
    assert.deepEqual(tools.items.map((t: { name: string }) => t.name), ['greet__greet', 'remote__greet', 'add', 'whoami']);

    const sum = await call(session.id, 'add', { x: 19, y: 23 });
    assert.deepEqual(sum.body.result.structuredContent, { sum: 42 });
    assert.equal(text(await call(session.id, 'remote__greet', {})), 'remote hello');
    assert.match(text(await call(session.id, 'greet__greet', { name: 'Ada' })), /Hello, Ada!/);

    // Over MCP too, with the same names.
    const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['greet__greet', 'remote__greet', 'add', 'whoami']);
    assert.equal((await client.callTool({ name: 'hidden', arguments: {} }).catch(() => ({ isError: true }))).isError, true);
    await client.close();
  });

  it('never logs a credential: a secret echoed back is redacted in the call record', async () => {
    const vault = (await s.call('POST', '/v1/vaults', { name: 'remote2' })).body;
    await s.call('POST', `/v1/vaults/${vault.id}/credentials`, { target: remoteUrl, payload: { auth_scheme: 'static_bearer', token: TOKEN } });
    const agent = (await s.call('POST', '/v1/agents', { name: 'echoer', mcp_servers: [{ name: 'remote', url: remoteUrl, credential: { vault_id: vault.id } }] })).body;
    const session = (await s.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    await call(session.id, 'whoami', { note: `my token is ${TOKEN}` });
    const [record] = (await s.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
    assert.equal(JSON.stringify(record).includes(TOKEN), false);
    assert.match(JSON.stringify(record), /redacted/);
  });

  it('an unreachable remote server leaves its tools out with a warning, and the rest still works', async () => {
    // follow: a server whose definitions are pinned must answer when the agent is published (pinned-definitions.test.ts).
    const agent = (await s.call('POST', '/v1/agents', { name: 'partial', tools: [{ package: 'greet' }], mcp_servers: [{ name: 'gone', url: 'http://127.0.0.1:9/mcp', definitions: 'follow' }] })).body;
    const session = (await s.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    const tools = (await s.call('GET', `/v1/sessions/${session.id}/tools`)).body;
    assert.deepEqual(tools.items.map((t: { name: string }) => t.name), ['greet']);
    assert.match(tools.warnings[0], /gone/);
  });
});

describe('agent versions', () => {
  it('every change publishes a new version; a session stays on the version it started with', async () => {
    const agent = (await s.call('POST', '/v1/agents', { name: 'v', tools: [{ package: 'greet' }] })).body;
    const session = (await s.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    const updated = await s.call('PUT', `/v1/agents/${agent.id}`, { name: 'v', tools: [{ package: 'probe' }] });
    assert.equal(updated.body.version, 2);
    assert.equal((await s.call('GET', `/v1/agents/${agent.id}/versions`)).body.items.length, 2);
    const tools = (await s.call('GET', `/v1/sessions/${session.id}/tools`)).body.items.map((t: { name: string }) => t.name);
    assert.deepEqual(tools, ['greet']);
    const fresh = (await s.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    assert.equal(fresh.agent_version, 2);
    assert.equal((await s.call('GET', `/v1/agents/${agent.id}/versions/1`)).body.spec.tools[0].version, '1.0.0');
  });
});

describe('deleting an agent', () => {
  it('removes its sessions, their volumes and its /volume/data, and frees the package versions it held', async () => {
    const dir = probePackageDir('2.0.0');
    assert.equal((await s.call('POST', '/v1/packages', await packBundle(dir))).status, 201);
    const agent = (await s.call('POST', '/v1/agents', { name: 'doomed', tools: [{ package: 'probe', version: '2.0.0', data: true }] })).body;
    const session = (await s.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    await call(session.id, 'write_file', { path: '/volume/data/d.txt', text: 'd' });
    assert.equal((await s.call('DELETE', '/v1/packages/probe/versions/2.0.0')).status, 409);
    assert.equal((await s.call('DELETE', `/v1/agents/${agent.id}`)).status, 204);
    assert.equal((await s.call('GET', `/v1/sessions/${session.id}`)).status, 404);
    assert.equal((await fetch(session.mcp.capability_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 404);
    assert.equal(existsSync(join(s.dataDir, 'volumes', 'sessions', session.id)), false);
    assert.equal(existsSync(join(s.dataDir, 'volumes', 'agents', agent.id)), false);
    assert.equal((await s.call('DELETE', '/v1/packages/probe/versions/2.0.0')).status, 204);
  });
});
