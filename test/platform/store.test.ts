import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/platform/sqlite-store.js';
import { MIGRATIONS } from '../../src/platform/migrations.js';
import { ConflictError } from '../../src/platform/errors.js';
import { newId } from '../../src/platform/ids.js';
import type { AgentSpec } from '../../src/platform/store.js';

const file = (): string => join(mkdtempSync(join(tmpdir(), 'subako-store-')), 'subako.db');
const pkg = (name: string, version: string) => ({
  name, version, description: 'd', digest: 'a'.repeat(64), manifest: { abi: 1 }, tools: [{ name: 't', inputSchema: { type: 'object' } }],
  createdAt: new Date().toISOString(),
});
const spec = (tools: AgentSpec['tools'] = []): AgentSpec => ({ name: 'agent', description: '', tools, skills: [], mcp_servers: [] });

describe('the SQLite store', () => {
  it('runs every migration on a new database and none twice', async () => {
    const path = file();
    const store = new SqliteStore(path);
    assert.equal(store.schemaVersion(), MIGRATIONS[MIGRATIONS.length - 1].version);
    await store.close();
    const again = new SqliteStore(path);
    assert.equal(again.schemaVersion(), MIGRATIONS[MIGRATIONS.length - 1].version);
    await again.close();
  });

  it('keeps package versions immutable and counts "latest" by upload order', async () => {
    const store = new SqliteStore(file());
    await store.addPackage(pkg('p', '1.0.0'));
    await store.addPackage(pkg('p', '0.9.0'));
    await assert.rejects(store.addPackage(pkg('p', '1.0.0')), ConflictError);
    assert.equal((await store.latestPackage('p'))?.version, '0.9.0');
    await store.close();
  });

  it('pages lists with limit and an opaque cursor, visiting every item once', async () => {
    const store = new SqliteStore(file());
    for (let i = 0; i < 7; i += 1) await store.addPackage(pkg(`p${i % 3}`, `1.0.${i}`));
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.listPackages({ limit: 3, after });
      seen.push(...page.items.map((p) => `${p.name}@${p.version}`));
      if (!page.next_cursor) break;
      after = page.next_cursor;
    }
    assert.equal(seen.length, 7);
    assert.equal(new Set(seen).size, 7);
    await store.close();
  });

  it('knows which agent versions use a package version', async () => {
    const store = new SqliteStore(file());
    await store.addPackage(pkg('p', '1.0.0'));
    const id = newId('agt');
    const now = new Date().toISOString();
    const grant = { package: 'p', requested: 'latest', version: '1.0.0', egress: { allow: [], grants: [] }, data: false };
    await store.createAgent({ id, name: 'a', currentVersion: 1, createdAt: now, updatedAt: now }, { agentId: id, version: 1, spec: spec([grant]), createdAt: now });
    assert.deepEqual(await store.agentVersionsUsingPackage('p', '1.0.0'), [`${id}@1`]);
    await assert.rejects(store.publishAgentVersion({ agentId: id, version: 3, spec: spec(), createdAt: now }), ConflictError);
    await store.close();
  });

  it('marks calls a dead process left running as interrupted crashes, and keeps them across reopening', async () => {
    const path = file();
    const store = new SqliteStore(path);
    const agentId = newId('agt');
    const sessionId = newId('ses');
    const now = new Date().toISOString();
    await store.createAgent({ id: agentId, name: 'a', currentVersion: 1, createdAt: now, updatedAt: now }, { agentId, version: 1, spec: spec(), createdAt: now });
    await store.addSession({ id: sessionId, agentId, agentVersion: 1, tokenHash: 'h', vaultIds: [], createdAt: now, expiresAt: now });
    await store.addCall({
      id: newId('call'), sessionId, via: 'api', tool: 't', arguments: {}, outcome: 'running', crash: null, model: [], stderrTail: '',
      egress: [], durationMs: null, startedAt: now,
    });
    await store.close();
    const reopened = new SqliteStore(path);
    assert.equal(await reopened.interruptRunningCalls(), 1);
    const calls = await reopened.listCalls(sessionId, { limit: 10 });
    assert.equal(calls.items[0].outcome, 'crash');
    assert.equal(calls.items[0].crash?.reason, 'interrupted');
    await reopened.close();
  });
});
