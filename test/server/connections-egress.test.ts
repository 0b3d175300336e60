/**
 * Issue 28, point 2, for an egress origin: an agent declares a connection for an origin its package reaches (the
 * OAuth provider named by its issuer); a call before the user connected asks for it (a URL-mode input request to a
 * client that can open URLs), and after consent the package's request to that origin carries the user's own token,
 * attached by the egress — the guest never sees it — and another user's carries theirs.
 *
 * Real parts only: `subako serve` as a child process, the ABI probe guest making HTTPS requests to a loopback HTTPS
 * server (the egress tests' CA), the test authorization server, the official v2 client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { packBundle } from '../../src/package/index.js';
import { TestAuthServer } from '../mcp/oauth/auth-server.js';
import { probePackageDir, spawnServe, tempDir, type ChildServer } from './helpers/harness.js';
import { startRecordingEgress, type RecordingEgress } from './helpers/recording-egress.js';
import { consentWithoutPerson, linkIn, mcpClient, textOf, userSession } from './helpers/connections.js';

let server: ChildServer;
let egress: RecordingEgress;
let origin: string;
let auth: TestAuthServer;
let agentId: string;
let seen: (string | undefined)[] = [];
const clients: Client[] = [];

before(async () => {
  egress = await startRecordingEgress('subako-conn');
  ({ origin, seen } = egress);
  const { caFile } = egress;
  auth = await new TestAuthServer().start();
  server = await spawnServe(tempDir(), undefined, ['--allow-private-destinations'], { env: { NODE_EXTRA_CA_CERTS: caFile } });
  assert.equal((await server.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
  const agent = await server.call('POST', '/v1/agents', {
    name: 'crm', tools: [{ package: 'probe', egress: { allow: [new URL(origin).host], grants: [origin] } }],
    connections: [{ name: 'crm', origin, issuer: auth.url, scopes: ['tools:call'] }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  agentId = agent.body.id;
});

after(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await egress?.close();
  await auth?.close();
});

const request = () => ({ name: 'http', arguments: { request: { url: `${origin}/whoami` } } });

describe('a connection for an egress origin', () => {
  it('is asked for before the call runs, then the package\'s request carries the user\'s own token', async () => {
    const ivy = await userSession(server, agentId, 'ivy');
    const manual = await mcpClient(ivy.url, undefined, { manual: true });
    clients.push(manual);
    const asked = await manual.callTool(request(), { allowInputRequired: true } as never) as unknown as {
      resultType: string; inputRequests: Record<string, { params: { mode: string; url: string } }>;
    };
    assert.equal(asked.resultType, 'input_required', JSON.stringify(asked));
    assert.equal(asked.inputRequests.connect_crm.params.mode, 'url');
    assert.equal(seen.length, 0, 'the package did not run');

    assert.equal((await consentWithoutPerson(asked.inputRequests.connect_crm.params.url)).status, 200);
    const authorization = auth.authorizationRequests.at(-1)!;
    assert.equal(authorization.get('resource'), `${origin}/`, 'the token is asked for the origin (RFC 8707)');

    const plain = await mcpClient(ivy.url);
    clients.push(plain);
    const done = await plain.callTool(request());
    assert.notEqual(done.isError, true, textOf(done));
    const header = seen.at(-1)!;
    assert.match(header, /^Bearer at-/);
    const token = header.slice('Bearer '.length);
    assert.equal(auth.introspect(token)?.resource, `${origin}/`);
    assert.ok(!textOf(done).includes(token), 'the guest\'s answer does not hold the token');

    // Another user of the agent: asked for their own, and their request carries their own.
    const jon = await userSession(server, agentId, 'jon');
    const jonClient = await mcpClient(jon.url);
    clients.push(jonClient);
    const first = await jonClient.callTool(request());
    assert.equal(first.isError, true);
    assert.equal((await consentWithoutPerson(linkIn(textOf(first)))).status, 200);
    await jonClient.callTool(request());
    assert.match(seen.at(-1)!, /^Bearer at-/);
    assert.notEqual(seen.at(-1), header, 'each user\'s own token');

    const everything = [server.stdout(), server.stderr(), JSON.stringify((await server.call('GET', `/v1/sessions/${ivy.id}/calls`)).body)].join('\n');
    for (const secret of auth.issuedSecrets) assert.ok(!everything.includes(secret), 'a token or code was shown');
  });
});
