/**
 * The call log's writes in the SQLite store are committed together at the end of the event loop's turn
 * (sqlite-store.ts): what any reader or writer sees is still the order the writes were made in, a write's
 * promise resolves once it is committed, and a write that fails is refused alone.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { newId } from '../../src/platform/ids.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import type { AgentSpec, CallRecord } from '../../src/platform/store/store.js';

const spec: AgentSpec = { name: 'agent', description: '', tools: [], skills: [], mcp_servers: [], discovery: { mode: 'all', entry: [] } };

async function withSession(): Promise<{ store: SqliteStore; path: string; sessionId: string }> {
  const path = join(mkdtempSync(join(tmpdir(), 'subako-store-writes-')), 'subako.db');
  const store = new SqliteStore(path);
  const agentId = newId('agt');
  const sessionId = newId('ses');
  const now = new Date().toISOString();
  await store.createAgent({ id: agentId, name: 'a', currentVersion: 1, createdAt: now, updatedAt: now }, { agentId, version: 1, spec, createdAt: now });
  await store.addSession({ id: sessionId, agentId, agentVersion: 1, tokenHash: newId('tok'), vaultIds: [], userId: null, createdAt: now, expiresAt: now });
  return { store, path, sessionId };
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
