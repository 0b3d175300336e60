/**
 * The call log's writes are committed together at the end of the event loop's turn (sqlite-store.ts,
 * postgres-store.ts): what any reader or writer sees is still the order the writes were made in, a write's
 * promise resolves once it is committed, and a write that fails is refused alone. On both stores: a burst of
 * calls leaves every row, ended, and a store closed with writes still held commits them first.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Secret } from '../../src/common/index.js';
import { newId } from '../../src/platform/ids.js';
import { PostgresStore } from '../../src/platform/store/postgres-store.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import type { AgentSpec, CallRecord, Store } from '../../src/platform/store/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

const spec: AgentSpec = { name: 'agent', description: '', tools: [], skills: [], mcp_servers: [], discovery: { mode: 'all', entry: [] } };

async function withSession(): Promise<{ store: SqliteStore; path: string; sessionId: string }> {
  const path = join(mkdtempSync(join(tmpdir(), 'subako-store-writes-')), 'subako.db');
  const store = new SqliteStore(path);
  return { store, path, sessionId: await addSession(store) };
}

async function addSession(store: Store): Promise<string> {
  const agentId = newId('agt');
  const sessionId = newId('ses');
  const now = new Date().toISOString();
  await store.createAgent({ id: agentId, name: 'a', currentVersion: 1, createdAt: now, updatedAt: now }, { agentId, version: 1, spec, createdAt: now });
  await store.addSession({ id: sessionId, agentId, agentVersion: 1, tokenHash: newId('tok'), vaultIds: [], userId: null, createdAt: now, expiresAt: now });
  return sessionId;
}

const running = (sessionId: string): CallRecord => ({
  id: newId('call'), sessionId, via: 'api', tool: 't', arguments: { n: 1 }, outcome: 'running', crash: null, model: [], stderrTail: '',
  egress: [], durationMs: null, startedAt: new Date().toISOString(),
});

describe('the call log\'s writes in the SQLite store', () => {
  it('a call recorded is on disk once its promise resolves (another connection reads it)', async () => {
    const { store, path, sessionId } = await withSession();
    const call = running(sessionId);
    await store.addCall(call);
    const other = new Database(path, { readonly: true });
    assert.equal((other.prepare('SELECT outcome FROM calls WHERE id = ?').get(call.id) as { outcome: string }).outcome, 'running');
    await store.finishCall({ ...call, outcome: 'ok', durationMs: 3 });
    assert.equal((other.prepare('SELECT outcome FROM calls WHERE id = ?').get(call.id) as { outcome: string }).outcome, 'ok');
    other.close();
    await store.close();
  });

  it('a read made before the turn ends sees the writes made before it', async () => {
    const { store, sessionId } = await withSession();
    const call = running(sessionId);
    const written = store.addCall(call);
    const finished = store.finishCall({ ...call, outcome: 'tool_error', durationMs: 1 });
    assert.equal((await store.getCall(sessionId, call.id))?.outcome, 'tool_error');
    await Promise.all([written, finished]);
    await store.close();
  });

  it('a session deleted right after a call was recorded takes the call with it (no row outlives its session)', async () => {
    const { store, path, sessionId } = await withSession();
    const written = store.addCall(running(sessionId));
    await store.deleteSession(sessionId);
    await written;
    const other = new Database(path, { readonly: true });
    assert.equal((other.prepare('SELECT COUNT(*) AS n FROM calls').get() as { n: number }).n, 0);
    other.close();
    await store.close();
  });

  it('a write that fails is refused alone; the others of its turn are kept', async () => {
    const { store, sessionId } = await withSession();
    const good = running(sessionId);
    const orphan = running(newId('ses')); // no such session: the foreign key refuses it
    const results = await Promise.allSettled([store.addCall(good), store.addCall(orphan), store.finishCall({ ...good, outcome: 'ok', durationMs: 2 })]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.match(String((results[1] as PromiseRejectedResult).reason), /FOREIGN KEY/);
    assert.equal((await store.getCall(sessionId, good.id))?.outcome, 'ok');
    await store.close();
  });

  it('writes still held when the store closes are committed first', async () => {
    const { store, path, sessionId } = await withSession();
    const call = running(sessionId);
    const written = store.addCall(call);
    await store.close();
    await written;
    const reopened = new SqliteStore(path);
    assert.equal((await reopened.getCall(sessionId, call.id))?.outcome, 'running');
    await reopened.close();
  });
});

/** A store, a way to open the same database again, and a count of its calls by outcome read past the store. */
interface Opened {
  store: Store;
  reopen(): Promise<Store>;
  outcomes(): Promise<Record<string, number>>;
}

const databases: TestDatabase[] = [];

const kinds: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'SQLite',
    async open() {
      const path = join(mkdtempSync(join(tmpdir(), 'subako-store-writes-')), 'subako.db');
      return {
        store: new SqliteStore(path),
        reopen: async () => new SqliteStore(path),
        async outcomes() {
          const other = new Database(path, { readonly: true });
          try {
            return Object.fromEntries((other.prepare('SELECT outcome, COUNT(*) AS n FROM calls GROUP BY outcome').all() as { outcome: string; n: number }[]).map((r) => [r.outcome, r.n]));
          } finally {
            other.close();
          }
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const db = await createTestDatabase();
      databases.push(db);
      return {
        store: await PostgresStore.open(new Secret(db.url)),
        reopen: () => PostgresStore.open(new Secret(db.url)),
        async outcomes() {
          const client = new pg.Client({ connectionString: db.url });
          await client.connect();
          try {
            const { rows } = await client.query('SELECT outcome, COUNT(*) AS n FROM calls GROUP BY outcome');
            return Object.fromEntries(rows.map((r: { outcome: string; n: string }) => [r.outcome, Number(r.n)]));
          } finally {
            await client.end();
          }
        },
      };
    },
  },
];

for (const kind of kinds) {
  describe(`the call log's batched writes on ${kind.name}`, () => {
    after(async () => {
      for (const db of databases.splice(0)) await db.drop();
    });

    it('a burst of calls, each recorded then ended as the call log does, leaves every row, ended', async () => {
      const { store, outcomes } = await kind.open();
      const sessionId = await addSession(store);
      const calls = Array.from({ length: 200 }, () => running(sessionId));
      // Each call's end is written once its start is committed (the call log awaits the start before the tool runs).
      await Promise.all(calls.map(async (call, i) => {
        await store.addCall(call);
        if (i % 3 === 0) await new Promise((resolve) => setImmediate(resolve));
        const end = await store.finishCall({ ...call, outcome: 'ok', durationMs: i });
        assert.equal(end.status, 'written');
      }));
      assert.deepEqual(await outcomes(), { ok: calls.length });
      const page = await store.listCalls(sessionId, { limit: 500 });
      assert.equal(page.items.length, calls.length);
      assert.ok(page.items.every((c) => c.outcome === 'ok' && c.durationMs !== null));
      await store.close();
    });

    it('writes still held when the store closes are committed before it closes (none lost on shutdown)', async () => {
      const { store, reopen, outcomes } = await kind.open();
      const sessionId = await addSession(store);
      const started = Array.from({ length: 50 }, () => running(sessionId));
      await Promise.all(started.slice(0, 25).map((call) => store.addCall(call)));
      // Made and not awaited: held when close is called, in the same turn.
      const writes = [
        ...started.slice(0, 25).map((call) => store.finishCall({ ...call, outcome: 'tool_error', durationMs: 1 })),
        ...started.slice(25).map((call) => store.addCall(call)),
      ];
      await store.close();
      await Promise.all(writes);
      assert.deepEqual(await outcomes(), { tool_error: 25, running: 25 });
      const again = await reopen();
      assert.equal((await again.getCall(sessionId, started[0].id))?.outcome, 'tool_error');
      await again.close();
    });

    it('a write that fails is refused alone; the others of its batch are kept', async () => {
      const { store, outcomes } = await kind.open();
      const sessionId = await addSession(store);
      const good = running(sessionId);
      const other = running(sessionId);
      await store.addCall(good);
      const orphan = running(newId('ses')); // no such session: the foreign key refuses it
      const results = await Promise.allSettled([store.addCall(other), store.addCall(orphan), store.finishCall({ ...good, outcome: 'ok', durationMs: 2 })]);
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
      assert.match(String((results[1] as PromiseRejectedResult).reason), /FOREIGN KEY|foreign key/);
      assert.deepEqual(await outcomes(), { ok: 1, running: 1 });
      await store.close();
    });
  });
}
