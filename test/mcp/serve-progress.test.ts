/**
 * Progress through `mcp.serve`: a `tools/call` with a progressToken gives a defineTool handler `ctx.progress`,
 * and its reports reach the official clients (v2 on 2026-07-28, v1 on the 2025 era) as notifications/progress,
 * in order, before the result. A call without a token gives the handler no reporter. What a tool reports that
 * the spec forbids (progress that does not rise, not a number) is not sent.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcp, defineTool } from '../../src/mcp/index.js';
import type { Toolbox } from '../../src/tool.js';

interface Update { progress: number; total?: number; message?: string }

let sawReporter: boolean[] = [];
const steps = defineTool({
  name: 'steps',
  inputSchema: { type: 'object', properties: {} },
  handler: async (_args, ctx) => {
    sawReporter.push(ctx.progress !== undefined);
    for (let step = 1; step <= 3; step++) {
      ctx.progress?.(step, 3, `step ${step}`);
      // Each report leaves the event loop a turn, as real work between steps would.
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Forbidden by the spec (progress MUST rise) or malformed: dropped on the way out.
    ctx.progress?.(2, 3, 'going back');
    ctx.progress?.(Number.NaN);
    return 'done';
  },
});
const toolbox: Toolbox = { steps };

const EXPECTED: Update[] = [
  { progress: 1, total: 3, message: 'step 1' },
  { progress: 2, total: 3, message: 'step 2' },
  { progress: 3, total: 3, message: 'step 3' },
];

describe('progress through mcp.serve', () => {
  it('an official v2 client with onprogress receives a defineTool\'s three steps in order, then the result', async () => {
    sawReporter = [];
    await mcp.serve(toolbox, async (url) => {
      const client = new Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        assert.equal(client.getProtocolEra(), 'modern');
        const updates: Update[] = [];
        const result = await client.callTool({ name: 'steps', arguments: {} }, { onprogress: (p) => void updates.push(p) });
        assert.deepEqual(result.content, [{ type: 'text', text: 'done' }]);
        assert.deepEqual(updates.map(({ progress, total, message }) => ({ progress, total, message })), EXPECTED);
        // Without onprogress the client sends no token, and the handler has no reporter.
        await client.callTool({ name: 'steps', arguments: {} });
        assert.deepEqual(sawReporter, [true, false]);
      } finally {
        await client.close();
      }
    });
  });

  it('a 2025-era v1 client receives them too', async () => {
    await mcp.serve(toolbox, async (url) => {
      const client = new LegacyClient({ name: 'v1', version: '1' });
      await client.connect(new LegacyTransport(new URL(url)));
      try {
        const updates: Update[] = [];
        const result = await client.callTool({ name: 'steps', arguments: {} }, undefined, { onprogress: (p) => void updates.push(p) });
        assert.deepEqual(result.content, [{ type: 'text', text: 'done' }]);
        assert.deepEqual(updates.map(({ progress, total, message }) => ({ progress, total, message })), EXPECTED);
      } finally {
        await client.close();
      }
    });
  });
});
