/**
 * Graceful shutdown of a real `subako serve` (SIGTERM lets a call in flight finish and be recorded), and the
 * `subako pack` / `subako push` commands against it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import { tarArchive, tarEntry } from '../platform/helpers/tar-builder.js';
import { greetPackageDir, probePackageDir, spawnServe, tempDir } from './helpers/harness.js';

const subako = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), ...args], { encoding: 'utf8', env: { ...process.env, ...env } });

describe('graceful shutdown', () => {
  it('SIGTERM lets a call in flight finish and be recorded, then exits 0', async () => {
    const dataDir = tempDir();
    const first = await spawnServe(dataDir, undefined, ['--call-timeout-ms', '1500']);
    await first.call('POST', '/v1/packages', Buffer.from(subakoPack(probePackageDir())));
    const agent = (await first.call('POST', '/v1/agents', { name: 'slow', tools: [{ package: 'probe' }] })).body;
    const session = (await first.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    const inFlight = first.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'timeout', arguments: {} });
    for (let i = 0; i < 100; i += 1) {
      if ((await first.call('GET', `/v1/sessions/${session.id}/calls`)).body.items.length === 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    first.child.kill('SIGTERM');
    const answered = await inFlight;
    assert.equal(answered.status, 200);
    assert.equal(answered.body.call.crash.reason, 'timeout');
    assert.equal(await first.exited, 0);

    const second = await spawnServe(dataDir, first.apiKey);
    try {
      const [record] = (await second.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
      assert.equal(record.outcome, 'crash');
      assert.equal(record.crash.reason, 'timeout', 'the call finished before the server stopped, so it is not "interrupted"');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});

function subakoPack(dir: string): Buffer {
  const out = join(tempDir('subako-pack-'), 'bundle.tar.gz');
  const res = subako(['pack', dir, '-o', out]);
  assert.equal(res.status, 0, res.stderr);
  return readFileSync(out);
}

describe('subako pack and push', () => {
  it('pack writes a bundle; push publishes it and prints its tools; a second push says it is already there', async () => {
    const server = await spawnServe(tempDir());
    try {
      const out = join(tempDir('subako-pack-'), 'greet.tar.gz');
      const packed = subako(['pack', greetPackageDir('3.0.0'), '-o', out]);
      assert.equal(packed.status, 0, packed.stderr);
      assert.ok(existsSync(out));
      const pushed = subako(['push', out, '--server', server.url], { SUBAKO_API_KEY: server.apiKey });
      assert.equal(pushed.status, 0, pushed.stderr);
      assert.match(pushed.stdout, /package greet@3\.0\.0 published/);
      assert.match(pushed.stdout, /greet: Greet someone by name\./);
      const again = subako(['push', out, '--server', server.url, '--api-key', server.apiKey]);
      assert.match(again.stdout, /already published/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('push prints the server\'s problems and exits 1 for a malicious bundle, and without an API key', async () => {
    const server = await spawnServe(tempDir());
    try {
      const bad = join(tempDir('subako-bad-'), 'bad.tar.gz');
      writeFileSync(bad, tarArchive([tarEntry('../../etc/cron.d/x', 'boom')]));
      const pushed = subako(['push', bad, '--server', server.url, '--api-key', server.apiKey]);
      assert.equal(pushed.status, 1);
      assert.match(pushed.stderr, /climbs out of the bundle/);
      assert.match(pushed.stderr, /bundle\.path/);
      // Without a key it says what every platform command says: log in (exit 1, before anything is packed or sent).
      const noKey = subako(['push', bad, '--server', server.url], { SUBAKO_API_KEY: '', SUBAKO_HOME: tempDir('subako-no-login-') });
      assert.equal(noKey.status, 1);
      assert.match(noKey.stderr, /^subako: no API key for http:\/\/127\.0\.0\.1:\d+: run subako login --server/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
