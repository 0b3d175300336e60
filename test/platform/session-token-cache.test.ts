/**
 * Sessions kept by token (sessions.ts): a call through a session URL finds its session without a store
 * round trip, and a session that is deleted or expires is refused at once all the same — by `delete`, by the
 * expiry sweep, by an agent's deletion (its `notifyGone`), and by the clock alone before any sweep. Real
 * SQLite underneath; the store is only wrapped to count what reaches it and, in one test, to hold a lookup
 * while a deletion happens.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AgentService } from '../../src/platform/agents.js';
import { SessionService } from '../../src/platform/sessions.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import type { SessionRecord, Store } from '../../src/platform/store/store.js';
import { Volumes } from '../../src/platform/volumes/volumes.js';
import { SteppedClock } from '../helpers/clock.js';

let dir: string;
let sqlite: SqliteStore;
let volumes: Volumes;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'subako-token-cache-'));
  sqlite = new SqliteStore(join(dir, 'subako.db'));
  volumes = new Volumes(join(dir, 'volumes'));
});
after(async () => {
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The real store, with its token lookups counted and, when `hold` is set, held until it resolves. */
function countingStore(): { store: Store; lookups: () => number; hold: (gate: Promise<void> | null) => void } {
  let lookups = 0;
  let gate: Promise<void> | null = null;
  const store = new Proxy(sqlite, {
    get(target, key, receiver) {
      if (key === 'findSessionByTokenHash') {
        return async (hash: string): Promise<SessionRecord | null> => {
          lookups += 1;
          const held = gate;
          const found = await target.findSessionByTokenHash(hash);
          if (held) await held;
          return found;
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as Store;
  return { store, lookups: () => lookups, hold: (next) => { gate = next; } };
}

async function setUp(ttlSeconds = 3600) {
  const counted = countingStore();
  const clock = new SteppedClock();
  const sessions = new SessionService(counted.store, volumes, undefined, clock, { cacheByToken: true });
  const agents = new AgentService(counted.store, volumes);
  const { agent } = await agents.create({ name: 'cache' });
  const { session, token } = await sessions.create(agent.id, { ttl_seconds: ttlSeconds });
  return { ...counted, clock, sessions, agents, agent, session, token };
}

describe('sessions kept by token', () => {
  it('a live session is found by its token once from the store, then from memory', async () => {
    const { sessions, session, token, lookups } = await setUp();
    assert.equal((await sessions.byToken(token))?.id, session.id);
    assert.equal((await sessions.byToken(token))?.id, session.id);
    assert.equal((await sessions.byToken(token))?.id, session.id);
    assert.equal(lookups(), 1);
  });

  it('a deleted session\'s token is refused at once', async () => {
    const { sessions, session, token } = await setUp();
    assert.ok(await sessions.byToken(token));
    await sessions.delete(session.id);
    assert.equal(await sessions.byToken(token), null);
  });

  it('an expired session\'s token is refused at once, before any sweep removed it', async () => {
    const { sessions, token, clock, session } = await setUp(60);
    assert.ok(await sessions.byToken(token));
    clock.advance(61_000);
    assert.equal(await sessions.byToken(token), null);
    // Still in the store (no sweep ran), and still refused on the next lookup.
    assert.ok(await sqlite.getSession(session.id));
    assert.equal(await sessions.byToken(token), null);
  });

  it('a session the expiry sweep removed is refused', async () => {
    const { sessions, token, clock } = await setUp(60);
    assert.ok(await sessions.byToken(token));
    clock.advance(61_000);
    assert.ok((await sessions.sweepExpired()) >= 1);
    clock.advance(-61_000); // even with the clock back before the expiry, the record is gone
    assert.equal(await sessions.byToken(token), null);
  });

  it('a session gone with its agent (notifyGone) is refused at once', async () => {
    const { sessions, agents, agent, token } = await setUp();
    assert.ok(await sessions.byToken(token));
    await agents.delete(agent.id, (id) => sessions.notifyGone(id));
    assert.equal(await sessions.byToken(token), null);
  });

  it('a lookup that raced with a deletion does not keep what it read', async () => {
    const { sessions, session, token, hold, lookups } = await setUp();
    let release!: () => void;
    hold(new Promise<void>((resolve) => { release = resolve; }));
    const racing = sessions.byToken(token); // reads the record, then waits at the gate
    while (lookups() === 0) await new Promise((resolve) => setImmediate(resolve));
    hold(null);
    await sessions.delete(session.id);
    release();
    assert.equal((await racing)?.id, session.id, 'the lookup answered what the store held when it read');
    assert.equal(await sessions.byToken(token), null, 'but did not cache it past the deletion');
  });

  it('a wrong token is never cached: each one asks the store', async () => {
    const { sessions, lookups } = await setUp();
    const before = lookups();
    assert.equal(await sessions.byToken('st_not-a-token'), null);
    assert.equal(await sessions.byToken('st_not-a-token'), null);
    assert.equal(lookups() - before, 2);
  });

  it('without cacheByToken (a store other processes write), every lookup asks the store', async () => {
    const counted = countingStore();
    const sessions = new SessionService(counted.store, volumes);
    const { agent } = await new AgentService(counted.store, volumes).create({ name: 'uncached' });
    const { token } = await sessions.create(agent.id, {});
    await sessions.byToken(token);
    await sessions.byToken(token);
    assert.equal(counted.lookups(), 2);
  });
});
