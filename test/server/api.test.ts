import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ENTRIES, packBundle } from '../../src/package/index.js';
import { tarArchive, tarEntry } from '../platform/helpers/tar-builder.js';
import { EXAMPLES, greetPackageDir, startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
before(async () => { s = await startInProcess(); });
after(async () => { await s.close(); });

/** Everything a bad request could have changed, read back through the API. */
async function snapshot(): Promise<string> {
  const parts = await Promise.all(['/v1/packages', '/v1/skills', '/v1/agents', '/v1/vaults', `/v1/agents/${s.agentId}/sessions`, `/v1/agents/${s.agentId}/versions`]
    .map(async (path) => JSON.stringify((await s.call('GET', `${path}?limit=200`)).body)));
  return parts.join('\n');
}

function assertError(res: { status: number; body: any }, status: number, code?: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(typeof res.body?.error?.code, 'string');
  assert.equal(typeof res.body?.error?.message, 'string');
  if (code) assert.equal(res.body.error.code, code);
}

describe('authentication', () => {
  it('refuses a missing or unknown API key with 401', async () => {
    assertError(await fetch(`${s.url}/v1/packages`).then(async (r) => ({ status: r.status, body: await r.json() })), 401, 'unauthorized');
    const wrong = await fetch(`${s.url}/v1/packages`, { headers: { authorization: 'Bearer sk_nottherightkeyatallreally' } });
    assert.equal(wrong.status, 401);
  });

  it('serves the OpenAPI document and health without a key', async () => {
    assert.equal((await fetch(`${s.url}/v1/openapi.json`)).status, 200);
    assert.equal((await fetch(`${s.url}/v1/health`)).status, 200);
  });
});

describe('packages', () => {
  it('ships with the example package, its tools and schemas', async () => {
    const res = await s.call('GET', '/v1/packages/greet/versions/latest');
    assert.equal(res.status, 200);
    assert.equal(res.body.tools[0].name, 'greet');
    assert.equal(res.body.tools[0].inputSchema.type, 'object');
  });

  it('answers an upload of the same bytes with the stored version, and new bytes under a taken version with 409', async () => {
    // The example as `subako pack` bundles it (the manifest, the module, assets/): what the first start stored.
    const same = await s.call('POST', '/v1/packages', await packBundle(join(EXAMPLES, 'greet'), { only: PACKAGE_ENTRIES }));
    assert.equal(same.status, 200);
    const changed = greetPackageDir('1.0.0');
    writeFileSync(join(changed, 'extra.txt'), 'different bytes');
    assertError(await s.call('POST', '/v1/packages', await packBundle(changed)), 409, 'version_exists');
  });

  it('publishes a new version, lists it, and refuses to delete a version an agent uses', async () => {
    const created = await s.call('POST', '/v1/packages', await packBundle(greetPackageDir('1.1.0')));
    assert.equal(created.status, 201);
    assert.equal((await s.call('GET', '/v1/packages/greet/versions/latest')).body.version, '1.1.0');
    assertError(await s.call('DELETE', '/v1/packages/greet/versions/1.0.0'), 409, 'in_use');
    assert.equal((await s.call('DELETE', '/v1/packages/greet/versions/1.1.0')).status, 204);
    assertError(await s.call('GET', '/v1/packages/greet/versions/1.1.0'), 404);
  });
});

describe('bad input to every kind of route gets a clear 4xx and changes nothing', () => {
  const cases: [string, string, string, () => Promise<unknown> | unknown, number, Record<string, string>?][] = [
    ['a bundle with ../ entries', 'POST', '/v1/packages', () => tarArchive([tarEntry('subako-package.json', '{}'), tarEntry('../../evil', 'x')]), 400],
    ['a bundle with a symlink', 'POST', '/v1/packages', () => tarArchive([tarEntry('module.wasm', '', { type: '2', linkname: '/etc/passwd' })]), 400],
    ['a bundle whose module is not WebAssembly', 'POST', '/v1/packages', async () => {
      const dir = greetPackageDir('9.9.9');
      writeFileSync(join(dir, 'module.wasm'), 'not wasm');
      return packBundle(dir);
    }, 422],
    ['a bundle that is not gzip', 'POST', '/v1/packages', () => Buffer.from('hello'), 400],
    ['a skill without SKILL.md', 'POST', '/v1/skills', () => tarArchive([tarEntry('README.md', 'x')]), 422],
    ['an agent whose name has the wrong type', 'POST', '/v1/agents', () => ({ name: 5 }), 400],
    ['an agent with an unknown field', 'POST', '/v1/agents', () => ({ name: 'a', colour: 'red' }), 400],
    ['an agent granting a package that does not exist', 'POST', '/v1/agents', () => ({ name: 'a', tools: [{ package: 'nope' }] }), 422],
    ['an agent with a bad egress grant', 'POST', '/v1/agents', () => ({ name: 'a', tools: [{ package: 'greet', egress: { grants: ['ftp://x'] } }] }), 422],
    ['an agent with a remote server on plain http', 'POST', '/v1/agents', () => ({ name: 'a', mcp_servers: [{ name: 'r', url: 'http://example.com/mcp' }] }), 422],
    ['an update of an unknown agent', 'PUT', '/v1/agents/agt_00000000000000000000000000ff', () => ({ name: 'a' }), 404],
    ['a vault whose name is a list', 'POST', '/v1/vaults', () => ({ name: [] }), 400],
    ['a credential in an unknown vault', 'POST', '/v1/vaults/vlt_nope/credentials', () => ({ target: 'https://x.com', payload: { auth_scheme: 'static_bearer', token: 't' } }), 404],
    ['a session for an unknown agent', 'POST', '/v1/agents/agt_nope/sessions', () => ({}), 404],
    ['a session with a TTL of the wrong type', 'POST', '/agents/sessions', () => ({ ttl_seconds: 'soon' }), 400],
    ['a session naming an unknown vault', 'POST', '/agents/sessions', () => ({ vault_ids: ['vlt_nope'] }), 422],
    ['a call to an unknown session', 'POST', '/v1/sessions/ses_nope/calls', () => ({ tool: 'greet' }), 404],
    ['malformed JSON', 'POST', '/v1/vaults', () => '{"name": ', 400, { 'content-type': 'application/json' }],
    ['a JSON body sent as text/plain', 'POST', '/v1/vaults', () => JSON.stringify({ name: 'x' }), 415, { 'content-type': 'text/plain' }],
    ['a page limit over 200', 'GET', '/v1/packages?limit=500', () => undefined, 400],
    ['a page limit that is not a number', 'GET', '/v1/agents?limit=ten', () => undefined, 400],
    ['an unknown package', 'GET', '/v1/packages/nope/versions/1.0.0', () => undefined, 404],
    ['an unknown agent version', 'GET', '/agents/versions/99', () => undefined, 404],
    ['an unknown vault', 'DELETE', '/v1/vaults/vlt_nope', () => undefined, 404],
    ['an unknown session', 'DELETE', '/v1/sessions/ses_nope', () => undefined, 404],
    ['a method the path does not serve', 'PATCH', '/v1/agents', () => undefined, 405],
  ];
  for (const [name, method, rawPath, body, status, headers] of cases) {
    it(name, async () => {
      const path = rawPath.startsWith('/agents/') ? `/v1/agents/${s.agentId}${rawPath.slice('/agents'.length)}` : rawPath;
      const before = await snapshot();
      const payload = await body();
      const res = typeof payload === 'string'
        ? await fetch(`${s.url}${path}`, { method, headers: { authorization: `Bearer ${s.apiKey}`, ...headers }, body: payload })
          .then(async (r) => ({ status: r.status, body: await r.json() }))
        : await s.call(method, path, payload);
      assertError(res, status);
      assert.equal(await snapshot(), before);
      assert.deepEqual(readdirSync(join(s.dataDir, 'scratch'), { withFileTypes: true }).length, 0);
    });
  }

  it('a body over the size limit gets 413', async () => {
    const res = await s.call('POST', '/v1/vaults', { name: 'x'.repeat(2 * 1024 * 1024) });
    assertError(res, 413, 'body_too_large');
  });

  it('a package directory with a symlink is refused before it is sent', async () => {
    const dir = greetPackageDir('2.0.0');
    symlinkSync('/etc/passwd', join(dir, 'passwd'));
    await assert.rejects(packBundle(dir));
  });
});

describe('Idempotency-Key', () => {
  it('replays the first answer for the same key and body', async () => {
    const first = await s.call('POST', '/v1/vaults', { name: 'idem' }, { 'idempotency-key': 'k-1' });
    const again = await s.call('POST', '/v1/vaults', { name: 'idem' }, { 'idempotency-key': 'k-1' });
    assert.equal(first.status, 201);
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const vaults = (await s.call('GET', '/v1/vaults?limit=200')).body.items.filter((v: { name: string }) => v.name === 'idem');
    assert.equal(vaults.length, 1);
  });

  it('refuses the same key with another body', async () => {
    await s.call('POST', '/v1/vaults', { name: 'one' }, { 'idempotency-key': 'k-2' });
    assertError(await s.call('POST', '/v1/vaults', { name: 'two' }, { 'idempotency-key': 'k-2' }), 422, 'idempotency_key_reused');
  });

  it('never stores a session token: a replayed session creation answers without it', async () => {
    const first = await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {}, { 'idempotency-key': 'k-3' });
    const again = await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {}, { 'idempotency-key': 'k-3' });
    assert.equal(typeof first.body.token, 'string');
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.body.token, undefined);
  });
});

describe('the OpenAPI document matches the routes', () => {
  it('lists every route the router serves, and nothing else', async () => {
    const doc = (await s.call('GET', '/v1/openapi.json')).body;
    assert.equal(doc.openapi, '3.1.0');
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    const routed = new Set(s.server.routes.map((r) => `${r.method} ${r.path}`));
    assert.deepEqual([...documented].sort(), [...routed].sort());
  });

  it('every documented operation is answered by a route (never "no route", never a 500), and protected ones need a key', async () => {
    const doc = (await s.call('GET', '/v1/openapi.json')).body;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { security: unknown[] }>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const concrete = path.replace(/\{[a-z_]+\}/g, 'x');
        const res = await fetch(`${s.url}${concrete}`, { method: method.toUpperCase() });
        const text = await res.text();
        assert.ok(res.status < 500, `${method} ${path} answered ${res.status}`);
        assert.ok(!text.includes('no route for'), `${method} ${path} is not routed`);
        if (op.security.length > 0) assert.ok([401, 404].includes(res.status), `${method} ${path} answered ${res.status} without a key`);
      }
    }
  });
});
