/**
 * GET /v1/sessions/{id}/tools answers the session's own token, so it must not hand a session the URL of
 * the agent's remote MCP server: that URL can be a credential (here an mcp.serve capability URL, whose
 * path is the secret), and with it a session could call the upstream directly, past the agent's policy.
 * Found while running the official conformance suite through a session (scripts/conformance.sh).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defineTool, mcp } from '../../src/mcp/index.js';
import { startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
let upstreamUrl: string;
const stopUpstream = new AbortController();
let served: Promise<unknown>;

before(async () => {
  s = await startInProcess();
  const echo = defineTool({ name: 'echo', description: 'Echoes.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, handler: (a: { text?: string }) => a.text ?? '' });
  upstreamUrl = await new Promise<string>((resolve) => {
    served = mcp.serve({ echo }, (url) => { resolve(url); return new Promise(() => undefined); }, { signal: stopUpstream.signal }).catch(() => undefined);
  });
});
after(async () => {
  stopUpstream.abort();
  await served;
  await s.close();
});

describe('a session\'s tool list', () => {
  it('names a remote tool\'s server by origin only, with the session\'s token and with the API key', async () => {
    const secret = new URL(upstreamUrl).pathname.split('/').pop()!;
    assert.ok(secret.length >= 16, upstreamUrl);
    const agent = await s.call('POST', '/v1/agents', { name: `source-${Date.now()}`, mcp_servers: [{ name: 'up', url: upstreamUrl }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;

    const asKeyThenAsSession: Record<string, string>[] = [{}, { authorization: `Bearer ${session.token}` }];
    for (const headers of asKeyThenAsSession) {
      const list = await s.call('GET', `/v1/sessions/${session.id}/tools`, undefined, headers);
      assert.equal(list.status, 200, JSON.stringify(list.body));
      const tool = list.body.items.find((t: { name: string }) => t.name.endsWith('echo'));
      assert.ok(tool, JSON.stringify(list.body));
      assert.deepEqual(tool.source, { kind: 'mcp', url: new URL(upstreamUrl).origin });
      assert.ok(!JSON.stringify(list.body).includes(secret), 'the capability token is not in the answer');
    }
    // The tool still works through the session: only the view changed.
    const call = await s.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'echo', arguments: { text: 'hi' } });
    assert.equal(call.status, 200, JSON.stringify(call.body));
    assert.equal(call.body.result.content[0].text, 'hi');
  });
});
