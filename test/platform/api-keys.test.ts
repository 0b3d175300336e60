/**
 * API keys in the platform: scopes and their one rule, revocation that keeps the record (a data directory
 * that had keys is never fresh again), the last admin key kept, last use recorded, and a database made
 * before scopes existed keeping its keys as admin keys.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ApiKeys, mintAdminKey, scopePermits } from '../../src/platform/api-keys.js';
import { ConflictError, NotFoundError } from '../../src/platform/errors.js';
import { hashSecret } from '../../src/platform/ids.js';
import { MIGRATIONS } from '../../src/platform/store/migrations.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';

const dir = (): string => mkdtempSync(join(tmpdir(), 'subako-keys-'));

describe('API keys', () => {
  it('scopes: an admin key may read and write, a read key only read', () => {
    assert.equal(scopePermits('admin', 'read'), true);
    assert.equal(scopePermits('admin', 'write'), true);
    assert.equal(scopePermits('read', 'read'), true);
    assert.equal(scopePermits('read', 'write'), false);
  });

  it('a revoked key authenticates nothing, its record stays, and the last admin key cannot be revoked', async () => {
    const store = new SqliteStore(join(dir(), 'subako.db'));
    const keys = new ApiKeys(store);
    const admin = await keys.create('admin');
    const reader = await keys.create('dashboards', 'read');
    assert.equal((await keys.verify(reader.key))?.scope, 'read');
    const revoked = await keys.revoke(reader.record.id);
    assert.ok(revoked.revokedAt);
    assert.equal(await keys.verify(reader.key), null);
    assert.equal((await keys.list({ limit: 10 })).items.length, 2, 'the revoked key is still listed');
    await assert.rejects(keys.revoke(admin.record.id), (err: unknown) => err instanceof ConflictError && err.code === 'last_admin_key');
    assert.ok(await keys.verify(admin.key), 'the refused revocation changed nothing');
    const second = await keys.create('second admin');
    await keys.revoke(admin.record.id);
    assert.equal(await keys.verify(admin.key), null);
    assert.ok(await keys.verify(second.key));
    await assert.rejects(keys.revoke('key_nope'), NotFoundError);
    await store.close();
  });

  it('tells which of many keys are in force in one call, and hears this process\'s revocations at once', async () => {
    const store = new SqliteStore(join(dir(), 'subako.db'));
    const keys = new ApiKeys(store);
    const [admin, reader, gone] = [await keys.create('admin'), await keys.create('dash', 'read'), await keys.create('old', 'read')];
    const heard: string[] = [];
    const stop = keys.onRevoked((id) => heard.push(id));
    await keys.revoke(gone.record.id);
    assert.deepEqual(heard, [gone.record.id]);
    assert.deepEqual([...await keys.inForce([admin.record.id, reader.record.id, gone.record.id, 'key_none'])].sort(), [admin.record.id, reader.record.id].sort());
    assert.deepEqual([...await keys.inForce([])], []);
    await assert.rejects(keys.revoke(admin.record.id), ConflictError);
    assert.deepEqual(heard, [gone.record.id], 'a refused revocation is not heard');
    stop();
    await keys.revoke(reader.record.id);
    assert.deepEqual(heard, [gone.record.id], 'removed, the listener hears no more');
    await store.close();
  });

  it('records the last use, at most once a minute', async () => {
    const store = new SqliteStore(join(dir(), 'subako.db'));
    const keys = new ApiKeys(store);
    const { key, record } = await keys.create('admin');
    assert.equal(record.lastUsedAt, null);
    const first = (await keys.verify(key))!.lastUsedAt;
    assert.ok(first);
    assert.equal((await store.getApiKey(record.id))!.lastUsedAt, first);
    assert.equal((await keys.verify(key))!.lastUsedAt, first, 'a second use within the minute writes nothing');
    await store.close();
  });

  it('a database made before scopes keeps its keys as admin keys', async () => {
    const file = join(dir(), 'subako.db');
    const old = new Database(file);
    old.exec(MIGRATIONS[0].sql);
    old.pragma('user_version = 1');
    const key = 'sk_madeBeforeScopesExisted_0123456789';
    old.prepare('INSERT INTO api_keys (id, name, hash, prefix, created_at) VALUES (?, ?, ?, ?, ?)').run('key_old', 'admin', hashSecret(key), key.slice(0, 7), new Date().toISOString());
    old.close();
    const store = new SqliteStore(file);
    const record = await new ApiKeys(store).verify(key);
    assert.equal(record?.scope, 'admin');
    assert.equal(record?.revokedAt, null);
    await store.close();
  });

  it('mintAdminKey adds an admin key to an existing data directory, and refuses one without a database', async () => {
    const data = dir();
    const store = new SqliteStore(join(data, 'subako.db'));
    await store.close();
    const minted = await mintAdminKey(data);
    const again = new SqliteStore(join(data, 'subako.db'));
    assert.equal((await new ApiKeys(again).verify(minted.key))?.scope, 'admin');
    await again.close();
    await assert.rejects(mintAdminKey(dir()), (err: unknown) => (err as { code?: string }).code === 'no_data_dir');
  });
});
