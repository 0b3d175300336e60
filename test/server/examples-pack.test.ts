/**
 * The example packages loaded at first start are stored exactly as `subako pack` bundles them, so a newcomer
 * who pushes an example (the README's tutorial does) makes the same upload, not a conflicting one (409).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { packPackage } from '../../src/devkit/index.js';
import { FunctionHost } from '../../src/function/index.js';
import { bundleDigest } from '../../src/package/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { startInProcess, type InProcess } from './helpers/harness.js';

let server: InProcess;
before(async () => {
  server = await startInProcess();
});
after(() => server.close());

test('greet as stored at first start is the bundle subako pack makes of it, and pushing it again is accepted', async () => {
  const stored = await server.call('GET', '/v1/packages/greet');
  assert.equal(stored.status, 200, JSON.stringify(stored.body));
  // What `subako pack` / `subako push` make of the example directory.
  const host = new FunctionHost({ poolSize: 1 });
  const packed = await packPackage(join(REPO_ROOT, 'examples', 'packages', 'greet'), host).finally(() => host.close());
  assert.ok(packed.ok, JSON.stringify(packed));
  const versions = stored.body.versions as { version: string; digest: string }[];
  assert.deepEqual(versions.map((v) => v.digest), [bundleDigest(packed.archive)]);
  const again = await server.call('POST', '/v1/packages', packed.archive);
  assert.ok(again.status === 200 || again.status === 201, `${again.status} ${JSON.stringify(again.body)}`);
});
