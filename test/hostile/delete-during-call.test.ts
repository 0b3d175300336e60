/**
 * Finding 3 (high) and the DELETE part of 9: deleting a session while a guest of it is still at work. The
 * guest is played by a racer thread that holds the session's /volume/tmp open by descriptor, as a guest's
 * preopen is, and swaps a full directory `busy` for a symlink to a canary directory outside the data
 * directory, as fast as it can, before, during and after the DELETE (through the real server, with a real
 * call of the session spinning meanwhile). The canary's files are named like busy's, so a removal that
 * followed the link even once would take some. Before the fix, a recursive rm followed the link (and could
 * answer 500 ENOTEMPTY); now every round answers 204, the canary is whole, the volume's path is gone at
 * once, and what the racer kept alive in the trash goes as soon as it stops.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, startInProcess, tempDir, type InProcess } from '../server/helpers/harness.js';
import { startSwapRacer } from './helpers/swap-racer.js';

const ROUNDS = 6;
const FILES = 400;

let s: InProcess;
let agentId: string;
let canary: string;

before(async () => {
  s = await startInProcess({ limits: { callTimeoutMs: 1_500 } });
  assert.equal((await s.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
  const agent = await s.call('POST', '/v1/agents', { name: 'racer', tools: [{ package: 'probe' }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  agentId = agent.body.id;
  canary = tempDir('subako-canary-');
  mkdirSync(join(canary, 'sub'));
  for (let i = 0; i < FILES; i++) writeFileSync(join(canary, `f${i}`), 'host file');
  writeFileSync(join(canary, 'sub', 'deep.txt'), 'host file');
});
after(async () => {
  await s.close();
  rmSync(canary, { recursive: true, force: true });
  rmSync(s.dataDir, { recursive: true, force: true });
});

/** Waits until the session's call is recorded as running, so the DELETE lands while it runs. */
async function untilRunning(sessionId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const calls = await s.call('GET', `/v1/sessions/${sessionId}/calls`);
    if (calls.body?.items?.some((c: { outcome: string }) => c.outcome === 'running')) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the call never started');
}

const canaryIsWhole = (): boolean =>
  readdirSync(canary).length === FILES + 1 && existsSync(join(canary, 'sub', 'deep.txt'));

describe('finding 3: deleting a session while its guest swaps a busy directory for a link outside', () => {
  it(`${ROUNDS} rounds: 204, the canary whole, the volume gone`, async () => {
    const trash = join(s.dataDir, 'volumes', '.trash');
    const inFlight: ReturnType<typeof s.call>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const session = (await s.call('POST', `/v1/agents/${agentId}/sessions`, {})).body;
      const volume = join(s.dataDir, 'volumes', 'sessions', session.id);
      const tmp = join(volume, 'tmp');
      assert.ok(existsSync(tmp), 'the session has its /volume/tmp');
      const racer = await startSwapRacer({
        parent: tmp, name: 'busy', linkTarget: canary, fill: FILES, anchored: true, remakeLink: true,
      });
      const spinning = s.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'timeout', arguments: {} });
      let cycles: number;
      let status: number;
      let volumeStayed: boolean;
      try {
        await untilRunning(session.id);
        status = (await s.call('DELETE', `/v1/sessions/${session.id}`)).status;
        volumeStayed = existsSync(volume);
      } finally {
        cycles = await racer.stop();
      }
      assert.ok(canaryIsWhole(), `round ${round}: the canary lost files (${readdirSync(canary).length} of ${FILES + 1} left)`);
      assert.equal(status, 204, `round ${round}`);
      assert.equal(volumeStayed, false, 'the volume left the sessions directory with the DELETE');
      assert.ok(cycles > 0, 'the racer swapped');
      inFlight.push(spinning);
      // What the racer kept alive went to the trash; the periodic sweep (or the next start) removes it.
      await s.server.platform.volumes.emptyTrash();
      assert.deepEqual(readdirSync(trash).filter((name) => name.startsWith(session.id)), [], 'nothing of the volume is left');
    }
    assert.ok(canaryIsWhole());
    for (const ended of await Promise.all(inFlight)) {
      assert.notEqual(ended.status, 500, `a call in flight ends without a server error: ${JSON.stringify(ended.body)}`);
    }
  });
});
