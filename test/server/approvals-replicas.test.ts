/**
 * Issue 16, held approvals across replicas: two `subako serve` replicas (each its own data directory, one
 * PostgreSQL database, one sealing key) behind an imagined load balancer. A call held on replica A is listed on
 * replica B and decided through B: the call then runs (or not) on A, with the right outcome, and a second
 * decision, on either, is 409. A session deleted through B ends A's held call. An elicited approval spent on A
 * is refused on B: single use holds across replicas, not per process.
 *
 * Real parts only: the platform servers in this process on the machine's PostgreSQL (a database of this run's
 * own), a v2 McpServer upstream on loopback, and the official v2 client SDK.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import * as z from 'zod';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { makeApi, type Api, startReplica } from './helpers/harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import type { SubakoServer } from '../../src/server/index.js';

const received: { tool: string; args: Record<string, unknown> }[] = [];
let upstream: { url: string; stop(): Promise<void> };
let db: TestDatabase;
let servers: SubakoServer[] = [];
let a: Api;
let b: Api;

function files(): McpServer {
  const server = new McpServer({ name: 'files', version: '1.0.0' });
  server.registerTool('delete_file', { description: 'deletes', inputSchema: z.object({ path: z.string() }) }, async (args) => {
    received.push({ tool: 'delete_file', args: args as Record<string, unknown> });
    return { content: [{ type: 'text', text: `delete_file done: ${JSON.stringify(args)}` }] };
  });
  return server;
}

async function replica(): Promise<{ server: SubakoServer; apiKey: string | null }> {
  const started = await startReplica({ databaseUrl: db.url });
  servers.push(started.server);
  return started;
}

interface Session { id: string; mcp: { capability_url: string } }

/** `policy`: who approves (an operator by default; the end user, through the client's elicitation, if named). */
async function newSession(policy: 'require_approval' | 'require_user_approval' = 'require_approval'): Promise<{ session: Session; tool: string }> {
  const agent = await a.call('POST', '/v1/agents', {
    name: `replicas-${Date.now()}`, mcp_servers: [{ name: 'files', url: upstream.url, default_policy: policy }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = await a.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  const tools = await a.call('GET', `/v1/sessions/${session.body.id}/tools`);
  const tool = tools.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith('delete_file'));
  assert.ok(tool, JSON.stringify(tools.body));
  return { session: session.body, tool };
}

/** Waits until `api` lists `count` held calls for the session (the call is in flight on another request). */
async function listedOn(api: Api, sessionId: string, count = 1): Promise<any[]> {
  for (let i = 0; i < 400; i += 1) {
    const list = await api.call('GET', `/v1/sessions/${sessionId}/approvals`);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    if (list.body.items.length >= count) return list.body.items;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no call was listed as held on ${api.url}`);
}

/** A v2 client that declared form elicitation, answering by hand (manual mode: the test carries the state itself). */
async function connectManual(url: string): Promise<Client> {
  const client = new Client({ name: 'replicas-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', async () => { throw new Error('manual mode answers by hand'); });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const callsTo = (path: string) => received.filter((r) => r.args.path === path).length;
const text = (result: unknown) => ((result as { content: { text: string }[] }).content[0]).text;

before(async () => {
  upstream = await serveMcpServer(files);
  db = await createTestDatabase();
  const first = await replica();
  assert.ok(first.apiKey, 'the first replica on a fresh database prints the admin key');
  const second = await replica();
  assert.equal(second.apiKey, null, 'the second finds the database already set up');
  a = makeApi(first.server.url, first.apiKey);
  b = makeApi(second.server.url, first.apiKey);
});
after(async () => {
  for (const server of servers.splice(0)) await server.close(5_000);
  await db.drop();
  await upstream.stop();
});

describe('a call held on one replica is listed and decided on another', () => {
  it('approved through B, the call held on A runs once, with its result and the deciding key in its record; a second decision is 409', async () => {
    const { session, tool } = await newSession();
    const pending = a.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: { path: '/replicas/approved' } });
    const [approval] = await listedOn(b, session.id);
    assert.equal(approval.tool, tool);
    assert.deepEqual(approval.arguments, { path: '/replicas/approved' });
    const everywhere = await b.call('GET', '/v1/approvals');
    assert.ok(everywhere.body.items.some((x: { id: string }) => x.id === approval.id), JSON.stringify(everywhere.body));
    assert.equal(callsTo('/replicas/approved'), 0, 'nothing ran while it was held');

    const decided = await b.call('POST', `/v1/sessions/${session.id}/approvals/${approval.id}`, { decision: 'approve' });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    assert.equal(decided.body.approval.decision, 'approved');
    const answer = await pending;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.call.outcome, 'ok');
    assert.match(answer.body.result.content[0].text, /delete_file done: \{"path":"\/replicas\/approved"\}/);
    assert.equal(callsTo('/replicas/approved'), 1);

    // The record, read on either replica, names the decision and the key.
    for (const api of [a, b]) {
      const record = (await api.call('GET', `/v1/sessions/${session.id}/calls/${approval.call_id}`)).body;
      assert.equal(record.outcome, 'ok');
      assert.equal(record.approval.asked, 'api');
      assert.equal(record.approval.decision, 'approved');
      assert.ok(record.approval.decided_by);
    }
    for (const api of [a, b]) {
      const twice = await api.call('POST', `/v1/sessions/${session.id}/approvals/${approval.id}`, { decision: 'deny' });
      assert.equal(twice.status, 409, JSON.stringify(twice.body));
      assert.match(twice.body.error.message, /already decided \(approved\)/);
      assert.equal((await api.call('GET', `/v1/sessions/${session.id}/approvals`)).body.items.length, 0);
    }
    const unknown = await b.call('POST', `/v1/sessions/${session.id}/approvals/apr_nope`, { decision: 'approve' });
    assert.equal(unknown.status, 404);
    assert.equal(callsTo('/replicas/approved'), 1);
  });

  it('denied through B, the call held on A ends denied without running', async () => {
    const { session, tool } = await newSession();
    const pending = a.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: { path: '/replicas/denied' } });
    const [approval] = await listedOn(b, session.id);
    assert.equal((await b.call('POST', `/v1/sessions/${session.id}/approvals/${approval.id}`, { decision: 'deny' })).status, 200);
    const answer = await pending;
    assert.equal(answer.body.call.outcome, 'denied');
    assert.equal(answer.body.call.approval.decision, 'denied');
    assert.match(answer.body.result.content[0].text, /did not run: a person denied this call/);
    assert.equal(callsTo('/replicas/denied'), 0);
  });

  it('two replicas deciding the same approval at once: exactly one decision wins, the other is 409, and the call follows the winner', async () => {
    const { session, tool } = await newSession();
    const pending = a.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: { path: '/replicas/race' } });
    const [approval] = await listedOn(a, session.id);
    const path = `/v1/sessions/${session.id}/approvals/${approval.id}`;
    const [onA, onB] = await Promise.all([a.call('POST', path, { decision: 'approve' }), b.call('POST', path, { decision: 'deny' })]);
    assert.deepEqual([onA.status, onB.status].sort(), [200, 409], `${JSON.stringify(onA.body)} ${JSON.stringify(onB.body)}`);
    const answer = await pending;
    if (onA.status === 200) {
      assert.equal(answer.body.call.outcome, 'ok');
      assert.equal(callsTo('/replicas/race'), 1);
    } else {
      assert.equal(answer.body.call.outcome, 'denied');
      assert.equal(callsTo('/replicas/race'), 0);
    }
  });

  it('a session deleted through B ends the call A holds for it', async () => {
    const { session, tool } = await newSession();
    const pending = a.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: { path: '/replicas/gone' } });
    await listedOn(b, session.id);
    assert.equal((await b.call('DELETE', `/v1/sessions/${session.id}`)).status, 204);
    const answer = await pending;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.call.outcome, 'crash');
    assert.match(answer.body.result.content[0].text, /its session was deleted while it waited for approval/);
    assert.equal(callsTo('/replicas/gone'), 0);
  });
});

describe('an elicited approval is good once across replicas', () => {
  it('a requestState redeemed on A is refused on B, and the call it approved ran once', async () => {
    const { session, tool } = await newSession('require_user_approval');
    const onB = session.mcp.capability_url.replace(new URL(a.url).origin, new URL(b.url).origin);
    assert.notEqual(onB, session.mcp.capability_url);
    const [clientA, clientB] = [await connectManual(session.mcp.capability_url), await connectManual(onB)];
    try {
      const args = { path: '/replicas/elicited' };
      const first = await clientA.callTool({ name: tool, arguments: args }, { allowInputRequired: true }) as unknown as { resultType: string; requestState: string };
      assert.equal(first.resultType, 'input_required', JSON.stringify(first));
      const retry = (client: Client) => client.callTool({
        name: tool, arguments: args, inputResponses: { approval: { action: 'accept', content: { approve: true } } }, requestState: first.requestState,
      } as never);
      assert.match(text(await retry(clientA)), /delete_file done/);
      const replayed = await retry(clientB);
      assert.equal(replayed.isError, true);
      assert.match(text(replayed), /already used/);
      assert.equal(callsTo('/replicas/elicited'), 1);
      const log = await b.call('GET', `/v1/sessions/${session.id}/calls?limit=10`);
      assert.deepEqual(log.body.items.map((c: any) => [c.outcome, c.approval.decision]), [['ok', 'approved'], ['denied', 'invalid']]);
    } finally {
      await clientA.close();
      await clientB.close();
    }
  });

  it('an approval issued by A is honoured by B, once (the seal is the proof; nothing per process is needed)', async () => {
    const { session, tool } = await newSession('require_user_approval');
    const onB = session.mcp.capability_url.replace(new URL(a.url).origin, new URL(b.url).origin);
    const [clientA, clientB] = [await connectManual(session.mcp.capability_url), await connectManual(onB)];
    try {
      const args = { path: '/replicas/issued-on-a' };
      const first = await clientA.callTool({ name: tool, arguments: args }, { allowInputRequired: true }) as unknown as { requestState: string };
      const retry = (client: Client) => client.callTool({
        name: tool, arguments: args, inputResponses: { approval: { action: 'accept', content: { approve: true } } }, requestState: first.requestState,
      } as never);
      assert.match(text(await retry(clientB)), /delete_file done/);
      assert.match(text(await retry(clientA)), /already used/);
      assert.equal(callsTo('/replicas/issued-on-a'), 1);
    } finally {
      await clientA.close();
      await clientB.close();
    }
  });
});
