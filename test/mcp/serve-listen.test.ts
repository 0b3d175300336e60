/**
 * `subscriptions/listen` through `mcp.serve` (MCP 2026-07-28): a toolbox served with `changes: feed` declares
 * list changes (and resource subscriptions beside its resources), and what the host publishes on the feed reaches
 * the official v2 client's listen stream — only what it asked for, a resource update only for a URI it named.
 * Without a feed nothing is honored. A paced endpoint coalesces list changes per kind.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ChangeFeed, mcp, defineTool, defineResource, type ServedToolbox } from '../../src/mcp/index.js';
import { until } from '../helpers/eventually.js';

const echo = defineTool({ name: 'echo', inputSchema: { type: 'object' }, handler: (args) => args });
const readme = defineResource({ uri: 'docs://readme', name: 'readme', read: () => '# Hello' });
const served: ServedToolbox = { echo, readme };

type Heard = { method: string; params?: Record<string, unknown> };

async function listening<T>(url: string, use: (client: Client, heard: Heard[]) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'listen-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  const heard: Heard[] = [];
  for (const method of ['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed', 'notifications/resources/updated'] as const) {
    client.setNotificationHandler(method, (n) => void heard.push({ method: n.method, params: n.params as Record<string, unknown> }));
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    return await use(client, heard);
  } finally {
    await client.close();
  }
}

describe('subscriptions/listen through mcp.serve', () => {
  it('declares listChanged and resource subscriptions when served with a change feed', async () => {
    await mcp.serve(served, (url) => listening(url, async (client) => {
      const caps = client.getServerCapabilities()!;
      assert.deepEqual(caps.tools, { listChanged: true });
      assert.deepEqual(caps.resources, { listChanged: true, subscribe: true });
    }), { changes: new ChangeFeed() });
  });

  it('a published change reaches the listen stream: tools list changes, and updates of the URIs the client named only', async () => {
    const feed = new ChangeFeed();
    await mcp.serve(served, (url) => listening(url, async (client, heard) => {
      const sub = await client.listen({ toolsListChanged: true, resourceSubscriptions: ['docs://readme'] });
      assert.deepEqual(sub.honoredFilter, { toolsListChanged: true, resourceSubscriptions: ['docs://readme'] });
      await until('the stream subscribed to the feed', () => feed.listeners === 1);
      feed.promptsChanged(); // not asked for
      feed.resourceUpdated('docs://other'); // not named
      feed.resourceUpdated('docs://readme');
      feed.toolsChanged();
      await until('two notifications heard', () => heard.length >= 2);
      assert.deepEqual(heard.map((h) => [h.method, h.params?.uri]), [
        ['notifications/resources/updated', 'docs://readme'],
        ['notifications/tools/list_changed', undefined],
      ]);
      await sub.close();
      await until('the closed stream left the feed', () => feed.listeners === 0);
    }), { changes: feed });
  });

  it('without a change feed nothing is honored', async () => {
    await mcp.serve(served, (url) => listening(url, async (client) => {
      assert.equal(client.getServerCapabilities()!.tools?.listChanged, undefined);
      const sub = await client.listen({ toolsListChanged: true }).catch((err: unknown) => err);
      // The SDK acknowledges an empty subset and ends the stream at once (the client reads that as closed or empty).
      if (!(sub instanceof Error)) assert.deepEqual((sub as { honoredFilter: unknown }).honoredFilter, {});
    }));
  });

  it('paced: list changes of one kind within the window reach a stream once at its end, resource updates at once', async () => {
    const feed = new ChangeFeed();
    await mcp.serve(served, (url) => listening(url, async (client, heard) => {
      await client.listen({ toolsListChanged: true, resourceSubscriptions: ['docs://readme'] });
      await until('the stream subscribed to the feed', () => feed.listeners === 1);
      const started = Date.now();
      feed.toolsChanged();
      feed.toolsChanged();
      feed.toolsChanged();
      feed.resourceUpdated('docs://readme');
      feed.resourceUpdated('docs://readme');
      await until('the trailing list change', () => heard.filter((h) => h.method === 'notifications/tools/list_changed').length === 2, 10_000);
      const tools = heard.filter((h) => h.method === 'notifications/tools/list_changed').length;
      assert.equal(tools, 2, 'the first at once, the two others coalesced into one at the window\'s end');
      assert.ok(Date.now() - started >= 900, 'the second came at the end of the window');
      assert.equal(heard.filter((h) => h.method === 'notifications/resources/updated').length, 2);
    }), { changes: feed, listChangedPaceMs: 1000 });
  });
});
