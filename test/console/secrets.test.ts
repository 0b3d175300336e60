/**
 * No secret reaches the console (issue 15, "Done when"): with secrets planted in vaults (bearer, header and
 * OAuth credentials), API keys and sessions (their tokens and capability URLs), and calls made over REST and
 * over the capability URL that carry a vault secret in their arguments, none of those values appears in the
 * console's HTML, JS or CSS, in any call-stream event, or in any JSON answer the console reads. The one answer
 * that holds a session's credentials is the one that creates it, shown once: it is left out on purpose.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ConsoleFiles } from '../../src/server/console-files.js';
import { startInProcess, type InProcess } from '../server/helpers/harness.js';
import { openSse, type SseEvent } from '../server/helpers/sse.js';
import { requireConsoleBuild } from './helpers.js';

let s: InProcess;
const secrets: string[] = [];
const plant = (label: string): string => {
  const value = `PLANTED-${label}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  secrets.push(value);
  return value;
};
/** Each JSON answer and asset the test read, by what it was. */
const seen: { what: string; text: string }[] = [];
const read = async (path: string): Promise<any> => {
  const answer = await s.call('GET', path);
  assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.body)}`);
  seen.push({ what: `GET ${path}`, text: JSON.stringify(answer.body) });
  return answer.body;
};

let sessionId: string;
let vaultId: string;
let events: SseEvent[] = [];

before(async () => {
  requireConsoleBuild();
  s = await startInProcess();
  secrets.push(s.apiKey);
  const vault = (await s.call('POST', '/v1/vaults', { name: 'planted' })).body;
  vaultId = vault.id;
  const bearer = plant('bearer');
  const header = plant('header');
  const payloads = [
    { target: 'https://api.example.com', payload: { auth_scheme: 'static_bearer', token: bearer } },
    { target: 'https://headers.example.com', payload: { auth_scheme: 'static_headers', headers: { 'x-api-key': header } } },
    {
      target: 'https://oauth.example.com',
      payload: {
        auth_scheme: 'oauth', access_token: plant('access'), expires_at: new Date(Date.now() + 3600_000).toISOString(),
        refresh: { token_endpoint: 'https://oauth.example.com/token', client_id: 'console-test', client_secret: plant('client-secret'), refresh_token: plant('refresh') },
      },
    },
  ];
  for (const body of payloads) {
    const added = await s.call('POST', `/v1/vaults/${vaultId}/credentials`, body);
    assert.equal(added.status, 201, JSON.stringify(added.body));
    seen.push({ what: 'the credential as added', text: JSON.stringify(added.body) });
  }
  const stream = await openSse(`${s.url}/v1/calls/stream`, { authorization: `Bearer ${s.apiKey}` });
  const created = (await s.call('POST', `/v1/agents/${s.agentId}/sessions`, { vault_ids: [vaultId] })).body;
  sessionId = created.id;
  secrets.push(created.token, created.mcp.capability_url, created.mcp.authorization);
  // A second session's credentials too: the lists show both sessions.
  const other = (await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {})).body;
  secrets.push(other.token, other.mcp.capability_url);

  // A REST call whose arguments carry a vault secret (the call log redacts it), and one over the capability URL.
  const rest = await s.call('POST', `/v1/sessions/${sessionId}/calls`, { tool: 'greet', arguments: { name: `it is ${bearer}` } });
  assert.equal(rest.status, 200);
  // Its `result` is the tool's answer as the caller gets it over MCP too (greet echoes the name it was sent); the
  // console shows the call record beside it, redacted, and takes only image bytes from the result.
  seen.push({ what: 'the try-a-tool answer\'s call record', text: JSON.stringify(rest.body.call) });
  const client = new Client({ name: 'secrets-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(created.mcp.capability_url)));
  await client.callTool({ name: 'greet', arguments: { name: header } });
  await client.close();
  for (let i = 0; i < 4; i += 1) events.push(await stream.next());
  stream.close();
});
after(() => s.close());

describe('secrets never reach the console', () => {
  it('are planted where they would show if anything leaked them (a self-check of the test)', async () => {
    assert.ok(secrets.length >= 10);
    const calls = (await read(`/v1/sessions/${sessionId}/calls`)).items;
    assert.equal(calls.length, 2);
    assert.deepEqual(calls.map((c: { via: string }) => c.via).sort(), ['api', 'mcp']);
    assert.match(JSON.stringify(calls[0].arguments), /\[redacted\]/, 'the vault secret in the arguments was there to be redacted');
  });

  it('in no JSON answer the console reads', async () => {
    await read('/v1/agents?limit=200');
    await read(`/v1/agents/${s.agentId}`);
    await read(`/v1/agents/${s.agentId}/versions?limit=200`);
    await read(`/v1/agents/${s.agentId}/sessions?limit=200`);
    await read(`/v1/sessions/${sessionId}`);
    await read(`/v1/sessions/${sessionId}/tools`);
    await read(`/v1/sessions/${sessionId}/files`);
    const calls = await read('/v1/calls?limit=200');
    for (const call of calls.items) await read(`/v1/calls/${call.id}`);
    await read(`/v1/calls?session=${sessionId}&limit=20`);
    await read('/v1/packages?limit=200');
    await read('/v1/packages/greet');
    await read('/v1/vaults?limit=200');
    await read(`/v1/vaults/${vaultId}`);
    const credentials = await read(`/v1/vaults/${vaultId}/credentials?limit=200`);
    assert.equal(credentials.items.length, 3);
    for (const credential of credentials.items) await read(`/v1/vaults/${vaultId}/credentials/${credential.id}`);
    await read('/v1/openapi.json');
    assertClean(seen);
  });

  it('in no call-stream event', () => {
    assert.equal(events.length, 4, 'two calls, each started and ended');
    assertClean(events.map((e) => ({ what: `stream event ${e.id}`, text: `${e.event}\n${e.id}\n${e.data}` })));
  });

  it('in no HTML, JS or CSS asset of the console', async () => {
    const files = new ConsoleFiles();
    assert.ok(files.paths.some((p) => p.endsWith('.js')) && files.paths.includes('/index.html'));
    const assets: { what: string; text: string }[] = [];
    for (const path of [...files.paths, '/', '/calls', `/sessions/${sessionId}`]) {
      const response = await fetch(`${s.url}${path}`);
      assert.equal(response.status, 200, path);
      assets.push({ what: `asset ${path}`, text: await response.text() });
    }
    assertClean(assets);
  });
});

function assertClean(texts: { what: string; text: string }[]): void {
  assert.ok(texts.length > 0);
  for (const { what, text } of texts) {
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `${what} holds a planted secret (${secret.slice(0, 14)}…)`);
      // The bearer form without its scheme, and a capability URL's token alone.
      const token = secret.replace(/^Bearer /, '').split('/').pop()!;
      if (token.length >= 16) assert.ok(!text.includes(token), `${what} holds a planted token (${token.slice(0, 6)}…)`);
    }
  }
}
