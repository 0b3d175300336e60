/**
 * Issue 29, point 5: a credential in a remote MCP server's URL (a token in its path, a key in its query) never
 * reaches what people or the model read. The URL is planted in an agent, the server is reached once (its tools
 * listed) and then stopped, and a call through the session fails on it; then the tool result, the call record
 * (REST), the server's log (info level, access log on), the agent as the API and the CLI show it, and the CLI's
 * own error against that URL are searched for the tokens: none holds them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startModernServer, type RunningServer } from '../mcp/helpers/servers.js';
import { spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { runCli } from './helpers/run-cli.js';

const PATH_TOKEN = 'Kp4vZ8qR2mX7nT1wYb6cJ3hL';
const QUERY_KEY = 'qk9Vd2Fs8Lw3Rp7Xz1Mn5Bt';

describe('a credential in a remote server URL stays out of every output', () => {
  let upstream: RunningServer;
  let server: ChildServer;
  let plantedUrl: string;
  let agentId: string;
  let sessionId: string;
  const seen: Record<string, string> = {};

  before(async () => {
    upstream = await startModernServer();
    plantedUrl = `${upstream.url}/${PATH_TOKEN}?api_key=${QUERY_KEY}`;
    server = await spawnServe(tempDir(), undefined, ['--access-log'], { env: { SUBAKO_LOG_LEVEL: 'info' } });
    const agent = await server.call('POST', '/v1/agents', { name: 'leaky', mcp_servers: [{ name: 'calc', url: plantedUrl }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    agentId = agent.body.id;
    const session = await server.call('POST', `/v1/agents/${agentId}/sessions`, {});
    assert.equal(session.status, 201, JSON.stringify(session.body));
    sessionId = session.body.id;
    const tools = await server.call('GET', `/v1/sessions/${sessionId}/tools`);
    const add = tools.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith('add'));
    assert.ok(add, `the upstream was reached once: ${JSON.stringify(tools.body)}`);
    seen.tools = JSON.stringify(tools.body);
    await upstream.stop();

    const answer = await server.call('POST', `/v1/sessions/${sessionId}/calls`, { tool: add, arguments: { x: 1, y: 2 } });
    seen.result = JSON.stringify(answer.body);
    seen.records = JSON.stringify((await server.call('GET', `/v1/sessions/${sessionId}/calls`)).body);
    seen.agentApi = JSON.stringify((await server.call('GET', `/v1/agents/${agentId}`)).body);
    seen.versionApi = JSON.stringify((await server.call('GET', `/v1/agents/${agentId}/versions/1`)).body);
    const env = { SUBAKO_HOME: tempDir('subako-cli-home-'), SUBAKO_SERVER: server.url, SUBAKO_API_KEY: server.apiKey };
    const agentCli = await runCli(['agents', 'get', agentId], env);
    seen.agentCli = agentCli.stdout + agentCli.stderr;
    const mcpCli = await runCli(['mcp', 'call', '--url', plantedUrl, 'add', '{"x":1,"y":2}'], env);
    seen.mcpCli = mcpCli.stdout + mcpCli.stderr;
    seen.mcpCliStatus = String(mcpCli.status);
  });

  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    await upstream.stop(); // stopped already, unless a test failed before it did
  });

  it('the call failed on the stopped server, saying so with the URL redacted', () => {
    assert.match(seen.result, /cannot reach the MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp\/\[redacted\]\?api_key=\[redacted\]/);
    assert.match(seen.records, /\[redacted\]/);
    assert.equal(seen.mcpCliStatus, '3');
    assert.match(seen.mcpCli, /^subako: cannot reach the MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp\/\[redacted\]\?api_key=\[redacted\] to list tools \(ECONNREFUSED\)\n$/);
  });

  it('the agent as the API (the console\'s agent page) and the CLI show it redacted', () => {
    assert.match(seen.agentApi, /"url":"http:\/\/127\.0\.0\.1:\d+\/mcp\/\[redacted\]\?api_key=\[redacted\]"/);
    assert.match(seen.agentCli, /\[redacted\]/);
  });

  it('sent back as shown, a redacted URL keeps the stored one: the next version still reaches the server', async () => {
    const shown = (await server.call('GET', `/v1/agents/${agentId}`)).body.spec;
    const updated = await server.call('PUT', `/v1/agents/${agentId}`, { name: shown.name, mcp_servers: shown.mcp_servers.map((m: any) => ({ name: m.name, url: m.url })) });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    await upstream.restart();
    const session = await server.call('POST', `/v1/agents/${agentId}/sessions`, {});
    const tools = await server.call('GET', `/v1/sessions/${session.body.id}/tools`);
    assert.ok(tools.body.items.some((t: { name: string }) => t.name.endsWith('add')), JSON.stringify(tools.body));
    assert.ok(upstream.stats.http > 0);
    const typed = await server.call('PUT', `/v1/agents/${agentId}`, { name: shown.name, mcp_servers: [{ name: 'other', url: shown.mcp_servers[0].url }] });
    assert.equal(typed.status, 422, JSON.stringify(typed.body));
    assert.match(JSON.stringify(typed.body), /holds \\"\[redacted\]\\"/);
    await upstream.stop();
  });

  it('no output holds either token: result, record, log, API, CLI', async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    seen.log = server.stderr() + server.stdout();
    assert.match(seen.log, /"component":"http"/, 'the log was written at info level');
    for (const [where, text] of Object.entries(seen)) {
      for (const token of [PATH_TOKEN, QUERY_KEY]) assert.ok(!text.includes(token), `${where} holds ${token}: ${text.slice(0, 2000)}`);
    }
  });
});
