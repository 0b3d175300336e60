/**
 * Finding 9, leftovers: `kill -9` during an upload left an orphan blob and a `.partial-*` tree that survived
 * restarts. Two ways here. First, the exact leftovers the code writes (a temporary blob, partial trees and
 * skill sets, blobs and trees no record names, an upload's scratch tree, a volume whose session is gone,
 * a trash entry holding a link to a canary outside) are planted in a real data directory, and the platform
 * is opened again: all of them go, and everything a record refers to, or whose name the platform never
 * writes, stays. Second, a real `subako serve` child is killed with SIGKILL at several points of a large
 * upload (each phase told by what it writes), and restarted: nothing of the cut upload remains, and every
 * blob and tree left is a recorded one.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packBundle } from '../../src/package/index.js';
import { startServer } from '../../src/app.js';
import { probePackageDir, skillDir, spawnServe, startInProcess, tempDir, TEST_KEY } from '../server/helpers/harness.js';

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const digestName = (): string => hex(32);
const ls = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).sort() : []);

/** Every name under the content stores and volumes that only an interrupted write leaves. */
function partialNames(dataDir: string): string[] {
  const found: string[] = [];
  for (const store of ['packages', 'skills']) {
    for (const sub of ['blobs', 'trees', 'sets']) {
      for (const name of ls(join(dataDir, store, sub))) if (/\.(tmp|partial)-/.test(name)) found.push(`${store}/${sub}/${name}`);
    }
  }
  for (const name of ls(join(dataDir, 'scratch'))) found.push(`scratch/${name}`);
  for (const name of ls(join(dataDir, 'volumes', '.trash'))) found.push(`volumes/.trash/${name}`);
  return found;
}

describe('finding 9: what an interrupted upload leaves is swept when the platform opens', () => {
  it('the exact leftovers go; recorded blobs, volumes and names the platform never writes stay', async () => {
    const first = await startInProcess({ limits: { callTimeoutMs: 5_000 } });
    const dataDir = first.dataDir;
    const canary = tempDir('subako-canary-');
    writeFileSync(join(canary, 'keep.txt'), 'host file');
    let packageDigest: string;
    let sessionId: string;
    try {
      const pkg = await first.call('POST', '/v1/packages', await packBundle(probePackageDir()));
      assert.equal(pkg.status, 201);
      packageDigest = pkg.body.digest;
      assert.equal((await first.call('POST', '/v1/skills', await packBundle(skillDir('howto')))).status, 201);
      const agent = await first.call('POST', '/v1/agents', { name: 'kept', tools: [{ package: 'probe', data: true }] });
      sessionId = (await first.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id;
      const wrote = await first.call('POST', `/v1/sessions/${sessionId}/calls`, { tool: 'write_file', arguments: { path: '/volume/tmp/kept.txt', text: 'kept' } });
      assert.equal(wrote.status, 200, JSON.stringify(wrote.body));
    } finally {
      await first.close();
    }

    const p = (...parts: string[]): string => join(dataDir, ...parts);
    const orphan = digestName();
    const plant = {
      tmpBlob: p('packages', 'blobs', `${packageDigest}.tar.gz.tmp-${hex(6)}`),
      orphanBlob: p('packages', 'blobs', `${orphan}.tar.gz`),
      orphanTree: p('packages', 'trees', orphan),
      partialTree: p('packages', 'trees', `${digestName()}.partial-${hex(6)}`),
      orphanSkillBlob: p('skills', 'blobs', `${digestName()}.tar.gz`),
      partialSet: p('skills', 'sets', `${digestName()}.partial-${hex(6)}`),
      scratch: p('scratch', `upload-${hex(8)}`),
      orphanVolume: p('volumes', 'sessions', `ses_${hex(14)}`),
      orphanAgentVolume: p('volumes', 'agents', `agt_${hex(14)}`),
      trash: p('volumes', '.trash', `ses_${hex(14)}-${hex(8)}`),
    };
    writeFileSync(plant.tmpBlob, 'half a blob');
    cpSync(p('packages', 'blobs', `${packageDigest}.tar.gz`), plant.orphanBlob);
    mkdirSync(join(plant.orphanTree, 'assets'), { recursive: true });
    writeFileSync(join(plant.orphanTree, 'module.wasm'), 'x');
    for (const dir of [plant.partialTree, plant.partialSet, plant.scratch]) {
      mkdirSync(join(dir, 'a', 'b'), { recursive: true });
      writeFileSync(join(dir, 'a', 'b', 'file'), 'partial');
    }
    writeFileSync(plant.orphanSkillBlob, 'skill bytes');
    mkdirSync(join(plant.orphanVolume, 'tmp'), { recursive: true });
    writeFileSync(join(plant.orphanVolume, 'tmp', 'x'), 'orphan');
    mkdirSync(join(plant.orphanAgentVolume, 'data'), { recursive: true });
    mkdirSync(join(plant.trash, 'tmp', 'busy'), { recursive: true });
    symlinkSync(canary, join(plant.trash, 'tmp', 'busy', 'to-canary'));
    symlinkSync(canary, join(plant.trash, 'tmp', 'canary-dir'));
    // Names the platform never writes: not provably ours, so they stay.
    const foreign = [p('packages', 'blobs', 'README'), p('packages', 'trees', 'notes'), p('volumes', 'sessions', 'not-an-id')];
    for (const path of foreign) writeFileSync(path, 'an operator\'s file');

    const { server } = await startServer({ dataDir, port: 0, workers: 2, env: { ...process.env, ...TEST_KEY } });
    try {
      for (const [what, path] of Object.entries(plant)) assert.equal(existsSync(path), false, `${what} was swept`);
      for (const path of foreign) assert.ok(existsSync(path), `${path} stayed`);
      assert.ok(existsSync(join(canary, 'keep.txt')), 'the canary outside stayed');
      assert.ok(existsSync(p('packages', 'blobs', `${packageDigest}.tar.gz`)), 'the recorded blob stayed');
      assert.ok(existsSync(p('packages', 'trees', packageDigest, 'module.wasm')), 'the recorded tree stayed');
      assert.equal(ls(p('skills', 'blobs')).length, 1, 'the recorded skill blob stayed');
      assert.ok(existsSync(p('volumes', 'sessions', sessionId, 'tmp', 'kept.txt')), 'the live session\'s volume stayed');
      assert.deepEqual(partialNames(dataDir), []);
    } finally {
      await server.close(5_000);
      rmSync(canary, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('SIGKILL of `subako serve` at each phase of an upload, then a restart: nothing of the cut upload remains', async () => {
    const dataDir = tempDir();
    // A package large enough that each phase of its upload takes a while: many assets, written twice.
    const dir = probePackageDir('2.0.0', 'bulky');
    mkdirSync(join(dir, 'assets'));
    for (let i = 0; i < 600; i++) writeFileSync(join(dir, 'assets', `a${i}.txt`), randomBytes(512).toString('hex'));
    writeFileSync(join(dir, 'assets', 'big.bin'), randomBytes(4 << 20));
    const bundle = await packBundle(dir);
    rmSync(dir, { recursive: true, force: true });
    const digest = createHash('sha256').update(bundle).digest('hex');
    const p = (...parts: string[]): string => join(dataDir, ...parts);
    /** The phases of an upload, each told by what it writes (each also has the upload's scratch tree). */
    const phases: [string, () => boolean][] = [
      ['writing the blob', () => ls(p('packages', 'blobs')).some((n) => n.startsWith(digest))],
      ['writing the tree', () => ls(p('packages', 'trees')).some((n) => n.startsWith(`${digest}.partial-`))],
      ['the tree in place', () => ls(p('packages', 'trees')).includes(digest)],
    ];

    let serve = await spawnServe(dataDir);
    const apiKey = serve.apiKey;
    const caught: string[] = [];
    try {
      for (const [phase, seen] of phases) {
        const upload = fetch(`${serve.url}/v1/packages`, {
          method: 'POST', body: new Uint8Array(bundle),
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/gzip' },
        }).then(() => true, () => false);
        let done = false;
        void upload.then(() => { done = true; });
        const deadline = Date.now() + 30_000;
        while (!seen() && !done && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
        serve.child.kill('SIGKILL');
        await serve.exited;
        await upload;
        const found = partialNames(dataDir);
        const unrecordedBlob = ls(p('packages', 'blobs')).some((n) => n.startsWith(digest));
        if (found.length > 0 || unrecordedBlob) caught.push(`${phase}: ${found.map((n) => n.replace(/[0-9a-f]{12,}/g, '…')).join(', ')}${unrecordedBlob ? ' + blob' : ''}`);

        serve = await spawnServe(dataDir, apiKey);
        const recorded = new Set<string>();
        for (const pkg of (await serve.call('GET', '/v1/packages?limit=100')).body.items) recorded.add(pkg.digest);
        assert.deepEqual(partialNames(dataDir), [], `after the kill while ${phase}`);
        for (const name of ls(p('packages', 'blobs'))) assert.ok(recorded.has(name.replace(/\.tar\.gz$/, '')), `blob ${name} has a record`);
        for (const name of ls(p('packages', 'trees'))) assert.ok(recorded.has(name), `tree ${name} has a record`);
        // The cut upload may have been recorded whole just before the kill; start the next phase without it.
        if (recorded.has(digest)) assert.equal((await serve.call('DELETE', '/v1/packages/bulky/versions/2.0.0')).status, 204);
      }
    } finally {
      serve.child.kill('SIGKILL');
      await serve.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
    // The kills landed mid-way: at least the tree's partial write and its blob without a record were seen.
    assert.ok(caught.some((line) => line.startsWith('writing the tree') && line.endsWith('+ blob')), JSON.stringify(caught));
    console.log(`# left by the kills, before the restart swept them: ${JSON.stringify(caught)}`);
  });
});
