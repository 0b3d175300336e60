/**
 * Issue 24, point 6: the REST bodies are declared once (zod, src/server/api/). The OpenAPI document shows, for
 * every route, the JSON Schema of the very zod schema the route declares — for its body and for each answer —
 * and the router checks bodies against that same JSON Schema; the answers the server gives match what the
 * document says of them. Real parts only: the platform server in this process, a v2 MCP server upstream on
 * loopback for a held call, and plain HTTP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ZodType } from 'zod';
import { checkAgainstSchema, REQUEST_BODY } from '../../src/common/index.js';
import { jsonSchemaOf } from '../../src/server/json-schema-of.js';
import { serveEchoTool } from '../mcp/helpers/servers.js';
import { startInProcess, type InProcess } from './helpers/harness.js';

interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
}

let s: InProcess;
let upstream: Awaited<ReturnType<typeof serveEchoTool>>;
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

before(async () => {
  upstream = await serveEchoTool();
  s = await startInProcess();
  const answer = await s.call('GET', '/v1/openapi.json');
  assert.equal(answer.status, 200);
  doc = answer.body;
});
after(async () => {
  await s?.close();
  await upstream?.stop();
});

const operation = (method: string, path: string): Operation => {
  const op = doc.paths[path]?.[method.toLowerCase()];
  assert.ok(op, `the document has no ${method} ${path}`);
  return op;
};

describe('the OpenAPI document is generated from the schemas the routes declare', () => {
  it('shows, for every route\'s JSON body and every answer with a schema, the JSON Schema of its zod schema', () => {
    let bodies = 0;
    let answers = 0;
    for (const route of s.server.routes) {
      const op = operation(route.method, route.path);
      if (route.body?.kind === 'json') {
        assert.deepEqual(op.requestBody?.content['application/json'].schema, jsonSchemaOf(route.body.schema), `${route.operationId}: its body`);
        bodies += 1;
      }
      for (const [status, response] of Object.entries(route.responses)) {
        if (!response.schema) continue;
        const content = op.responses[status]?.content?.[response.contentType ?? 'application/json'];
        assert.deepEqual(content?.schema, jsonSchemaOf(response.schema as ZodType), `${route.operationId}: its ${status} answer`);
        answers += 1;
      }
    }
    // Every body the API takes as JSON, and the answers of every route that has one.
    assert.ok(bodies >= 10, `${bodies} JSON bodies`);
    assert.ok(answers >= 40, `${answers} answers`);
  });

  it('describes every JSON body the router checks as a closed object: a field it does not name is refused, whichever route', async () => {
    const checked = s.server.routes.filter((route) => route.body?.kind === 'json' && !route.raw);
    assert.ok(checked.length >= 8);
    for (const route of checked) {
      const schema = operation(route.method, route.path).requestBody!.content['application/json'].schema;
      assert.equal(schema.additionalProperties, false, `${route.operationId}'s body is closed`);
      const path = route.path.replace('{id}', s.agentId).replace(/\{[a-z_]+\}/g, 'x');
      // The body is checked before anything else the route does: the unknown field is what is refused.
      const answer = await s.call(route.method, path, { not_a_field_of_the_api: true });
      assert.equal(answer.status, 400, `${route.operationId}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'invalid_body');
      assert.match(answer.body.error.message, /not_a_field_of_the_api/);
    }
  });

  it('holds what the document says of a body: a body its schema refuses, the route refuses', async () => {
    const refused: [string, string, unknown][] = [
      ['POST', '/v1/vaults', { name: 'v'.repeat(129) }], // maxLength
      ['POST', '/v1/agents', { name: 'a', tools: [{ package: 'Not A Name' }] }], // pattern
      ['POST', '/v1/keys', { name: 'k', scope: 'owner' }], // enum
      ['POST', '/v1/agents/{id}/sessions', { vault_ids: Array.from({ length: 17 }, (_, i) => `vlt_${i}`) }], // maxItems
      ['POST', '/v1/vaults/{id}/credentials', { target: 'https://x.example', payload: { auth_scheme: 'static_headers', headers: {} } }], // minProperties
      ['POST', '/v1/sessions/{id}/approvals/{approval_id}', {}], // required
    ];
    for (const [method, template, body] of refused) {
      const schema = operation(method, template).requestBody!.content['application/json'].schema;
      assert.equal(checkAgainstSchema(schema, body, REQUEST_BODY).ok, false, `the document refuses ${JSON.stringify(body)} for ${template}`);
      const answer = await s.call(method, template.replace('{id}', s.agentId).replace(/\{[a-z_]+\}/g, 'x'), body);
      assert.equal(answer.status, 400, `${method} ${template}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'invalid_body');
    }
  });
});

describe('the answers are what the document says of them', () => {
  /** Calls the route and checks the answer against the document's schema for its status. */
  async function conforming(method: string, template: string, path: string, body?: unknown): Promise<any> {
    const answer = await s.call(method, path, body);
    assert.ok(answer.status < 300, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    if (answer.status === 204) return null;
    const schema = operation(method, template).responses[String(answer.status)]?.content?.['application/json']?.schema;
    assert.ok(schema, `${method} ${template} documents no ${answer.status} answer`);
    const check = checkAgainstSchema(schema, answer.body, REQUEST_BODY);
    assert.ok(check.ok, `${method} ${path}: ${check.ok ? '' : check.problems.map((p) => p.message).join('; ')}\n${JSON.stringify(answer.body).slice(0, 2000)}`);
    return answer.body;
  }

  it('for packages, agents, vaults, sessions, calls and keys', async () => {
    await conforming('GET', '/v1/health', '/v1/health');
    await conforming('GET', '/v1/packages', '/v1/packages');
    await conforming('GET', '/v1/packages/{name}', '/v1/packages/greet');
    await conforming('GET', '/v1/packages/{name}/versions/{version}', '/v1/packages/greet/versions/latest');
    await conforming('GET', '/v1/skills', '/v1/skills');

    const vault = await conforming('POST', '/v1/vaults', '/v1/vaults', { name: 'answers' });
    await conforming('GET', '/v1/vaults', '/v1/vaults');
    await conforming('GET', '/v1/vaults/{id}', `/v1/vaults/${vault.id}`);
    const credential = await conforming('POST', '/v1/vaults/{id}/credentials', `/v1/vaults/${vault.id}/credentials`, {
      target: 'https://api.example.com', payload: { auth_scheme: 'oauth', access_token: 'at', expires_at: '2099-01-01T00:00:00Z' },
    });
    await conforming('GET', '/v1/vaults/{id}/credentials', `/v1/vaults/${vault.id}/credentials`);
    await conforming('GET', '/v1/vaults/{id}/credentials/{credential_id}', `/v1/vaults/${vault.id}/credentials/${credential.id}`);

    const agent = await conforming('GET', '/v1/agents/{id}', `/v1/agents/${s.agentId}`);
    await conforming('GET', '/v1/agents', '/v1/agents');
    const spec = { name: agent.name, description: 'answers', tools: [{ package: 'greet', version: 'latest', egress: { allow: ['api.example.com'] }, data: true }] };
    await conforming('PUT', '/v1/agents/{id}', `/v1/agents/${s.agentId}`, spec);
    await conforming('GET', '/v1/agents/{id}/versions', `/v1/agents/${s.agentId}/versions`);
    await conforming('GET', '/v1/agents/{id}/versions/{version}', `/v1/agents/${s.agentId}/versions/1`);

    const session = await conforming('POST', '/v1/agents/{id}/sessions', `/v1/agents/${s.agentId}/sessions`, { vault_ids: [vault.id] });
    assert.equal(typeof session.token, 'string');
    await conforming('GET', '/v1/agents/{id}/sessions', `/v1/agents/${s.agentId}/sessions`);
    await conforming('GET', '/v1/sessions/{id}', `/v1/sessions/${session.id}`);
    const tools = await conforming('GET', '/v1/sessions/{id}/tools', `/v1/sessions/${session.id}/tools`);
    const answer = await conforming('POST', '/v1/sessions/{id}/calls', `/v1/sessions/${session.id}/calls`, { tool: tools.items[0].name, arguments: { name: 'schema' } });
    await conforming('GET', '/v1/sessions/{id}/calls', `/v1/sessions/${session.id}/calls`);
    await conforming('GET', '/v1/sessions/{id}/calls/{call_id}', `/v1/sessions/${session.id}/calls/${answer.call.id}`);
    await conforming('GET', '/v1/calls', `/v1/calls?session=${session.id}`);
    await conforming('GET', '/v1/calls/{id}', `/v1/calls/${answer.call.id}`);
    await conforming('GET', '/v1/sessions/{id}/files', `/v1/sessions/${session.id}/files`);

    const key = await conforming('POST', '/v1/keys', '/v1/keys', { name: 'answers', scope: 'read' });
    assert.equal(typeof key.key, 'string');
    await conforming('GET', '/v1/keys', '/v1/keys');
    await conforming('GET', '/v1/keys/current', '/v1/keys/current');
    await conforming('DELETE', '/v1/keys/{id}', `/v1/keys/${key.id}`);
  });

  it('for a call held for approval: the held call, its decision and the call that ran', async () => {
    const agent = await conforming('POST', '/v1/agents', '/v1/agents', {
      name: 'answers-approvals', mcp_servers: [{ name: 'mail', url: upstream.url, default_policy: 'require_approval' }],
    });
    const session = await conforming('POST', '/v1/agents/{id}/sessions', `/v1/agents/${agent.id}/sessions`, {});
    const tools = await conforming('GET', '/v1/sessions/{id}/tools', `/v1/sessions/${session.id}/tools`);
    assert.equal(tools.items[0].requires_approval, true);
    const call = conforming('POST', '/v1/sessions/{id}/calls', `/v1/sessions/${session.id}/calls`, { tool: tools.items[0].name, arguments: { to: 'x' } });
    let held: any[] = [];
    // Wait for the call to be held (a generous ceiling: a loaded machine), then read and decide it.
    for (let i = 0; i < 400 && held.length === 0; i += 1) {
      held = (await conforming('GET', '/v1/sessions/{id}/approvals', `/v1/sessions/${session.id}/approvals`)).items;
      if (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal(held.length, 1, 'the call was held');
    await conforming('GET', '/v1/approvals', '/v1/approvals');
    await conforming('GET', '/v1/sessions/{id}/approvals/{approval_id}', `/v1/sessions/${session.id}/approvals/${held[0].id}`);
    const decided = await conforming('POST', '/v1/sessions/{id}/approvals/{approval_id}', `/v1/sessions/${session.id}/approvals/${held[0].id}`, { decision: 'approve' });
    assert.equal(decided.approval.decision, 'approved');
    const ran = await call;
    assert.equal(ran.call.approval.decision, 'approved');
    await conforming('GET', '/v1/sessions/{id}/calls/{call_id}', `/v1/sessions/${session.id}/calls/${ran.call.id}`);
  });
});
