/**
 * The store suite on PostgreSQL (the machine's server, services.md): a database of its own per test, dropped
 * after the run. Then what only PostgreSQL has to show: replicas starting at once on one fresh database
 * migrate it once.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Secret } from '../../src/common/index.js';
import { MIGRATIONS } from '../../src/platform/store/migrations.js';
import { PostgresStore } from '../../src/platform/store/postgres-store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { storeSuite } from './helpers/store-suite.js';

const databases: TestDatabase[] = [];
const database = async (): Promise<TestDatabase> => {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
};
const dropAll = async (): Promise<void> => {
  for (const db of databases.splice(0)) await db.drop();
};

storeSuite('the store on PostgreSQL', {
  async fresh() {
    const db = await database();
    return {
      store: await PostgresStore.open(new Secret(db.url)),
      reopen: () => PostgresStore.open(new Secret(db.url)),
      schemaVersion: (store) => (store as PostgresStore).schemaVersion(),
    };
  },
  cleanup: dropAll,
});

describe('PostgreSQL migrations with several replicas', () => {
  after(dropAll);

  it('runs each migration once when replicas start on one fresh database at the same moment, and all see one version', async () => {
    const db = await database();
    const replicas = await Promise.all(Array.from({ length: 6 }, () => PostgresStore.open(new Secret(db.url), { maxConnections: 2 })));
    try {
      const versions = await Promise.all(replicas.map((r) => r.schemaVersion()));
      assert.deepEqual(versions, replicas.map(() => MIGRATIONS[MIGRATIONS.length - 1].version));
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query('SELECT version FROM schema_migrations ORDER BY version');
        assert.deepEqual(rows.map((r: { version: number }) => r.version), MIGRATIONS.map((m) => m.version), 'one row per migration');
        // Every table of the schema is there once (a second run of migration 1 would have failed on CREATE TABLE).
        const tables = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`);
        assert.ok(tables.rows.some((r: { table_name: string }) => r.table_name === 'calls'));
      } finally {
        await client.end();
      }
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
  });

  it('migrates only what is new on a database an older release made', async () => {
    const db = await database();
    const older = await PostgresStore.open(new Secret(db.url), { migrations: MIGRATIONS.slice(0, 1) });
    assert.equal(await older.schemaVersion(), MIGRATIONS[0].version);
    await older.close();
    const newer = await PostgresStore.open(new Secret(db.url));
    assert.equal(await newer.schemaVersion(), MIGRATIONS[MIGRATIONS.length - 1].version);
    await newer.close();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT version FROM schema_migrations ORDER BY version');
      assert.deepEqual(rows.map((r: { version: number }) => r.version), MIGRATIONS.map((m) => m.version));
    } finally {
      await client.end();
    }
  });
});
