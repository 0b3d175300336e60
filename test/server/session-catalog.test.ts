/**
 * Issue 27, point 1: an agent's remote servers' resources, resource templates and prompts through the session's MCP
 * endpoint, named per server — resources and templates as `subako-mcp://<server>/<the server's URI>`, prompts by the
 * tools' prefix rule — listed a page at a time (a resource listing continues across servers on a sealed cursor),
 * read, got and completed, each answer private to the session and kept at most a minute. Function packages add
 * none. What an upstream lists is not trusted: unusable names and URIs are left out, and a prompt name inside
 * another source's prefix is not served bare.
 *
 * Real parts only: two upstreams on loopback — a low-level v2 `Server` that pages its resources two at a time and
 * lists hostile entries, and a v2 `McpServer` built the usual way (registerResource, ResourceTemplate, registerPrompt,
 * completable) — the platform server in this process, and the official v2 client on the session.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer, ResourceTemplate, Server, completable } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
let docs: { url: string; stop(): Promise<void> };
let wiki: { url: string; stop(): Promise<void> };
/** What reached the upstreams, as they received it. */
const reads: string[] = [];
const gotPrompts: { server: string; name: string; args: unknown }[] = [];
const completions: { server: string; ref: unknown; argument: unknown }[] = [];

const DOC_RESOURCES = [
  { uri: 'doc://a', name: 'a', mimeType: 'text/plain' },
  { uri: 'doc://b', name: 'b' },
  // Hostile: a URI with a control character (a line break that would forge a log line), and one with no scheme.
  { uri: 'doc://evil\u000aX', name: 'evil' },
  { uri: 'no-scheme', name: 'noscheme' },
  { uri: 'doc://c', name: 'c', description: 'the third' },
];

/** The docs upstream: a low-level server, so it pages as it likes and says what it likes. */
function docsServer(): Server {
  const server = new Server({ name: 'docs', version: '1.0.0' }, { capabilities: { resources: {}, prompts: {}, completions: {} } });
  server.setRequestHandler('resources/list', async (request) => {
    const offset = request.params?.cursor === undefined ? 0 : Number(request.params.cursor);
    const next = offset + 2 < DOC_RESOURCES.length ? String(offset + 2) : undefined;
    return { resources: DOC_RESOURCES.slice(offset, offset + 2), ttlMs: 120_000, cacheScope: 'public', ...(next ? { nextCursor: next } : {}) } as never;
  });
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [{ uriTemplate: 'file:///{path}', name: 'files' }, { uriTemplate: 'bad\u202etemplate://{x}', name: 'bidi' }],
  }) as never);
  server.setRequestHandler('resources/read', async (request) => {
    reads.push(`docs ${request.params.uri}`);
    if (!request.params.uri.startsWith('doc://') && !request.params.uri.startsWith('file:///')) {
      throw new ProtocolError(-32602, `no resource ${request.params.uri}`, { uri: request.params.uri });
    }
    return { contents: [{ uri: request.params.uri, text: `the text of ${request.params.uri}` }], ttlMs: 300_000, cacheScope: 'public' } as never;
  });
  server.setRequestHandler('prompts/list', async () => ({
    prompts: [
      { name: 'summarize', arguments: [{ name: 'topic', required: true }] },
      { name: 'docs_only', description: 'Only docs has it.' },
      // Inside the package greet's prefix: never served under this name.
      { name: 'greet__evil' },
      { name: 'x'.repeat(300) },
    ],
  }) as never);
  server.setRequestHandler('prompts/get', async (request) => {
    gotPrompts.push({ server: 'docs', name: request.params.name, args: request.params.arguments });
    return {
      messages: [
        { role: 'user', content: { type: 'text', text: `summarize ${String(request.params.arguments?.topic)}` } },
        { role: 'user', content: { type: 'resource_link', uri: 'doc://a', name: 'a' } },
        { role: 'user', content: { type: 'resource', resource: { uri: 'doc://b', text: 'b' } } },
      ],
    } as never;
  });
  server.setRequestHandler('completion/complete', async (request) => {
    completions.push({ server: 'docs', ref: request.params.ref, argument: request.params.argument });
    return { completion: { values: ['alpha', 'alps', 'x'.repeat(5000)].filter((v) => v.startsWith(request.params.argument.value)) } } as never;
  });
  return server;
}

/** The wiki upstream: an McpServer as its authors usually write one. */
function wikiServer(): McpServer {
  const server = new McpServer({ name: 'wiki', version: '1.0.0' });
  server.registerResource('home', 'wiki://home', { mimeType: 'text/markdown' }, async (uri) => {
    reads.push(`wiki ${uri.href}`);
    return { contents: [{ uri: uri.href, text: '# Home' }] };
  });
  server.registerResource('page', new ResourceTemplate('wiki://pages/{title}', {
    list: undefined,
    complete: { title: (value) => { completions.push({ server: 'wiki', ref: 'pages', argument: value }); return ['Ada', 'Alan', 'Grace'].filter((t) => t.startsWith(value)); } },
  }), {}, async (uri, { title }) => {
    reads.push(`wiki ${uri.href}`);
    return { contents: [{ uri: uri.href, text: `page ${String(title)}` }] };
  });
  server.registerPrompt('summarize', {
    description: 'Summarize a wiki page.',
    argsSchema: z.object({ page: completable(z.string(), (value) => ['Ada', 'Grace'].filter((t) => t.startsWith(value))) }),
  }, ({ page }) => {
    gotPrompts.push({ server: 'wiki', name: 'summarize', args: { page } });
    return { messages: [{ role: 'user', content: { type: 'text', text: `summarize the page ${page}` } }] };
  });
  return server;
}

async function sessionOf(body: Record<string, unknown>): Promise<string> {
  const agent = await s.call('POST', '/v1/agents', { name: `catalog-${Date.now()}-${Math.random()}`, ...body });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  return session.body.mcp.capability_url;
}

async function connected<T>(url: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'session-catalog-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

const invalidParams = (err: unknown) => err instanceof ProtocolError && err.code === -32602;

let url: string;

before(async () => {
  s = await startInProcess({ limits: { callTimeoutMs: 10_000 } });
  docs = await serveMcpServer(docsServer as never);
  wiki = await serveMcpServer(wikiServer);
  url = await sessionOf({ tools: [{ package: 'greet' }], mcp_servers: [{ name: 'docs', url: docs.url }, { name: 'wiki', url: wiki.url }] });
});
after(async () => {
  await s?.close();
  await docs?.stop();
  await wiki?.stop();
});

describe('resources through a session', () => {
  it('the session declares resources, prompts and completions when its agent has remote servers; a package-only agent\'s does not', async () => {
    await connected(url, async (client) => {
      const capabilities = client.getServerCapabilities()!;
      assert.ok(capabilities.resources && capabilities.prompts && capabilities.completions, JSON.stringify(capabilities));
    });
    const packagesOnly = await sessionOf({ tools: [{ package: 'greet' }] });
    await connected(packagesOnly, async (client) => {
      const capabilities = client.getServerCapabilities()!;
      assert.equal(capabilities.resources, undefined);
      assert.equal(capabilities.prompts, undefined);
    });
  });

  it('lists every server\'s resources under subako-mcp://<server>/, across the docs server\'s pages, leaving out unusable URIs', async () => {
    await connected(url, async (client) => {
      const all = await client.listResources();
      assert.deepEqual(all.resources.map((r) => r.uri), [
        'subako-mcp://docs/doc://a', 'subako-mcp://docs/doc://b', 'subako-mcp://docs/doc://c', 'subako-mcp://wiki/wiki://home',
      ]);
      assert.equal(all.resources[0].mimeType, 'text/plain');
      assert.equal(all.resources[2].description, 'the third');
    });
  });

  it('pages: private to the session, kept at most a minute, the cursor sealed (an altered one is refused)', async () => {
    await connected(url, async (client) => {
      const first = await client.request({ method: 'resources/list', params: {} } as never) as { resources: { uri: string }[]; nextCursor?: string; ttlMs: number; cacheScope: string };
      assert.deepEqual(first.resources.map((r) => r.uri), ['subako-mcp://docs/doc://a', 'subako-mcp://docs/doc://b']);
      assert.equal(first.cacheScope, 'private'); // the docs server said public: a session is an authorization context of its own
      assert.equal(first.ttlMs, 60_000); // it said two minutes
      assert.ok(first.nextCursor !== undefined && first.nextCursor !== '2', 'the server\'s own cursor is not shown as it is');
      const at = first.nextCursor.length - 3;
      const altered = `${first.nextCursor.slice(0, at)}${first.nextCursor[at] === 'A' ? 'B' : 'A'}${first.nextCursor.slice(at + 1)}`;
      await assert.rejects(client.listResources({ cursor: altered }), invalidParams);
      await assert.rejects(client.listResources({ cursor: '2' }), invalidParams);
    });
  });

  it('reads a resource from its own server by its own URI, the contents renamed back; a bare or unknown URI is refused', async () => {
    await connected(url, async (client) => {
      reads.length = 0;
      const read = await client.request({ method: 'resources/read', params: { uri: 'subako-mcp://docs/doc://b' } } as never) as { contents: unknown[]; ttlMs: number; cacheScope: string };
      assert.deepEqual(read.contents, [{ uri: 'subako-mcp://docs/doc://b', text: 'the text of doc://b' }]);
      assert.equal(read.cacheScope, 'private');
      assert.equal(read.ttlMs, 60_000);
      const home = await client.readResource({ uri: 'subako-mcp://wiki/wiki://home' });
      assert.deepEqual(home.contents, [{ uri: 'subako-mcp://wiki/wiki://home', text: '# Home' }]);
      assert.deepEqual(reads, ['docs doc://b', 'wiki wiki://home']);
      await assert.rejects(client.readResource({ uri: 'doc://b' }), invalidParams);
      await assert.rejects(client.readResource({ uri: 'subako-mcp://nosuch/doc://b' }), invalidParams);
      await assert.rejects(client.readResource({ uri: 'subako-mcp://docs/nothing://here' }), invalidParams);
      // A server cannot be reached through another's name: docs' URI naming wiki is read from docs.
      reads.length = 0;
      await assert.rejects(client.readResource({ uri: 'subako-mcp://docs/subako-mcp://wiki/wiki://home' }), invalidParams);
      assert.deepEqual(reads, ['docs subako-mcp://wiki/wiki://home']);
    });
  });

  it('templates keep working through the prefix: an expansion is read from its server with the server\'s own expansion', async () => {
    await connected(url, async (client) => {
      const templates = await client.listResourceTemplates();
      assert.deepEqual(templates.resourceTemplates.map((t) => t.uriTemplate), ['subako-mcp://docs/file:///{path}', 'subako-mcp://wiki/wiki://pages/{title}']);
      reads.length = 0;
      const page = await client.readResource({ uri: 'subako-mcp://wiki/wiki://pages/Ada' });
      assert.deepEqual(page.contents, [{ uri: 'subako-mcp://wiki/wiki://pages/Ada', text: 'page Ada' }]);
      assert.deepEqual(reads, ['wiki wiki://pages/Ada']);
    });
  });
});

describe('prompts and completion through a session', () => {
  it('names prompts by the tools\' rule: a shared name is prefixed for both, a free one kept, one inside a package\'s prefix never served bare', async () => {
    await connected(url, async (client) => {
      const names = (await client.listPrompts()).prompts.map((p) => p.name).sort();
      assert.deepEqual(names, ['docs__greet__evil', 'docs__summarize', 'docs_only', 'wiki__summarize']);
    });
  });

  it('gets a prompt from its server by the server\'s name for it; resources it embeds or links are renamed as the session names them', async () => {
    await connected(url, async (client) => {
      gotPrompts.length = 0;
      const wikiPrompt = await client.getPrompt({ name: 'wiki__summarize', arguments: { page: 'Ada' } });
      assert.deepEqual(wikiPrompt.messages, [{ role: 'user', content: { type: 'text', text: 'summarize the page Ada' } }]);
      const docsPrompt = await client.getPrompt({ name: 'docs__summarize', arguments: { topic: 'tides' } });
      assert.deepEqual(docsPrompt.messages.map((m) => m.content), [
        { type: 'text', text: 'summarize tides' },
        { type: 'resource_link', uri: 'subako-mcp://docs/doc://a', name: 'a' },
        { type: 'resource', resource: { uri: 'subako-mcp://docs/doc://b', text: 'b' } },
      ]);
      assert.deepEqual(gotPrompts, [{ server: 'wiki', name: 'summarize', args: { page: 'Ada' } }, { server: 'docs', name: 'summarize', args: { topic: 'tides' } }]);
      await assert.rejects(client.getPrompt({ name: 'summarize' }), invalidParams);
    });
  });

  it('completes a prompt\'s argument and a template\'s variable at their servers, with the servers\' names for them; values kept within bounds', async () => {
    await connected(url, async (client) => {
      completions.length = 0;
      const topic = await client.complete({ ref: { type: 'ref/prompt', name: 'docs__summarize' }, argument: { name: 'topic', value: 'al' } });
      assert.deepEqual(topic.completion.values, ['alpha', 'alps']);
      const all = await client.complete({ ref: { type: 'ref/prompt', name: 'docs__summarize' }, argument: { name: 'topic', value: '' } });
      assert.deepEqual(all.completion.values, ['alpha', 'alps'], 'a value over 1024 characters is left out');
      const page = await client.complete({ ref: { type: 'ref/prompt', name: 'wiki__summarize' }, argument: { name: 'page', value: 'G' } });
      assert.deepEqual(page.completion.values, ['Grace']);
      const title = await client.complete({ ref: { type: 'ref/resource', uri: 'subako-mcp://wiki/wiki://pages/{title}' }, argument: { name: 'title', value: 'A' } });
      assert.deepEqual(title.completion.values, ['Ada', 'Alan']);
      assert.deepEqual(completions.filter((c) => c.server === 'docs').map((c) => c.ref), [{ type: 'ref/prompt', name: 'summarize' }, { type: 'ref/prompt', name: 'summarize' }]);
      await assert.rejects(client.complete({ ref: { type: 'ref/resource', uri: 'wiki://pages/{title}' }, argument: { name: 'title', value: '' } }), invalidParams);
    });
  });
});

describe('an agent version with exactly one remote server: its resource URIs served as it wrote them', () => {
  it('lists, reads, expands templates and completes under the server\'s own URIs (a package beside it changes nothing); a prefixed URI names nothing', async () => {
    const single = await sessionOf({ tools: [{ package: 'greet' }], mcp_servers: [{ name: 'wiki', url: wiki.url }] });
    await connected(single, async (client) => {
      assert.deepEqual((await client.listResources()).resources.map((r) => r.uri), ['wiki://home']);
      assert.deepEqual((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate), ['wiki://pages/{title}']);
      reads.length = 0;
      assert.deepEqual((await client.readResource({ uri: 'wiki://home' })).contents, [{ uri: 'wiki://home', text: '# Home' }]);
      assert.deepEqual((await client.readResource({ uri: 'wiki://pages/Grace' })).contents, [{ uri: 'wiki://pages/Grace', text: 'page Grace' }]);
      assert.deepEqual(reads, ['wiki wiki://home', 'wiki wiki://pages/Grace']);
      const title = await client.complete({ ref: { type: 'ref/resource', uri: 'wiki://pages/{title}' }, argument: { name: 'title', value: 'G' } });
      assert.deepEqual(title.completion.values, ['Grace']);
      // The prefixed form is the several-server form: here it is just a URI the wiki server does not have.
      await assert.rejects(client.readResource({ uri: 'subako-mcp://wiki/wiki://home' }), invalidParams);
      assert.deepEqual(reads, ['wiki wiki://home', 'wiki wiki://pages/Grace'], 'the wiki server has no such resource: nothing of it was read');
    });
  });
});
