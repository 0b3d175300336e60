/** Behind a TLS proxy the server's own address is not what clients use: --public-url names it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess } from './helpers/harness.js';

test('with a public URL, a session\'s MCP endpoints are built from it, not from the Host header', async () => {
  const s = await startInProcess({ publicUrl: 'https://tools.example.com/' });
  try {
    const session = await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {});
    assert.equal(session.status, 201);
    assert.match(session.body.mcp.capability_url, /^https:\/\/tools\.example\.com\/mcp\/st_/);
    assert.equal(session.body.mcp.url, `https://tools.example.com/v1/sessions/${session.body.id}/mcp`);
  } finally {
    await s.close();
  }
});
