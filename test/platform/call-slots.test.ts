/**
 * Call slots, the fleet-wide half of admission (platform/calls/fleet-slots.ts), on a real PostgreSQL shared by
 * several "replicas" (stores of their own, each with its pool) and on SQLite: an agent's and a session's limits
 * hold for all of them together even when they race for the last slots at once; a slot given back is free again;
 * a replica that dies without giving its slots back stops holding them once its lease lapses, not later.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Secret } from '../../src/common/index.js';
import { PostgresStore, SqliteStore, type Store } from '../../src/platform/store/index.js';
import { FleetSlots } from '../../src/platform/calls/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { until } from '../helpers/eventually.js';
import { tempDir } from '../server/helpers/harness.js';

const HOLD_MS = 60_000;
// The call id names the agent too: a slot one test won (the races pick winners at random) must not be the id
// another test takes, which the store would answer as already taken (ON CONFLICT DO NOTHING).
const slot = (n: number, instanceId: string, agentId = 'agt_a', sessionId = `ses_${n % 3}`) => ({ callId: `call_${agentId}_${instanceId}_${n}`, agentId, sessionId, instanceId });

describe('call slots on PostgreSQL, shared by replicas', () => {
  let db: TestDatabase;
  const stores: PostgresStore[] = [];

  before(async () => {
    db = await createTestDatabase();
    for (let i = 0; i < 3; i++) stores.push(await PostgresStore.open(new Secret(db.url), { maxConnections: 4 }));
    for (const [i, store] of stores.entries()) await store.renewInstanceLease(`ins_${i}`, HOLD_MS);
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await db?.drop();
  });

  it('30 calls of one agent racing from three replicas take exactly the agent\'s share, never more', async () => {
    const taken = await Promise.all(stores.flatMap((store, i) =>
      Array.from({ length: 10 }, (_, n) => store.takeCallSlot(slot(n, `ins_${i}`), { agent: 4, session: 100 }, HOLD_MS))));
    assert.equal(taken.filter(Boolean).length, 4);
    // Another agent is not counted against the first one's share.
    assert.equal(await stores[0].takeCallSlot(slot(99, 'ins_0', 'agt_b'), { agent: 4, session: 100 }, HOLD_MS), true);
  });

  it('a session\'s share holds across replicas too, and a slot given back is free again', async () => {
    const s = (n: number, i: number) => slot(n, `ins_${i}`, 'agt_c', 'ses_one');
    const taken = await Promise.all([0, 1, 2].flatMap((i) => [0, 1].map((n) => stores[i].takeCallSlot(s(n, i), { agent: 10, session: 2 }, HOLD_MS))));
    assert.equal(taken.filter(Boolean).length, 2);
    const holder = [0, 1, 2].flatMap((i) => [0, 1].map((n) => s(n, i)))[taken.indexOf(true)];
    await stores[0].dropCallSlot(holder.callId);
    assert.equal(await stores[2].takeCallSlot(slot(7, 'ins_2', 'agt_c', 'ses_one'), { agent: 10, session: 2 }, HOLD_MS), true);
    assert.equal(await stores[2].takeCallSlot(slot(8, 'ins_2', 'agt_c', 'ses_one'), { agent: 10, session: 2 }, HOLD_MS), false);
  });

  it('a replica that dies holding slots holds them no longer than its lease', async () => {
    const LEASE_MS = 1_500;
    await stores[1].renewInstanceLease('ins_dead', LEASE_MS);
    for (let n = 0; n < 2; n++) assert.equal(await stores[1].takeCallSlot(slot(n, 'ins_dead', 'agt_d'), { agent: 2, session: 10 }, HOLD_MS), true);
    const leased = Date.now();
    assert.equal(await stores[0].takeCallSlot(slot(0, 'ins_0', 'agt_d'), { agent: 2, session: 10 }, HOLD_MS), false, 'the dead replica\'s slots count while its lease holds');
    // It is never renewed: once the lease lapses its slots count no more, for every replica, before any sweep.
    await until('the dead replica\'s slots lapse with its lease', () => stores[0].takeCallSlot(slot(1, 'ins_0', 'agt_d'), { agent: 2, session: 10 }, HOLD_MS), 10_000);
    assert.ok(Date.now() - leased >= LEASE_MS - 200, 'not before its lease ran out');
    // The sweep that marks a dead replica's calls drops its slots too.
    await stores[2].interruptOrphanedCalls();
    const left = await new PostgresStoreProbe(db.url).count('ins_dead');
    assert.equal(left, 0);
  });

  it('FleetSlots waits for a slot another replica frees, and gives up at the deadline', async () => {
    const limits = () => ({ agent: 1, session: 1 });
    const here = new FleetSlots({ store: stores[0], instanceId: 'ins_0', limits });
    const there = new FleetSlots({ store: stores[1], instanceId: 'ins_1', limits });
    const first = { callId: 'call_w1', agentId: 'agt_w', sessionId: 'ses_w' };
    assert.equal(await there.take(first, () => HOLD_MS, new AbortController().signal), 'run');
    const deadline = Date.now() + 300;
    assert.equal(await here.take({ ...first, callId: 'call_w2' }, () => Math.max(0, deadline - Date.now()), new AbortController().signal), 'timeout');
    const waiting = here.take({ ...first, callId: 'call_w3' }, () => HOLD_MS, new AbortController().signal);
    there.release(first.callId);
    assert.equal(await waiting, 'run');
    const aborted = new AbortController();
    const cancelled = here.take({ ...first, callId: 'call_w4' }, () => HOLD_MS, aborted.signal);
    aborted.abort();
    assert.equal(await cancelled, 'aborted');
  });
});

describe('call slots on SQLite (one process: the same rules)', () => {
  let store: Store;
  const dir = tempDir('subako-slots-');
  before(async () => {
    store = new SqliteStore(join(dir, 'subako.db'));
    await store.renewInstanceLease('ins_0', HOLD_MS);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes up to the agent\'s and the session\'s share, and frees on release', async () => {
    const taken = await Promise.all(Array.from({ length: 6 }, (_, n) => store.takeCallSlot(slot(n, 'ins_0'), { agent: 3, session: 2 }, HOLD_MS)));
    assert.equal(taken.filter(Boolean).length, 3);
    await store.dropCallSlot(slot(taken.indexOf(true), 'ins_0').callId);
    assert.equal(await store.takeCallSlot(slot(10, 'ins_0', 'agt_a', 'ses_new'), { agent: 3, session: 2 }, HOLD_MS), true);
  });
});

/** Reads the slots table directly (what the sweep left). */
class PostgresStoreProbe {
  constructor(private readonly url: string) {}
  async count(instanceId: string): Promise<number> {
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      return Number((await client.query('SELECT count(*) AS n FROM call_slots WHERE instance_id = $1', [instanceId])).rows[0].n);
    } finally {
      await client.end();
    }
  }
}
