/**
 * Deleting a session or an agent: the record goes, the injected `stopCalls` step runs while the volume is
 * still where the guests' calls have it, then each volume leaves in one rename and is removed; nothing of
 * it is left. (The attack — a guest swapping in a link during the delete — is test/hostile/delete-during-call.)
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AgentService } from '../../src/platform/agents.js';
import { SessionService, type StopCalls } from '../../src/platform/sessions.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import { Volumes } from '../../src/platform/volumes/volumes.js';

let dir: string;
let store: SqliteStore;
let volumes: Volumes;
let canary: string;
const stops: { sessionIds: readonly string[]; agentId?: string; volumesThere: boolean[] }[] = [];

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'subako-deletion-'));
  store = new SqliteStore(join(dir, 'subako.db'));
  volumes = new Volumes(join(dir, 'volumes'));
  canary = join(dir, 'canary');
  mkdirSync(canary);
  writeFileSync(join(canary, 'keep.txt'), 'host file');
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const stopCalls: StopCalls = async (sessionIds, agentId) => {
  const dirs = sessionIds.map((id) => volumes.sessionDir(id));
  if (agentId !== undefined) dirs.push(volumes.agentDir(agentId));
  stops.push({ sessionIds, agentId, volumesThere: dirs.map((d) => existsSync(d)) });
};

/** A volume as a guest leaves it: files, a nested directory, and links out (relative and absolute). */
function fill(volumeDir: string): void {
  mkdirSync(join(volumeDir, 'a', 'b'), { recursive: true });
  writeFileSync(join(volumeDir, 'a', 'b', 'f'), 'x');
  symlinkSync(canary, join(volumeDir, 'a', 'to-canary'));
  symlinkSync('../../../../canary', join(volumeDir, 'up'));
}

describe('deleting sessions and agents', () => {
  it('a session: stopCalls first, with its volume still in place; then nothing of the volume is left', async () => {
    const agents = new AgentService(store, volumes, stopCalls);
    const sessions = new SessionService(store, volumes, stopCalls);
    const { agent } = await agents.create({ name: 'a' });
    const { session } = await sessions.create(agent.id, {});
    fill(await volumes.sessionTmp(session.id));
    stops.length = 0;
    await sessions.delete(session.id);
    assert.deepEqual(stops, [{ sessionIds: [session.id], agentId: undefined, volumesThere: [true] }]);
    assert.equal(existsSync(volumes.sessionDir(session.id)), false);
    assert.deepEqual(readdirSync(join(dir, 'volumes', '.trash')), []);
    assert.ok(existsSync(join(canary, 'keep.txt')));
  });

  it('an agent: one stopCalls for all its sessions and itself, then every volume goes', async () => {
    const agents = new AgentService(store, volumes, stopCalls);
    const sessions = new SessionService(store, volumes, stopCalls);
    const { agent } = await agents.create({ name: 'b' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { session } = await sessions.create(agent.id, {});
      fill(await volumes.sessionTmp(session.id));
      ids.push(session.id);
    }
    fill(await volumes.agentData(agent.id));
    stops.length = 0;
    const gone: string[] = [];
    await agents.delete(agent.id, (id) => gone.push(id));
    assert.deepEqual(gone.sort(), [...ids].sort());
    assert.equal(stops.length, 1);
    assert.deepEqual([...stops[0].sessionIds].sort(), [...ids].sort());
    assert.equal(stops[0].agentId, agent.id);
    assert.deepEqual(stops[0].volumesThere, [true, true, true, true]);
    for (const id of ids) assert.equal(existsSync(volumes.sessionDir(id)), false);
    assert.equal(existsSync(volumes.agentDir(agent.id)), false);
    assert.deepEqual(readdirSync(join(dir, 'volumes', '.trash')), []);
    assert.ok(existsSync(join(canary, 'keep.txt')));
  });

  it('without a stopCalls step, deletion still works (it resolves at once)', async () => {
    const agents = new AgentService(store, volumes);
    const sessions = new SessionService(store, volumes);
    const { agent } = await agents.create({ name: 'c' });
    const { session } = await sessions.create(agent.id, {});
    await sessions.delete(session.id);
    assert.equal(existsSync(volumes.sessionDir(session.id)), false);
  });
});

describe('volume directories are made once and afresh after a removal', () => {
  it('a second call finds the made directory without making it; after the volume is removed it is made again', async () => {
    const own = new Volumes(join(dir, 'made-once'));
    const tmp = await own.sessionTmp('ses_0123456789abcdef0123456789ab');
    writeFileSync(join(tmp, 'a.txt'), 'x');
    assert.equal(await own.sessionTmp('ses_0123456789abcdef0123456789ab'), tmp);
    assert.deepEqual(readdirSync(tmp), ['a.txt']);
    assert.equal(await own.remove(['ses_0123456789abcdef0123456789ab']), true);
    assert.equal(existsSync(tmp), false);
    assert.equal(await own.sessionTmp('ses_0123456789abcdef0123456789ab'), tmp);
    assert.deepEqual(readdirSync(tmp), [], 'made again, empty');
  });
});
