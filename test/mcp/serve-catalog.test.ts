/**
 * Resources, resource templates and prompts through `mcp.serve`: `defineResource` and `definePrompt` entries of
 * the served toolbox are listed (a page at a time), read, got and completed by the official v2 client, with the
 * caching hints their definitions give; what a served toolbox does not have is refused as MCP says. And the
 * other way: `mcp.catalog` reads a remote server's catalog (here the one served), which `mcp.serve` can serve on.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport, ProtocolError } from '@modelcontextprotocol/client';
import { mcp, defineTool, defineResource, definePrompt, type ServedToolbox } from '../../src/mcp/index.js';

const readme = defineResource({
  uri: 'docs://readme', name: 'readme', title: 'Read me', mimeType: 'text/markdown', cache: { ttlMs: 30_000, cacheScope: 'public' },
  read: () => '# Hello',
});
const logo = defineResource({ uri: 'docs://logo.png', name: 'logo', mimeType: 'image/png', read: () => new Uint8Array([137, 80, 78, 71]) });
const page = defineResource({ uri: 'docs://page', name: 'page', read: () => 'page' });
const chapter = defineResource({
  uriTemplate: 'book://chapters/{number}', name: 'chapter', mimeType: 'text/plain',
  read: (_uri, { number }) => `Chapter ${String(number)}`,
  complete: { number: (value) => ['1', '2', '10', '11', '12'].filter((n) => n.startsWith(value)) },
});
const greet = definePrompt({
  name: 'greet', description: 'Greets someone.', arguments: [{ name: 'name', required: true }, { name: 'tone' }],
  get: ({ name, tone }) => `Say hello to ${name}${tone ? ` in a ${tone} tone` : ''}.`,
  complete: { tone: (value) => ['warm', 'wry', 'formal'].filter((t) => t.startsWith(value)) },
});
const many = definePrompt({ name: 'many', get: () => Array.from({ length: 150 }, (_, i) => String(i)).join(',') });
const echo = defineTool({ name: 'echo', inputSchema: { type: 'object' }, handler: (args) => args });

const served: ServedToolbox = { echo, readme, logo, page, chapter, greet, many };

async function connected<T>(url: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'catalog-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

describe('defineResource and definePrompt through mcp.serve', () => {
  it('declares resources, prompts and completions, and serves the tools beside them', async () => {
    await mcp.serve(served, (url) => connected(url, async (client) => {
      const capabilities = client.getServerCapabilities()!;
      assert.ok(capabilities.resources && capabilities.prompts && capabilities.completions, JSON.stringify(capabilities));
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['echo']);
    }));
  });

  it('lists resources a page at a time (pageSize 2), each with its fields, and the hint of the shortest-lived', async () => {
    await mcp.serve(served, (url) => connected(url, async (client) => {
      const one = await client.request({ method: 'resources/list', params: {} } as never) as { resources: { uri: string; name: string; mimeType?: string }[]; nextCursor?: string; ttlMs: number; cacheScope: string };
      assert.deepEqual(one.resources.map((r) => r.uri), ['docs://readme', 'docs://logo.png']);
      assert.equal(one.resources[0].mimeType, 'text/markdown');
      assert.ok(one.nextCursor);
      // Not every resource says how long it may be kept: the listing may not be kept, and is private.
      assert.equal(one.ttlMs, 0);
      assert.equal(one.cacheScope, 'private');
      const two = await client.listResources({ cursor: one.nextCursor! });
      assert.deepEqual(two.resources.map((r) => r.uri), ['docs://page']);
      assert.equal(two.nextCursor, undefined);
      await assert.rejects(client.listResources({ cursor: 'not-a-cursor' }), (err: unknown) => err instanceof ProtocolError && err.code === -32602);
    }), { pageSize: 2 });
  });

  it('reads a text resource with its hint, a binary one as base64, and a template\'s match with its variables', async () => {
    await mcp.serve(served, (url) => connected(url, async (client) => {
      const text = await client.readResource({ uri: 'docs://readme' }, { cacheMode: 'bypass' } as never) as { contents: unknown[]; ttlMs?: number; cacheScope?: string };
      assert.deepEqual(text.contents, [{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# Hello' }]);
      assert.equal(text.ttlMs, 30_000);
      assert.equal(text.cacheScope, 'public');
      const blob = await client.readResource({ uri: 'docs://logo.png' });
      assert.deepEqual(blob.contents, [{ uri: 'docs://logo.png', mimeType: 'image/png', blob: Buffer.from([137, 80, 78, 71]).toString('base64') }]);
      const templates = await client.listResourceTemplates();
      assert.deepEqual(templates.resourceTemplates.map((t) => t.uriTemplate), ['book://chapters/{number}']);
      const third = await client.readResource({ uri: 'book://chapters/3' });
      assert.deepEqual(third.contents, [{ uri: 'book://chapters/3', mimeType: 'text/plain', text: 'Chapter 3' }]);
      await assert.rejects(client.readResource({ uri: 'docs://nothing' }), (err: unknown) => err instanceof ProtocolError && err.code === -32602);
    }));
  });

  it('gets a prompt with its arguments, refuses one without a required argument, and an unknown one', async () => {
    await mcp.serve(served, (url) => connected(url, async (client) => {
      const prompts = await client.listPrompts();
      assert.deepEqual(prompts.prompts.map((p) => p.name), ['greet', 'many']);
      assert.deepEqual(prompts.prompts[0].arguments, [{ name: 'name', required: true }, { name: 'tone' }]);
      const got = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada', tone: 'warm' } });
      assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'Say hello to Ada in a warm tone.' } }]);
      await assert.rejects(client.getPrompt({ name: 'greet', arguments: {} }), (err: unknown) => err instanceof ProtocolError && err.code === -32602 && /needs the argument name/.test(err.message));
      await assert.rejects(client.getPrompt({ name: 'nope' }), (err: unknown) => err instanceof ProtocolError && err.code === -32602);
    }));
  });

  it('completes a prompt\'s argument and a template\'s variable; an argument without a completer gets none; an inherited name is no completer', async () => {
    await mcp.serve(served, (url) => connected(url, async (client) => {
      const tone = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'tone', value: 'w' } });
      assert.deepEqual(tone.completion.values, ['warm', 'wry']);
      const number = await client.complete({ ref: { type: 'ref/resource', uri: 'book://chapters/{number}' }, argument: { name: 'number', value: '1' } });
      assert.deepEqual(number.completion.values, ['1', '10', '11', '12']);
      const none = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'A' } });
      assert.deepEqual(none.completion.values, []);
      const inherited = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'constructor', value: '' } });
      assert.deepEqual(inherited.completion.values, []);
      await assert.rejects(client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } }),
        (err: unknown) => err instanceof ProtocolError && err.code === -32602);
    }));
  });

  it('a toolbox of tools only declares neither resources nor prompts', async () => {
    await mcp.serve({ echo }, (url) => connected(url, async (client) => {
      const capabilities = client.getServerCapabilities()!;
      assert.equal(capabilities.resources, undefined);
      assert.equal(capabilities.prompts, undefined);
    }));
  });

  it('refuses definitions without what they need, and an entry that is neither a tool nor a definition', async () => {
    assert.throws(() => defineResource({ name: 'x', read: () => '' } as never), /exactly one of uri/);
    assert.throws(() => defineResource({ uri: 'no scheme', name: 'x', read: () => '' }), /not a URI/);
    assert.throws(() => defineResource({ uri: 'a://b', name: 'x', read: () => '', cache: { ttlMs: -1 } }), /ttlMs/);
    assert.throws(() => definePrompt({ name: '', get: () => '' }), /name/);
    await assert.rejects(mcp.serve({ nothing: { kind: 'other' } } as never, async () => undefined), /neither a tool nor a resource or prompt/);
  });
});

describe('mcp.catalog: a remote server\'s resources and prompts', () => {
  it('reads what the server declares, lists, reads, gets and completes through it, and serves it on', async () => {
    await mcp.serve(served, async (upstreamUrl) => {
      const remote = await mcp.catalog({ url: upstreamUrl });
      assert.deepEqual(remote.capabilities, { resources: true, prompts: true, completions: true });
      const listed = await remote.listResources(undefined, {});
      assert.deepEqual(listed.resources.map((r) => r.uri), ['docs://readme', 'docs://logo.png', 'docs://page']);
      assert.equal((await remote.readResource('docs://readme', {})).contents[0].text, '# Hello');
      assert.equal((await remote.getPrompt('greet', { name: 'Bo' }, {})).messages[0].content.text, 'Say hello to Bo.');
      // Served on: a proxy of the remote catalog beside no tools at all.
      await mcp.serve({}, (url) => connected(url, async (client) => {
        assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ['greet', 'many']);
        const read = await client.readResource({ uri: 'book://chapters/7' });
        assert.equal((read.contents[0] as { text: string }).text, 'Chapter 7');
      }), { catalog: remote });
      await assert.rejects(mcp.serve({ readme }, async () => undefined, { catalog: remote }), /either as entries/);
    });
    await mcp.close();
  });
});
