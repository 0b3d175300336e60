/**
 * Client resumption (SEP-1699): a 2025-era server closes a tools/call's SSE stream after the priming event
 * (id + `retry: 100`) and before the result. The call is resumed with GET + Last-Event-ID and returns the result;
 * when the server never serves the resumed stream, the call fails after the bounded tries as a transport error,
 * not by waiting for the 60 s request timeout (each test's own timeout, far below that, would fail it).
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mcp, callTool, McpClientPool, McpServerError } from '../../src/mcp/index.js';
import { RESUMPTION } from '../../src/mcp/resuming-transport.js';
import { startClosingStreamServer, type ClosingStreamServer } from './helpers/closing-stream-server.js';

describe('a response stream the server closes early', () => {
  let server: ClosingStreamServer | undefined;
  let pool: McpClientPool | undefined;
  afterEach(async () => {
    await pool?.closeAll();
    await server?.stop();
  });

  it('is resumed with Last-Event-ID and the call returns the result', { timeout: 15_000 }, async () => {
    server = await startClosingStreamServer({ serveResumption: true });
    pool = new McpClientPool(); // the default 60 s request timeout
    const toolbox = await mcp.tools({ url: server.url, pool });
    const result = await callTool(toolbox.slow!, {});
    assert.deepEqual(result.content, [{ type: 'text', text: 'done after resumption' }]);
    assert.equal(server.closedEarly, 1);
    assert.ok(server.resumes >= 1, 'the client resumed with Last-Event-ID');
    // The connection is still good for the next call.
    const again = await callTool(toolbox.slow!, {});
    assert.deepEqual(again.content, [{ type: 'text', text: 'done after resumption' }]);
    assert.equal(pool.connectsMade, 1);
  });

  it('fails after the bounded tries as a transport error when it cannot be resumed', { timeout: 15_000 }, async () => {
    server = await startClosingStreamServer({ serveResumption: false });
    pool = new McpClientPool();
    const toolbox = await mcp.tools({ url: server.url, pool });
    await assert.rejects(callTool(toolbox.slow!, {}), (err: unknown) => {
      assert.ok(err instanceof McpServerError, String(err));
      assert.equal(err.reason, 'transport');
      assert.match(err.message, /closed the response stream .* before the result, and resuming it failed/);
      return true;
    });
    assert.equal(server.closedEarly, 1);
    assert.equal(server.refusedResumes, RESUMPTION.maxRetries, 'exactly the bounded number of resumption tries');
    // A lost stream is a transport failure: the connection was dropped and the next call makes a new one.
    await assert.rejects(callTool(toolbox.slow!, {}));
    assert.equal(pool.connectsMade, 2);
  });
});
