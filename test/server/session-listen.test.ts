/**
 * Issue 27, point 8: `subscriptions/listen` through a session. An upstream's tools list change and its resource
 * updates reach the session's listening client, a resource named as the session names it (two servers: the
 * `subako-mcp://<server>/` prefix), and the tools list the client reads then shows the change; a resource the client
 * did not name is not announced. A session has at most 8 listen streams open on a replica and 64 URIs per stream
 * (each refusal says so), and a stream hears at most one list change of each kind per second.
 *
 * Real parts only: a v2 low-level Server upstream on loopback (createMcpHandler with its event bus), a second v2
 * upstream, the platform server in this process, and the official v2 client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { serveEchoTool } from '../mcp/helpers/servers.js';
import { startInProcess, type InProcess } from './helpers/harness.js';
import { until } from '../helpers/eventually.js';
import { serveNotes, type Notes } from './helpers/notes-upstream.js';

let s: InProcess;
let notes: Notes;
let other: { url: string; stop(): Promise<void> };

type Heard = { method: string; uri?: unknown };

async function newSession(servers: { name: string; url: string }[]): Promise<{ id: string; url: string }> {
  const agent = await s.call('POST', '/v1/agents', { name: `listen-${Date.now()}-${Math.random()}`, mcp_servers: servers.map((sv) => ({ ...sv, default_policy: 'allow', definitions: 'follow' })) });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return { id: session.body.id, url: session.body.mcp.capability_url };
}

async function connect(url: string, options: { elicit?: boolean } = {}): Promise<{ client: Client; heard: Heard[] }> {
  const client = new Client({ name: 'listen-test', version: '1.0.0' }, {
    versionNegotiation: { mode: 'auto' }, inputRequired: { autoFulfill: false },
    ...(options.elicit ? { capabilities: { elicitation: { form: {} } } } : {}),
  });
  const heard: Heard[] = [];
  for (const method of ['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed', 'notifications/resources/updated'] as const) {
    client.setNotificationHandler(method, (n) => void heard.push({ method: n.method, uri: (n.params as { uri?: unknown } | undefined)?.uri }));
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, heard };
}

before(async () => {
  s = await startInProcess({ limits: { callTimeoutMs: 10_000 } });
  notes = await serveNotes();
  other = await serveEchoTool();
});
after(async () => {
  await s?.close();
  await notes?.stop();
  await other?.stop();
});

describe('subscriptions/listen through a session', () => {
  it('an upstream\'s tools list change reaches the listening client, and the tools it then lists show it', async () => {
    const session = await newSession([{ name: 'notes', url: notes.url }, { name: 'mail', url: other.url }]);
    const { client, heard } = await connect(session.url);
    try {
      assert.deepEqual(client.getServerCapabilities()!.tools, { listChanged: true });
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['jot', 'send']);
      const sub = await client.listen({ toolsListChanged: true });
      assert.deepEqual(sub.honoredFilter, { toolsListChanged: true });
      await until('the session listens to its upstream', () => notes.bus.listenerCount === 1);
      notes.tools = ['jot', 'tag'];
      notes.bus.publish({ kind: 'tools_list_changed' });
      await until('the tools list change reached the client', () => heard.some((h) => h.method === 'notifications/tools/list_changed'));
      // The client's cache of the listing is its own: a list change is its cue to read the list again.
      assert.deepEqual((await client.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name).sort(), ['jot', 'send', 'tag']);
      await sub.close();
      await until('the session stopped listening to its upstream once its client did', () => notes.bus.listenerCount === 0);
    } finally {
      notes.tools = ['jot'];
      await client.close();
    }
  });

  it('a resource update reaches the client under the session\'s name for it, and only for the URIs it named', async () => {
    const session = await newSession([{ name: 'notes', url: notes.url }, { name: 'mail', url: other.url }]);
    const { client, heard } = await connect(session.url);
    try {
      const listed = await client.request({ method: 'resources/list', params: {} } as never) as { resources: { uri: string }[] };
      assert.deepEqual(listed.resources.map((r) => r.uri), ['subako-mcp://notes/notes://a', 'subako-mcp://notes/notes://b']);
      const sub = await client.listen({ resourceSubscriptions: ['subako-mcp://notes/notes://a'] });
      assert.deepEqual(sub.honoredFilter, { resourceSubscriptions: ['subako-mcp://notes/notes://a'] });
      await until('the session listens to its upstream', () => notes.bus.listenerCount === 1);
      notes.bus.publish({ kind: 'resource_updated', uri: 'notes://b' });
      notes.bus.publish({ kind: 'resource_updated', uri: 'notes://a' });
      await until('the update reached the client', () => heard.length > 0);
      assert.deepEqual(heard, [{ method: 'notifications/resources/updated', uri: 'subako-mcp://notes/notes://a' }]);
      await sub.close();
    } finally {
      await client.close();
    }
  });

  it('at most 8 streams per session on a replica, and 64 URIs per stream: each refusal says so', async () => {
    const session = await newSession([{ name: 'notes', url: notes.url }]);
    const { client } = await connect(session.url);
    try {
      const subs = [];
      for (let i = 0; i < 8; i += 1) subs.push(await client.listen({ toolsListChanged: true }));
      assert.equal(s.server.platform.listens.openStreams(session.id), 8);
      const ninth = await client.listen({ toolsListChanged: true }).then(() => null, (err: unknown) => err);
      assert.ok(ninth instanceof Error, 'a 9th stream is refused');
      assert.match(ninth.message, /8 listen streams open.*close one to open another/);
      await subs.pop()!.close();
      await until('the closed stream made room', () => s.server.platform.listens.openStreams(session.id) === 7);
      subs.push(await client.listen({ toolsListChanged: true }));
      const uris = Array.from({ length: 65 }, (_, i) => `notes://n${i}`);
      const tooMany = await client.listen({ resourceSubscriptions: uris }).then(() => null, (err: unknown) => err);
      assert.ok(tooMany instanceof Error);
      assert.match(tooMany.message, /at most 64 resource URIs.*named 65/);
      for (const sub of subs) await sub.close();
      await until('every stream closed', () => s.server.platform.listens.openStreams(session.id) === 0);
    } finally {
      await client.close();
    }
  });

  it('a stream hears at most one tools list change per second: a burst is one at once and one at the window\'s end', async () => {
    const session = await newSession([{ name: 'notes', url: notes.url }]);
    const { client, heard } = await connect(session.url);
    try {
      await client.listen({ toolsListChanged: true });
      await until('the session listens to its upstream', () => notes.bus.listenerCount === 1);
      const started = Date.now();
      for (let i = 0; i < 5; i += 1) notes.bus.publish({ kind: 'tools_list_changed' });
      await until('the trailing change', () => heard.length === 2, 10_000);
      assert.ok(Date.now() - started >= 900, 'the second came a window after the first');
      assert.equal(heard.length, 2);
    } finally {
      await client.close();
      await until('the upstream stream closed', () => notes.bus.listenerCount === 0);
    }
  });

  it('publishing a new agent version announces nothing to an existing session (it keeps its version)', async () => {
    const name = `listen-v-${Date.now()}`;
    const agent = await s.call('POST', '/v1/agents', { name, mcp_servers: [{ name: 'notes', url: notes.url, default_policy: 'allow' }] });
    const session = await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    const { client, heard } = await connect(session.body.mcp.capability_url);
    try {
      await client.listen({ toolsListChanged: true });
      const published = await s.call('PUT', `/v1/agents/${agent.body.id}`, { name, mcp_servers: [{ name: 'mail', url: other.url, default_policy: 'allow' }] });
      assert.ok(published.status < 300, JSON.stringify(published.body));
      assert.deepEqual((await client.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name), ['jot']);
      assert.deepEqual(heard, []);
    } finally {
      await client.close();
      await until('the upstream stream closed', () => notes.bus.listenerCount === 0);
    }
  });
});

describe('a server shutting down', () => {
  it('ends its listen streams at once: an open stream does not hold the shutdown to its grace', async () => {
    const own = await startInProcess({ limits: { callTimeoutMs: 10_000 } });
    let closed = false;
    try {
      const agent = await own.call('POST', '/v1/agents', { name: 'listen-shutdown', mcp_servers: [{ name: 'notes', url: notes.url, default_policy: 'allow', definitions: 'follow' }] });
      const session = await own.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
      const { client } = await connect(session.body.mcp.capability_url);
      const sub = await client.listen({ toolsListChanged: true });
      const started = Date.now();
      await own.close();
      closed = true;
      assert.ok(Date.now() - started < 4_000, `closed in ${Date.now() - started} ms, not held by the open stream`);
      await sub.closed;
      await client.close().catch(() => undefined);
      await until('the session stopped listening to its upstream', () => notes.bus.listenerCount === 0);
    } finally {
      if (!closed) await own.close();
    }
  });
});

describe('input requests of prompts/get through a session', () => {
  it('a client that did not declare elicitation is answered -32021 naming it', async () => {
    const session = await newSession([{ name: 'notes', url: notes.url }]);
    const { client } = await connect(session.url);
    try {
      const err = await client.getPrompt({ name: 'confirmed' }).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof ProtocolError, String(err));
      assert.equal(err.code, -32021);
      assert.match(err.message, /elicitation/);
    } finally {
      await client.close();
    }
  });

  it('reaches a client that declared it; the retry brings the answer and the upstream\'s own state back; a tampered state is refused', async () => {
    const session = await newSession([{ name: 'notes', url: notes.url }]);
    const { client } = await connect(session.url, { elicit: true });
    try {
      notes.prompts.length = 0;
      const first = await client.request({ method: 'prompts/get', params: { name: 'confirmed' } } as never, { allowInputRequired: true } as never) as { resultType?: string; requestState?: string; inputRequests?: Record<string, unknown> };
      assert.equal(first.resultType, 'input_required', JSON.stringify(first));
      assert.ok(first.inputRequests?.confirm);
      assert.ok(first.requestState && first.requestState !== 'notes-prompt-state', 'the client carries subako\'s sealed state, not the upstream\'s');
      const retry = await client.request({
        method: 'prompts/get', params: { name: 'confirmed', inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: first.requestState },
      } as never, { allowInputRequired: true } as never) as { messages?: { content: { text: string } }[] };
      assert.equal(retry.messages?.[0].content.text, 'confirmed prompt');
      assert.deepEqual(notes.prompts.map((p) => [p.answered, p.state]), [[false, undefined], [true, 'notes-prompt-state']]);
      const tampered = await client.request({
        method: 'prompts/get', params: { name: 'confirmed', inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: `${first.requestState.slice(0, -4)}AAAA` },
      } as never, { allowInputRequired: true } as never).then(() => null, (e: unknown) => e);
      assert.ok(tampered instanceof ProtocolError);
      assert.equal(tampered.code, -32602);
      assert.equal(notes.prompts.length, 2, 'the upstream saw nothing of the tampered retry');
    } finally {
      await client.close();
    }
  });
});
