/**
 * Issue 27, point 2: a remote tool that answers `input_required` (MCP 2026-07-28 multi-round-trip input) reaches the
 * session's client when it declared what was asked — form or URL elicitation — and the client's retry reaches the
 * upstream with the upstream's own state, byte for byte, and the answers; the state the client carries is subako's,
 * sealed: altered, forged, moved to other arguments or (for an approved call) replayed, it is refused and the upstream
 * sees nothing (the retry is answered -32602). A 2026-07-28 client that did not declare what the upstream needs is
 * answered -32021 naming it (the upstream is told what the client declared, exactly); a client that cannot declare
 * (a 2025-era client, REST) gets a result saying what input was needed. A call that was approved by its end user and then asked for input is not asked to approve again.
 *
 * Real parts only: a v2 McpServer upstream on loopback whose tools return `inputRequired(...)`, the platform server in
 * this process, and the official clients (v2 auto-fulfilling and in manual mode; v1 for the 2025 era).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer, acceptedContent, inputRequired } from '@modelcontextprotocol/server';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as z from 'zod';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
let upstream: { url: string; stop(): Promise<void> };
/** Each tools/call the upstream got: its arguments, the state it was given back, and whether it carried answers. */
const received: { tool: string; args: unknown; state: unknown; answered: boolean }[] = [];

const confirmation = z.object({ ok: z.boolean() });

function rooms(): McpServer {
  const server = new McpServer({ name: 'rooms', version: '1.0.0' });
  server.registerTool('book', { description: 'Books a room, once a person confirms.', inputSchema: z.object({ room: z.string() }) }, async ({ room }, ctx) => {
    const state = ctx.mcpReq.requestState();
    received.push({ tool: 'book', args: { room }, state, answered: ctx.mcpReq.inputResponses !== undefined });
    const confirmed = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirmation);
    if (confirmed?.ok !== true) {
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: `Book room ${room}?`, requestedSchema: confirmation }) },
        requestState: `rooms-state:${room}:\u00e9`,
      });
    }
    if (state !== `rooms-state:${room}:\u00e9`) return { content: [{ type: 'text', text: `wrong state: ${String(state)}` }], isError: true };
    return { content: [{ type: 'text', text: `booked room ${room}` }] };
  });
  server.registerTool('sign_in', { description: 'Needs the person to sign in at a URL.', inputSchema: z.object({}) }, async (_args, ctx) => {
    received.push({ tool: 'sign_in', args: {}, state: ctx.mcpReq.requestState(), answered: ctx.mcpReq.inputResponses !== undefined });
    if (ctx.mcpReq.inputResponses?.signin === undefined) {
      return inputRequired({ inputRequests: { signin: inputRequired.elicitUrl({ message: 'Sign in to continue', url: 'https://rooms.example/sign-in' }) }, requestState: 'signin' });
    }
    return { content: [{ type: 'text', text: 'signed in' }] };
  });
  server.registerTool('forecast', {
    description: 'Structured output after a question.', inputSchema: z.object({}), outputSchema: z.object({ celsius: z.number() }),
  }, async (_args, ctx) => {
    if (acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirmation)?.ok !== true) {
      return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: 'Which city? (say ok)', requestedSchema: confirmation }) } });
    }
    return { content: [{ type: 'text', text: '21' }], structuredContent: { celsius: 21 } };
  });
  return server;
}

interface Session { id: string; url: string }

async function newSession(policy: 'allow' | 'require_user_approval' = 'allow'): Promise<Session> {
  const agent = await s.call('POST', '/v1/agents', { name: `input-${Date.now()}-${Math.random()}`, mcp_servers: [{ name: 'rooms', url: upstream.url, default_policy: policy }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return { id: session.body.id, url: session.body.mcp.capability_url };
}

type Elicit = (params: { mode?: string; message: string; url?: string; requestedSchema?: { properties: Record<string, unknown> } }) => unknown;

/** The official v2 client: with `elicit`, it declares form elicitation (and URL, with `url`) and answers through it. */
async function connect(url: string, elicit?: Elicit, options: { url?: boolean; manual?: boolean } = {}): Promise<Client> {
  const modes = { form: {}, ...(options.url ? { url: {} } : {}) };
  const client = new Client({ name: 'input-test', version: '1.0.0' }, {
    versionNegotiation: { mode: 'auto' }, ...(elicit ? { capabilities: { elicitation: modes } } : {}),
    ...(options.manual ? { inputRequired: { autoFulfill: false } } : {}),
  });
  if (elicit) client.setRequestHandler('elicitation/create', async (request) => elicit(request.params as never) as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content.map((b) => b.text).join('');
const callsOf = (tool: string) => received.filter((r) => r.tool === tool);

async function records(session: Session): Promise<{ outcome: string; tool: string; approval?: { decision: string } }[]> {
  const list = await s.call('GET', `/v1/sessions/${session.id}/calls`);
  return list.body.items;
}

before(async () => {
  s = await startInProcess({ limits: { callTimeoutMs: 10_000 } });
  upstream = await serveMcpServer(rooms);
});
after(async () => {
  await s?.close();
  await upstream?.stop();
});

describe('an upstream\'s input request through a session', () => {
  it('reaches a client that declared form elicitation; its answer goes back with the upstream\'s own state, and the result comes back', async () => {
    const session = await newSession();
    const asked: string[] = [];
    const client = await connect(session.url, (params) => { asked.push(params.message); return { action: 'accept', content: { ok: true } }; });
    try {
      received.length = 0;
      const result = await client.callTool({ name: 'book', arguments: { room: '7' } });
      assert.equal(text(result), 'booked room 7');
      assert.equal(result.isError, undefined);
      assert.deepEqual(asked, ['The remote MCP server rooms asks (for the tool book): Book room 7?']);
      assert.deepEqual(received.map((r) => [r.state, r.answered]), [[undefined, false], ['rooms-state:7:\u00e9', true]]);
      assert.deepEqual((await records(session)).map((r) => r.outcome), ['input_required', 'ok']);
    } finally {
      await client.close();
    }
  });

  it('a call with an idempotency key goes on in the retry that carries the same key, and the key then holds the retry\'s outcome', async () => {
    const session = await newSession();
    const client = await connect(session.url, () => ({ action: 'accept', content: { ok: true } }));
    try {
      received.length = 0;
      // The client's retry resends the request's params, its _meta (and so the key) included.
      const keyed = { name: 'book', arguments: { room: '12' }, _meta: { 'io.subako/idempotency-key': `book-${Date.now()}-${Math.random()}` } };
      const result = await client.callTool(keyed);
      assert.equal(text(result), 'booked room 12', 'the retry ran, not answered the question again');
      assert.deepEqual(received.map((r) => r.answered), [false, true]);
      assert.deepEqual((await records(session)).map((r) => r.outcome), ['input_required', 'ok']);
      const again = await client.callTool(keyed);
      assert.equal(text(again), 'booked room 12');
      assert.equal(typeof again._meta?.['io.subako/replayed-call'], 'string', 'answered from the key');
      assert.equal(received.length, 2, 'the upstream was not asked again');
    } finally {
      await client.close();
    }
  });

  it('a tool with an output schema that asks first still has its structured content checked and returned', async () => {
    const session = await newSession();
    const client = await connect(session.url, () => ({ action: 'accept', content: { ok: true } }));
    try {
      const result = await client.callTool({ name: 'forecast', arguments: {} });
      assert.deepEqual(result.structuredContent, { celsius: 21 });
    } finally {
      await client.close();
    }
  });

  it('URL mode reaches a client that declared it, with the URL as the upstream gave it', async () => {
    const session = await newSession();
    const seen: unknown[] = [];
    const client = await connect(session.url, (params) => { seen.push({ mode: params.mode, url: params.url }); return { action: 'accept' }; }, { url: true });
    try {
      const result = await client.callTool({ name: 'sign_in', arguments: {} });
      assert.equal(text(result), 'signed in');
      assert.deepEqual(seen, [{ mode: 'url', url: 'https://rooms.example/sign-in' }]);
    } finally {
      await client.close();
    }
  });

  describe('the state the client carries is subako\'s, sealed, and checked on the retry', () => {
    let session: Session;
    let manual: Client;
    const ok = { confirm: { action: 'accept', content: { ok: true } } };
    const ask = async (args: Record<string, unknown>) => {
      const first = await manual.callTool({ name: 'book', arguments: args }, { allowInputRequired: true }) as unknown as {
        resultType: string; inputRequests: Record<string, { method: string; params: { message: string } }>; requestState: string;
      };
      assert.equal(first.resultType, 'input_required', JSON.stringify(first));
      return first;
    };
    const retry = (args: Record<string, unknown>, requestState: string) => manual.callTool({ name: 'book', arguments: args, inputResponses: ok, requestState } as never);
    /** A refused state is answered -32602 (invalid_request_state), saying why. */
    const refusedFor = (why: RegExp) => (err: unknown) => err instanceof ProtocolError && err.code === -32602 && /^Invalid requestState: /.test(err.message) && why.test(err.message)
      && (err.data as { reason?: string } | undefined)?.reason === 'invalid_request_state';

    before(async () => {
      session = await newSession();
      manual = await connect(session.url, () => { throw new Error('manual mode answers by hand'); }, { manual: true });
    });
    after(() => manual.close());

    it('the client sees the upstream\'s question, never the upstream\'s state', async () => {
      const first = await ask({ room: '8' });
      assert.deepEqual(Object.keys(first.inputRequests), ['confirm']);
      assert.equal(first.inputRequests.confirm.method, 'elicitation/create');
      assert.match(first.requestState, /^subako-sealed:v1:/);
      assert.ok(!first.requestState.includes('rooms-state'));
      assert.equal(text(await retry({ room: '8' }, first.requestState)), 'booked room 8');
    });

    it('an altered state is refused: the call ends denied and the upstream does not see the retry', async () => {
      const first = await ask({ room: '9' });
      const at = first.requestState.length - 2;
      const altered = `${first.requestState.slice(0, at)}${first.requestState[at] === 'A' ? 'B' : 'A'}${first.requestState.slice(at + 1)}`;
      const before = callsOf('book').length;
      await assert.rejects(retry({ room: '9' }, altered), refusedFor(/the state it carried was not given by this server for this session \(forged or altered\)/));
      assert.equal(callsOf('book').length, before);
      assert.equal((await records(session)).at(-1)!.outcome, 'denied');
    });

    it('a state moved to other arguments, or forged outright, is refused', async () => {
      const first = await ask({ room: '10' });
      const before = callsOf('book').length;
      await assert.rejects(retry({ room: '11' }, first.requestState), refusedFor(/given for other arguments/));
      await assert.rejects(retry({ room: '10' }, 'rooms-state:10:\u00e9'), refusedFor(/forged or altered/));
      assert.equal(callsOf('book').length, before);
    });

    it('another session\'s state does not open here', async () => {
      const other = await newSession();
      const stranger = await connect(other.url, () => { throw new Error('manual'); }, { manual: true });
      try {
        const theirs = await stranger.callTool({ name: 'book', arguments: { room: '12' } }, { allowInputRequired: true }) as unknown as { requestState: string };
        await assert.rejects(retry({ room: '12' }, theirs.requestState), refusedFor(/forged or altered/));
      } finally {
        await stranger.close();
      }
    });
  });

  describe('a 2026-07-28 client that did not declare what the server needs is answered -32021 naming it (the upstream is told exactly what it declared)', () => {
    const missing = (capabilities: Record<string, unknown>) => (err: unknown) => {
      assert.ok(err instanceof ProtocolError, String(err));
      assert.equal(err.code, -32021);
      assert.deepEqual((err.data as { requiredCapabilities?: unknown }).requiredCapabilities, capabilities);
      return true;
    };
    it('a v2 client without the elicitation capability', async () => {
      const session = await newSession();
      const client = await connect(session.url);
      try {
        await assert.rejects(client.callTool({ name: 'book', arguments: { room: '5' } }), missing({ elicitation: {} }));
        assert.equal((await records(session)).at(-1)!.outcome, 'tool_error');
      } finally {
        await client.close();
      }
    });

    it('a client that declared form elicitation only, asked to open a URL', async () => {
      const session = await newSession();
      const client = await connect(session.url, () => ({ action: 'accept' }));
      try {
        await assert.rejects(client.callTool({ name: 'sign_in', arguments: {} }), missing({ elicitation: {} }));
      } finally {
        await client.close();
      }
    });
  });

  describe('a client that cannot declare anything gets a result saying what input was needed', () => {
    it('a 2025-era client, and REST', async () => {
      const session = await newSession();
      const legacy = new LegacyClient({ name: 'legacy', version: '1' }, { capabilities: { elicitation: {} } });
      await legacy.connect(new LegacyTransport(new URL(session.url)));
      try {
        const result = await legacy.callTool({ name: 'book', arguments: { room: '6' } });
        assert.equal(result.isError, true);
        assert.match(text(result), /needs input that this caller cannot give: a person's answer to "Book room 6\?"/);
      } finally {
        await legacy.close();
      }
      const rest = await s.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'book', arguments: { room: '6' } });
      assert.equal(rest.status, 200, JSON.stringify(rest.body));
      assert.match(text(rest.body.result), /needs input that this caller cannot give/);
    });
  });

  describe('a call its end user approved, then asked for input', () => {
    it('is not asked to approve again, and its continuation is good once', async () => {
      const session = await newSession('require_user_approval');
      const manual = await connect(session.url, () => { throw new Error('manual'); }, { manual: true });
      try {
        const call = (extra: Record<string, unknown>, allow = true) =>
          manual.callTool({ name: 'book', arguments: { room: '3' }, ...extra } as never, allow ? { allowInputRequired: true } : undefined) as unknown as Promise<Record<string, any>>;
        const approval = await call({});
        assert.deepEqual(Object.keys(approval.inputRequests), ['approval']);
        const before = callsOf('book').length;
        const question = await call({ inputResponses: { approval: { action: 'accept', content: { approve: true } } }, requestState: approval.requestState });
        assert.deepEqual(Object.keys(question.inputRequests), ['confirm'], JSON.stringify(question));
        assert.equal(callsOf('book').length, before + 1);
        const done = await call({ inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: question.requestState });
        assert.equal(text(done), 'booked room 3');
        await assert.rejects(call({ inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: question.requestState }),
          (err: unknown) => err instanceof ProtocolError && err.code === -32602 && /already used/.test(err.message));
        assert.equal(callsOf('book').length, before + 2);
        const log = await records(session);
        assert.deepEqual(log.map((r) => [r.outcome, r.approval?.decision]), [['input_required', 'approved'], ['ok', 'approved'], ['denied', undefined]]);
      } finally {
        await manual.close();
      }
    });
  });
});
