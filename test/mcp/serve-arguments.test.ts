/**
 * Serving does not check arguments itself: each source does it its own way (defineTool and remote tools
 * against the schema, function packages in the guest). A plain Tool receives what the client sent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { serve } from '../../src/mcp/serve.js';
import { defineTool } from '../../src/mcp/define-tool.js';
import type { Tool } from '../../src/tool.js';

test('a served tool gets the arguments as sent; a defineTool tool refuses them itself', async () => {
  const received: unknown[] = [];
  const plain: Tool = {
    name: 'plain',
    inputSchema: { type: 'object', properties: { n: { type: 'string' } }, required: ['n'] },
    async call(args) {
      received.push(args);
      return { content: [{ type: 'text', text: 'the tool decides' }], isError: true };
    },
  };
  const strict = defineTool({
    name: 'strict',
    inputSchema: { type: 'object', properties: { n: { type: 'string' } }, required: ['n'] },
    handler: async () => ({ content: [{ type: 'text', text: 'ran' }] }),
  });
  await serve({ plain, strict }, async (url) => {
    const client = new Client({ name: 't', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const a = await client.callTool({ name: 'plain', arguments: { n: 5 } });
      assert.deepEqual(received, [{ n: 5 }]);
      assert.deepEqual(a.content, [{ type: 'text', text: 'the tool decides' }]);
      const b = await client.callTool({ name: 'strict', arguments: { n: 5 } });
      assert.equal(b.isError, true);
      assert.match(JSON.stringify(b.content), /\/n/);
    } finally {
      await client.close();
    }
  });
});
