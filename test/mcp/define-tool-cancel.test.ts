/** A TypeScript tool keeps Tool.call's contract on cancellation: the caller's abort is `cancelled`, a rejection. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defineTool } from '../../src/mcp/define-tool.js';
import { CallCancelledError, type CallReport } from '../../src/tool.js';

describe('defineTool and a caller that goes away', () => {
  it('reports cancelled and rejects with CallCancelledError, even when the handler returns something', async () => {
    const tool = defineTool({
      name: 'waits', inputSchema: { type: 'object' },
      handler: (_args, ctx) => new Promise((resolve) => ctx.signal?.addEventListener('abort', () => resolve('stopped early'), { once: true })),
    });
    const controller = new AbortController();
    let report: CallReport | null = null;
    const call = tool.call({}, { signal: controller.signal, report: (r) => { report = r; } });
    controller.abort();
    await assert.rejects(call, (err: unknown) => err instanceof CallCancelledError && err.tool === 'waits');
    assert.equal((report as CallReport | null)?.status, 'cancelled');
  });

  it('a call that finishes without its signal aborting is not cancelled', async () => {
    const tool = defineTool({ name: 'quick', inputSchema: { type: 'object' }, handler: () => 'done' });
    assert.deepEqual(await tool.call({}, { signal: new AbortController().signal }), { content: [{ type: 'text', text: 'done' }] });
  });
});
