/**
 * One bus key per deployment (platform/nats-key-check.ts): a worker or a replica started with another
 * SUBAKO_SECRET_KEY than the deployment's bus was set up with refuses to start, in one line, instead of
 * starting and then dropping every message the others send (and they its).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../../src/app.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, removeBuckets, runName } from '../helpers/nats.js';
import { tempDir, TEST_KEY } from '../server/helpers/harness.js';

const OTHER_KEY = Buffer.alloc(32, 9).toString('base64');

/** Runs `subako <args>` to its exit (a start that is refused exits at once); stopped by its pid after 60 s. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('exit', (code) => {
    clearTimeout(timer);
    resolve({ code, stdout, stderr });
  }));
}

describe('a process holding another key than the deployment\'s bus', () => {
  const prefix = runName('subako_key');
  const dataDir = tempDir();
  let close: (() => Promise<void>) | undefined;

  before(async () => {
    const { server } = await startServer({ dataDir, port: 0, examplesDir: null, env: { ...process.env, ...TEST_KEY }, nats: { url: SHARED_NATS_URL, prefix } });
    close = () => server.close(5_000);
  });
  after(async () => {
    await close?.();
    await removeBuckets(prefix);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a worker refuses to start, in one line naming the key and what to do', async () => {
    const workerDir = mkdtempSync(join(tmpdir(), 'subako-worker-'));
    try {
      const { code, stdout, stderr } = await run(['worker', '--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--data-dir', workerDir], { SUBAKO_SECRET_KEY: OTHER_KEY });
      assert.equal(code, 1);
      assert.equal(stdout, '');
      assert.equal(stderr, `subako worker: cannot start: the sealing key differs from the one this deployment's NATS bus was set up with (its check is in the bucket ${prefix}_bus); give every replica and worker the same SUBAKO_SECRET_KEY and --nats-prefix\n`);
    } finally {
      rmSync(workerDir, { recursive: true, force: true });
    }
  });

  it('a worker with the deployment\'s key starts', async () => {
    const workerDir = mkdtempSync(join(tmpdir(), 'subako-worker-'));
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'worker', '--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--data-dir', workerDir], {
      env: { ...process.env, ...TEST_KEY }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      child.stdout.on('data', (chunk) => { out += chunk; });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      const started = await Promise.race([
        new Promise<boolean>((resolve) => child.stdout.on('data', () => { if (/taking calls/.test(out)) resolve(true); })),
        exited.then(() => false),
      ]);
      assert.ok(started, `the worker did not start: ${out}`);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(workerDir, { recursive: true, force: true });
    }
  });

  it('a second replica refuses to start, in one line', async () => {
    const otherDir = tempDir();
    try {
      const { code, stderr } = await run(['serve', '--port', '0', '--data-dir', otherDir, '--no-examples', '--nats', SHARED_NATS_URL, '--nats-prefix', prefix], { SUBAKO_SECRET_KEY: OTHER_KEY });
      assert.equal(code, 1);
      assert.equal(stderr, `subako serve: cannot start: the sealing key differs from the one this deployment's NATS bus was set up with (its check is in the bucket ${prefix}_bus); give every replica and worker the same SUBAKO_SECRET_KEY and --nats-prefix\n`);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});
