/**
 * GET /v1/packages/{name}: a package as a whole — its versions, oldest first, and the latest version with its
 * tools — beside the list (GET /v1/packages) and one version (GET /v1/packages/{name}/versions/{version}).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packBundle } from '../../src/package/index.js';
import { greetPackageDir, startInProcess, type InProcess } from './helpers/harness.js';

let s: InProcess;
before(async () => { s = await startInProcess(); });
after(async () => { await s.close(); });

describe('GET /v1/packages/{name}', () => {
  it('answers the package with every version, oldest first, and the latest version\'s tools', async () => {
    const first = await s.call('GET', '/v1/packages/greet');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body.versions.map((v: { version: string }) => v.version), ['1.0.0']);

    const next = greetPackageDir('1.1.0');
    writeFileSync(join(next, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'greet', description: 'Greets, newer.', version: '1.1.0' }));
    assert.equal((await s.call('POST', '/v1/packages', await packBundle(next))).status, 201);

    const res = await s.call('GET', '/v1/packages/greet');
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'greet');
    assert.equal(res.body.latest_version, '1.1.0');
    assert.equal(res.body.description, 'Greets, newer.');
    assert.deepEqual(res.body.versions.map((v: { version: string }) => v.version), ['1.0.0', '1.1.0']);
    for (const version of res.body.versions) {
      assert.match(version.digest, /^[0-9a-f]{64}$|^sha256:/);
      assert.equal(typeof version.created_at, 'string');
    }
    const latest = await s.call('GET', '/v1/packages/greet/versions/latest');
    assert.deepEqual(res.body.tools, latest.body.tools);
    assert.equal(res.body.tools[0].name, 'greet');
    assert.equal(res.body.tools[0].inputSchema.type, 'object');
  });

  it('answers 404 naming the package when there is none by that name', async () => {
    const res = await s.call('GET', '/v1/packages/nope');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
    assert.match(res.body.error.message, /nope/);
  });

  it('is described in the OpenAPI document', async () => {
    const doc = await (await fetch(`${s.url}/v1/openapi.json`)).json() as { paths: Record<string, Record<string, { operationId: string }>> };
    assert.equal(doc.paths['/v1/packages/{name}']?.get?.operationId, 'getPackageSummary');
  });
});
