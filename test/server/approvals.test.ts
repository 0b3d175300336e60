/**
 * Issue 13, point 11: a remote tool under the agent policy `require_approval` or `require_user_approval` runs only
 * once a person approved that very call; under `require_user_approval`, a 2026-07-28 client that declared
 * elicitation is answered `input_required` with an elicitation, and its retry carries the answer and the sealed
 * approval; any other caller's call (and every call under `require_approval`, the operator's policy) is held and
 * listed at `/v1/sessions/{id}/approvals` until someone with an API key decides it, or its deadline passes. An
 * approval is single-use and bound to the session, the tool and the arguments: replayed, altered or forged, it is
 * refused. A call that is not approved ends `denied` without reaching the upstream, and the call log keeps the
 * decision.
 *
 * Real parts only: a v2 McpServer upstream on loopback, the platform server in this process, and the official v2
 * client SDK with and without the elicitation capability (auto-fulfilling, and in manual mode to replay and alter).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/server';
import { Client, StreamableHTTPClientTransport, type ElicitRequestFormParams, type ElicitResult } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { startInProcess, type InProcess } from './helpers/harness.js';
import { MAX_HELD_PER_SESSION } from '../../src/platform/index.js';

/** What reached the upstream: only approved calls of the guarded tools may appear here. */
const received: { tool: string; args: Record<string, unknown> }[] = [];
let upstream: { url: string; stop(): Promise<void> };
let s: InProcess;

function files(): McpServer {
  const server = new McpServer({ name: 'files', version: '1.0.0' });
  const tool = (name: string, inputSchema: z.ZodObject) => server.registerTool(name, { description: `${name} on the upstream`, inputSchema }, async (args) => {
    received.push({ tool: name, args: args as Record<string, unknown> });
    return { content: [{ type: 'text', text: `${name} done: ${JSON.stringify(args)}` }] };
  });
  tool('delete_file', z.object({ path: z.string(), recursive: z.boolean().optional() }));
  tool('rename_file', z.object({ path: z.string(), to: z.string().optional() }));
  tool('read_file', z.object({ path: z.string() }));
  tool('wipe', z.object({}));
  return server;
}

interface Session { id: string; token: string; mcp: { capability_url: string; url: string; authorization: string } }

/** `policy`: the guarded tools' (an operator approves them by default; the end user, asked through elicitation, if named). */
async function newSession(server: InProcess, policy: 'require_approval' | 'require_user_approval' = 'require_approval'): Promise<Session> {
  const agent = await server.call('POST', '/v1/agents', {
    name: `approvals-${Date.now()}`,
    mcp_servers: [{
      name: 'files', url: upstream.url, default_policy: policy,
      tools: [{ name: 'read_file', policy: 'allow' }, { name: 'wipe', policy: 'deny' }],
    }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = await server.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return session.body;
}

/** The official v2 client; with `elicit`, it declares form elicitation and answers through it. */
async function connect(url: string, elicit?: (params: ElicitRequestFormParams) => ElicitResult): Promise<Client> {
  const client = new Client({ name: 'approvals-test', version: '1.0.0' }, {
    versionNegotiation: { mode: 'auto' }, ...(elicit ? { capabilities: { elicitation: { form: {} } } } : {}),
  });
  if (elicit) client.setRequestHandler('elicitation/create', async (request) => elicit(request.params as ElicitRequestFormParams));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function published(session: Session, suffix: string): Promise<string> {
  const list = await s.call('GET', `/v1/sessions/${session.id}/tools`);
  const name = list.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith(suffix));
  assert.ok(name, `no tool ${suffix} in ${JSON.stringify(list.body)}`);
  return name;
}

const text = (result: unknown) => ((result as { content: { text: string }[] }).content[0]).text;
const callsTo = (tool: string) => received.filter((r) => r.tool === tool);

async function lastCall(server: InProcess, session: Session): Promise<any> {
  const log = await server.call('GET', `/v1/sessions/${session.id}/calls?limit=200`);
  assert.equal(log.status, 200);
  return log.body.items.at(-1);
}

/** Waits until the session lists `count` held calls (the call is in flight on another request), and returns them. */
async function held(server: InProcess, session: Session, count = 1): Promise<any[]> {
  for (let i = 0; i < 400; i += 1) {
    const list = await server.call('GET', `/v1/sessions/${session.id}/approvals`);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    if (list.body.items.length >= count) return list.body.items;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no call was held for approval');
}

before(async () => {
  upstream = await serveMcpServer(files);
  s = await startInProcess();
});
after(async () => {
  await s.close();
  await upstream.stop();
});

describe('the policies require_approval and require_user_approval', () => {
  it('is accepted per server and per tool; such tools are served and marked, denied ones are not served', async () => {
    const session = await newSession(s);
    const list = await s.call('GET', `/v1/sessions/${session.id}/tools`);
    const byName = new Map(list.body.items.map((t: { name: string }) => [t.name.replace(/^.*?(delete_file|rename_file|read_file|wipe)$/, '$1'), t]));
    assert.deepEqual([...byName.keys()].sort(), ['delete_file', 'read_file', 'rename_file']);
    assert.equal((byName.get('delete_file') as { requires_approval?: boolean }).requires_approval, true);
    assert.equal((byName.get('read_file') as { requires_approval?: boolean }).requires_approval, undefined);
    const bad = await s.call('POST', '/v1/agents', { name: 'bad-policy', mcp_servers: [{ name: 'x', url: upstream.url, default_policy: 'ask' }] });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
  });
});

describe('under require_user_approval, a client that declared elicitation is asked through it', () => {
  it('approving in the elicitation runs the call once, and the call log records the approval', async () => {
    const session = await newSession(s, 'require_user_approval');
    const asked: ElicitRequestFormParams[] = [];
    const client = await connect(session.mcp.capability_url, (params) => {
      asked.push(params);
      return { action: 'accept', content: { approve: true } };
    });
    try {
      const tool = await published(session, 'delete_file');
      const before = callsTo('delete_file').length;
      const result = await client.callTool({ name: tool, arguments: { path: '/tmp/a.txt' } });
      assert.equal(result.isError, undefined, JSON.stringify(result));
      assert.match(text(result), /delete_file done: \{"path":"\/tmp\/a\.txt"\}/);
      assert.equal(callsTo('delete_file').length, before + 1);
      assert.equal(asked.length, 1);
      assert.match(asked[0].message, new RegExp(`call the tool ${tool} with these arguments: \\{"path":"/tmp/a\\.txt"\\}`));
      assert.deepEqual(asked[0].requestedSchema.required, ['approve']);

      const record = await lastCall(s, session);
      assert.equal(record.outcome, 'ok');
      assert.equal(record.via, 'mcp');
      assert.equal(record.approval.asked, 'elicitation');
      assert.equal(record.approval.decision, 'approved');
      assert.match(record.approval.id, /^apr_/);
      // Only the call that ran is recorded: the first round asked for input and ran nothing.
      const log = await s.call('GET', `/v1/sessions/${session.id}/calls`);
      assert.equal(log.body.items.length, 1);

      // A tool under `allow` is not asked about.
      const read = await client.callTool({ name: await published(session, 'read_file'), arguments: { path: '/x' } });
      assert.match(text(read), /read_file done/);
      assert.equal(asked.length, 1);
    } finally {
      await client.close();
    }
  });

  it('declining ends the call denied: the model reads that a person did not approve it, and the upstream sees nothing', async () => {
    const session = await newSession(s, 'require_user_approval');
    const client = await connect(session.mcp.capability_url, () => ({ action: 'decline' }));
    try {
      const before = callsTo('delete_file').length;
      const result = await client.callTool({ name: await published(session, 'delete_file'), arguments: { path: '/etc/passwd' } });
      assert.equal(result.isError, true);
      assert.match(text(result), /did not run: it was not approved: the person declined the approval request/);
      assert.equal(callsTo('delete_file').length, before);
      const record = await lastCall(s, session);
      assert.equal(record.outcome, 'denied');
      assert.equal(record.approval.decision, 'denied');
      assert.deepEqual(record.model, [{ type: 'text', text: text(result) }]);
    } finally {
      await client.close();
    }
  });

  it('an accepted elicitation that does not say approve is not an approval', async () => {
    const session = await newSession(s, 'require_user_approval');
    const client = await connect(session.mcp.capability_url, () => ({ action: 'accept', content: { approve: false } }));
    try {
      const before = callsTo('delete_file').length;
      const result = await client.callTool({ name: await published(session, 'delete_file'), arguments: { path: '/b' } });
      assert.equal(result.isError, true);
      assert.match(text(result), /the person did not approve it/);
      assert.equal(callsTo('delete_file').length, before);
    } finally {
      await client.close();
    }
  });

  describe('an approval is single-use and bound to the session, the tool and the arguments', () => {
    let session: Session;
    let manual: Client;
    let tool: string;
    const approve = { approval: { action: 'accept', content: { approve: true } } };
    /** The first round, as a client in manual mode sees it. */
    const ask = async (name: string, args: Record<string, unknown>, client = manual) => {
      const first = await client.callTool({ name, arguments: args }, { allowInputRequired: true }) as unknown as {
        resultType: string; inputRequests: Record<string, { method: string; params: { mode: string; message: string } }>; requestState: string;
      };
      assert.equal(first.resultType, 'input_required', JSON.stringify(first));
      return first;
    };
    const retry = (name: string, args: Record<string, unknown>, requestState: string, client = manual) =>
      client.callTool({ name, arguments: args, inputResponses: approve, requestState } as never);

    before(async () => {
      session = await newSession(s, 'require_user_approval');
      manual = await connect(session.mcp.capability_url, () => { throw new Error('manual mode answers by hand'); });
      tool = await published(session, 'delete_file');
    });
    after(() => manual.close());

    it('the first round is input_required with one form elicitation and a sealed state', async () => {
      const first = await ask(tool, { path: '/c' });
      assert.deepEqual(Object.keys(first.inputRequests), ['approval']);
      assert.equal(first.inputRequests.approval.method, 'elicitation/create');
      assert.equal(first.inputRequests.approval.params.mode, 'form');
      assert.match(first.requestState, /^subako-sealed:v1:/);
      // Sealed, not merely signed: the tool, the arguments and the id are not readable by the client.
      assert.doesNotMatch(Buffer.from(first.requestState.split('.').at(-1)!, 'base64url').toString('latin1'), /delete_file|apr_/);
    });

    it('a replayed approval is refused: the call it approved ran once', async () => {
      const first = await ask(tool, { path: '/replayed' });
      const before = callsTo('delete_file').length;
      const ran = await retry(tool, { path: '/replayed' }, first.requestState);
      assert.match(text(ran), /delete_file done/);
      const again = await retry(tool, { path: '/replayed' }, first.requestState);
      assert.equal(again.isError, true);
      assert.match(text(again), /already used \(an approval is good for one call\); ask for a new one by calling again without it/);
      assert.equal(callsTo('delete_file').length, before + 1);
      const record = await lastCall(s, session);
      assert.equal(record.outcome, 'denied');
      assert.equal(record.approval.decision, 'invalid');
    });

    it('an approval given for some arguments does not approve others (keys in another order are the same arguments)', async () => {
      const first = await ask(tool, { path: '/safe', recursive: false });
      const before = callsTo('delete_file').length;
      const altered = await retry(tool, { path: '/', recursive: true }, first.requestState);
      assert.equal(altered.isError, true);
      assert.match(text(altered), /given for other arguments/);
      assert.equal(callsTo('delete_file').length, before);
      const same = await retry(tool, { recursive: false, path: '/safe' }, first.requestState);
      assert.match(text(same), /delete_file done/);
      assert.equal(callsTo('delete_file').length, before + 1);
    });

    it('an approval given for one tool does not approve another', async () => {
      const first = await ask(tool, { path: '/d' });
      const other = await published(session, 'rename_file');
      const before = callsTo('rename_file').length;
      const moved = await retry(other, { path: '/d' }, first.requestState);
      assert.equal(moved.isError, true);
      assert.match(text(moved), /given for the tool .*delete_file, not .*rename_file/);
      assert.equal(callsTo('rename_file').length, before);
    });

    it('an altered or forged state is refused, and so is one from another session', async () => {
      const first = await ask(tool, { path: '/e' });
      const before = callsTo('delete_file').length;
      const last = first.requestState.at(-2) === 'A' ? 'B' : 'A';
      const flipped = `${first.requestState.slice(0, -2)}${last}${first.requestState.at(-1)}`;
      const forged = await retry(tool, { path: '/e' }, flipped);
      assert.match(text(forged), /not given by this server for this session \(forged or altered\)/);
      const invented = await retry(tool, { path: '/e' }, 'approved');
      assert.match(text(invented), /forged or altered/);

      const elsewhere = await newSession(s, 'require_user_approval');
      const stranger = await connect(elsewhere.mcp.capability_url, () => ({ action: 'decline' }));
      try {
        const theirs = await retry(await published(elsewhere, 'delete_file'), { path: '/e' }, first.requestState, stranger);
        assert.equal(theirs.isError, true);
        assert.match(text(theirs), /forged or altered/);
      } finally {
        await stranger.close();
      }
      assert.equal(callsTo('delete_file').length, before);
      // The refusals did not spend it: the person's approval still runs the call it was given for, once.
      assert.match(text(await retry(tool, { path: '/e' }, first.requestState)), /delete_file done/);
    });
  });
});

describe('any other caller (and every caller under require_approval) waits for an operator\'s decision through the API', () => {
  it('a client without elicitation waits; an API key approves it; the record names the key', async () => {
    const session = await newSession(s);
    const client = await connect(session.mcp.capability_url);
    try {
      const tool = await published(session, 'delete_file');
      const before = callsTo('delete_file').length;
      const updates: { progress: number; message?: string }[] = [];
      const pending = client.callTool({ name: tool, arguments: { path: '/held' } }, { onprogress: (p) => updates.push(p) });
      const [approval] = await held(s, session);
      assert.equal(approval.tool, tool);
      assert.deepEqual(approval.arguments, { path: '/held' });
      assert.equal(approval.session_id, session.id);
      assert.ok(Date.parse(approval.expires_at) > Date.parse(approval.created_at));
      assert.equal(callsTo('delete_file').length, before, 'nothing reaches the upstream while the call is held');
      // An operator sees it among every session's.
      const everywhere = await s.call('GET', '/v1/approvals');
      assert.ok(everywhere.body.items.some((a: { id: string }) => a.id === approval.id), JSON.stringify(everywhere.body));
      assert.equal((await fetch(`${s.url}/v1/approvals`, { headers: { authorization: session.mcp.authorization } })).status, 401);
      // The held call is in the log from its arrival.
      const waiting = await s.call('GET', `/v1/sessions/${session.id}/calls/${approval.call_id}`);
      assert.equal(waiting.body.outcome, 'running');
      assert.equal(waiting.body.approval.decision, 'pending');

      // The session's own token can list, but not decide: the agent cannot approve itself (told who decides).
      const asSession = { authorization: session.mcp.authorization };
      const listed = await fetch(`${s.url}/v1/sessions/${session.id}/approvals`, { headers: asSession });
      assert.equal(listed.status, 200);
      const selfApproval = await fetch(`${s.url}/v1/sessions/${session.id}/approvals/${approval.id}`, {
        method: 'POST', headers: { ...asSession, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }),
      });
      assert.equal(selfApproval.status, 403);

      const decided = await s.call('POST', `/v1/sessions/${session.id}/approvals/${approval.id}`, { decision: 'approve' });
      assert.equal(decided.status, 200, JSON.stringify(decided.body));
      assert.equal(decided.body.approval.decision, 'approved');
      const result = await pending;
      assert.match(text(result), /delete_file done: \{"path":"\/held"\}/);
      // A caller that follows progress was told what it waited for.
      assert.equal(updates[0]?.progress, 0, JSON.stringify(updates));
      assert.match(updates[0].message!, new RegExp(`waiting for a person to approve this call \\(approval ${approval.id}`));
      assert.equal(callsTo('delete_file').length, before + 1);

      const record = (await s.call('GET', `/v1/sessions/${session.id}/calls/${approval.call_id}`)).body;
      assert.equal(record.outcome, 'ok');
      assert.equal(record.approval.asked, 'api');
      assert.equal(record.approval.decision, 'approved');
      assert.match(record.approval.decided_by, /^key_|^[a-z]+_/);
      assert.ok(record.approval.decided_at);

      // Decided once: a second decision is told it came too late; an unknown id is not found.
      const twice = await s.call('POST', `/v1/sessions/${session.id}/approvals/${approval.id}`, { decision: 'deny' });
      assert.equal(twice.status, 409, JSON.stringify(twice.body));
      const unknown = await s.call('POST', `/v1/sessions/${session.id}/approvals/apr_nope`, { decision: 'approve' });
      assert.equal(unknown.status, 404);
      assert.equal((await s.call('GET', `/v1/sessions/${session.id}/approvals`)).body.items.length, 0);
    } finally {
      await client.close();
    }
  });

  it('a 2025-era client (the v1 SDK), even one that declared elicitation, is held under require_user_approval: its capabilities are not known per request', async () => {
    const session = await newSession(s, 'require_user_approval');
    const legacy = new LegacyClient({ name: 'legacy', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    let asked = 0;
    legacy.setRequestHandler(ElicitRequestSchema, async () => { asked += 1; return { action: 'accept', content: { approve: true } }; });
    await legacy.connect(new LegacyTransport(new URL(session.mcp.capability_url)));
    try {
      const tool = await published(session, 'rename_file');
      const pending = legacy.callTool({ name: tool, arguments: { path: '/old', to: '/new' } });
      const [approval] = await held(s, session);
      assert.deepEqual(approval.arguments, { path: '/old', to: '/new' });
      assert.equal((await s.call('POST', `/v1/sessions/${session.id}/approvals/${approval.id}`, { decision: 'approve' })).status, 200);
      assert.match(text(await pending), /rename_file done/);
      assert.equal(asked, 0);
    } finally {
      await legacy.close();
    }
  });

  it('a REST call is held the same way; denied, it ends denied without running', async () => {
    const session = await newSession(s);
    const tool = await published(session, 'delete_file');
    const before = callsTo('delete_file').length;
    const pending = s.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: { path: '/rest' } });
    const [approval] = await held(s, session);
    const decided = await s.call('POST', `/v1/sessions/${session.id}/approvals/${approval.id}`, { decision: 'deny' });
    assert.equal(decided.status, 200);
    const answer = await pending;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.call.outcome, 'denied');
    assert.equal(answer.body.call.via, 'api');
    assert.equal(answer.body.call.approval.decision, 'denied');
    assert.equal(answer.body.result.isError, true);
    assert.match(answer.body.result.content[0].text, /did not run: a person denied this call/);
    assert.equal(callsTo('delete_file').length, before);
  });

  it('a held call takes no turn: other calls of the session run while it waits', async () => {
    const session = await newSession(s);
    const tool = await published(session, 'delete_file');
    const heldCalls = [1, 2, 3].map((n) => s.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: { path: `/many/${n}` } }));
    const approvals = await held(s, session, 3);
    const read = await s.call('POST', `/v1/sessions/${session.id}/calls`, { tool: await published(session, 'read_file'), arguments: { path: '/free' } });
    assert.equal(read.body.call.outcome, 'ok');
    for (const a of approvals) await s.call('POST', `/v1/sessions/${session.id}/approvals/${a.id}`, { decision: 'approve' });
    const answers = await Promise.all(heldCalls);
    assert.deepEqual(answers.map((a) => a.body.call.outcome), ['ok', 'ok', 'ok']);
  });

  it('a session holds at most 16 calls for approval; the next is refused like a full queue, and not logged', async () => {
    const session = await newSession(s);
    const tool = await published(session, 'delete_file');
    const heldCalls = Array.from({ length: MAX_HELD_PER_SESSION }, (_, n) => s.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: { path: `/${n}` } }));
    await held(s, session, MAX_HELD_PER_SESSION);
    const refused = await s.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: { path: '/one-too-many' } });
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.match(refused.body.error.message, /already has 16 calls waiting for approval/);
    assert.ok(refused.headers.get('retry-after'));
    const log = await s.call('GET', `/v1/sessions/${session.id}/calls?limit=200`);
    assert.equal(log.body.items.length, MAX_HELD_PER_SESSION);
    assert.equal((await s.call('DELETE', `/v1/sessions/${session.id}`)).status, 204);
    await Promise.all(heldCalls);
  });

  it('a caller that goes away while its call is held cancels it; the approval is withdrawn', async () => {
    const session = await newSession(s);
    const tool = await published(session, 'delete_file');
    const caller = new AbortController();
    const pending = fetch(`${s.url}/v1/sessions/${session.id}/calls`, {
      method: 'POST', signal: caller.signal,
      headers: { authorization: `Bearer ${s.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool, arguments: { path: '/abandoned' } }),
    }).catch((err: Error) => err);
    const [approval] = await held(s, session);
    caller.abort();
    assert.equal((await pending as Error).name, 'AbortError');
    let record: any;
    for (let i = 0; i < 400 && record?.outcome !== 'cancelled'; i += 1) {
      record = (await s.call('GET', `/v1/sessions/${session.id}/calls/${approval.call_id}`)).body;
      if (record.outcome !== 'cancelled') await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(record.outcome, 'cancelled');
    assert.equal(record.approval.decision, 'stopped');
    assert.equal((await s.call('GET', `/v1/sessions/${session.id}/approvals`)).body.items.length, 0);
    assert.equal((await s.call('POST', `/v1/sessions/${session.id}/approvals/${approval.id}`, { decision: 'approve' })).status, 409);
  });

  it('deleting the session ends its held calls', async () => {
    const session = await newSession(s);
    const tool = await published(session, 'delete_file');
    const pending = s.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: { path: '/gone' } });
    await held(s, session);
    assert.equal((await s.call('DELETE', `/v1/sessions/${session.id}`)).status, 204);
    const answer = await pending;
    // The session and its records are gone; the caller is told the call did not run.
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.call.outcome, 'crash');
    assert.match(answer.body.result.content[0].text, /its session was deleted while it waited for approval/);
  });
});

describe('an undecided call ends at its deadline as denied', () => {
  let short: InProcess;
  before(async () => {
    short = await startInProcess({ limits: { callTimeoutMs: 1_000 } });
  });
  after(() => short.close());

  it('a held call nobody decides ends denied (expired); deciding it afterwards is too late', async () => {
    const session = await newSession(short);
    const list = await short.call('GET', `/v1/sessions/${session.id}/tools`);
    const tool = list.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith('delete_file'));
    const before = callsTo('delete_file').length;
    const client = await connect(session.mcp.capability_url);
    try {
      const result = await client.callTool({ name: tool, arguments: { path: '/late' } });
      assert.equal(result.isError, true);
      assert.match(text(result), /did not run: a person did not approve it: nobody decided within 1000 ms/);
      const record = await lastCall(short, session);
      assert.equal(record.outcome, 'denied');
      assert.equal(record.approval.decision, 'expired');
      const late = await short.call('POST', `/v1/sessions/${session.id}/approvals/${record.approval.id}`, { decision: 'approve' });
      assert.equal(late.status, 409);
      assert.equal(callsTo('delete_file').length, before);
    } finally {
      await client.close();
    }
  });

  it('an elicited approval that comes back after its deadline is refused', async () => {
    const session = await newSession(short, 'require_user_approval');
    const list = await short.call('GET', `/v1/sessions/${session.id}/tools`);
    const tool = list.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith('delete_file'));
    const client = await connect(session.mcp.capability_url, () => ({ action: 'accept', content: { approve: true } }));
    try {
      const first = await client.callTool({ name: tool, arguments: { path: '/slow' } }, { allowInputRequired: true }) as unknown as { requestState: string };
      await new Promise((r) => setTimeout(r, 1_200));
      const before = callsTo('delete_file').length;
      const result = await client.callTool({ name: tool, arguments: { path: '/slow' }, inputResponses: { approval: { action: 'accept', content: { approve: true } } }, requestState: first.requestState } as never);
      assert.equal(result.isError, true);
      assert.match(text(result), /expired/);
      assert.equal((await lastCall(short, session)).approval.decision, 'expired');
      assert.equal(callsTo('delete_file').length, before);
    } finally {
      await client.close();
    }
  });
});
