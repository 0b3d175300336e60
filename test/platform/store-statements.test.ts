/**
 * One SQL text for both stores: every statement is written once, in statements.ts, and each database's text is
 * rendered from it by its dialect. Checked on the copy that runs: the table is read as the store reads it, each
 * statement is prepared on a migrated SQLite database and on the real PostgreSQL, and the store's other source
 * files are read to see that none holds SQL of its own or a copy of a statement.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { POSTGRES, SQLITE, numberPlaceholders, type Dialect } from '../../src/platform/store/dialect.js';
import { MIGRATIONS, migrationSql } from '../../src/platform/store/migrations.js';
import { CALL_SEARCH_FILTERS, callSearch, statementsFor } from '../../src/platform/store/statements.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { REPO_ROOT } from '../helpers/paths.js';

/** Every statement a store on this dialect runs, by a name saying where it sits in the table. */
function everyStatement(d: Dialect): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      if (!path.endsWith('.key')) found.set(path, value);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) walk(inner, path ? `${path}.${key}` : key);
    }
  };
  walk(statementsFor(d), '');
  // Every shape of a search across calls: each subset of its filters.
  const filters = Object.keys(CALL_SEARCH_FILTERS) as (keyof typeof CALL_SEARCH_FILTERS)[];
  for (let mask = 0; mask < 1 << filters.length; mask += 1) {
    const chosen = filters.filter((_, i) => mask & (1 << i));
    found.set(`callSearch(${chosen.join(',')})`, callSearch(chosen));
  }
  return found;
}

const squeeze = (text: string): string => text.replace(/\s+/g, ' ').trim();
/** `?` placeholders outside quoted text. */
const placeholders = (text: string): number => (numberPlaceholders(text).match(/\$\d+/g) ?? []).length;

const STORE_DIR = join(REPO_ROOT, 'src', 'platform', 'store');
const source = (file: string): string => readFileSync(join(STORE_DIR, file), 'utf8');

describe('one SQL text for both stores', () => {
  it('numbers placeholders in order for PostgreSQL, leaving a "?" inside quotes alone', () => {
    assert.equal(numberPlaceholders("SELECT ? , '?', \"a?\" FROM t WHERE x = ? AND y = 'it''s ?' AND z = ?"),
      "SELECT $1 , '?', \"a?\" FROM t WHERE x = $2 AND y = 'it''s ?' AND z = $3");
  });

  it('writes each statement once: no two entries of the table are the same text', () => {
    const seen = new Map<string, string>();
    for (const [name, text] of everyStatement(SQLITE)) {
      const key = squeeze(text);
      assert.equal(seen.get(key), undefined, `${name} repeats ${seen.get(key)}: ${key}`);
      seen.set(key, name);
    }
    assert.ok(seen.size > 70, `the whole table was read (${seen.size})`);
  });

  it('renders both dialects from the one table: the same statements, taking the same parameters in the same order', () => {
    const sqlite = everyStatement(SQLITE);
    const postgres = everyStatement(POSTGRES);
    assert.deepEqual([...postgres.keys()].sort(), [...sqlite.keys()].sort());
    for (const [name, text] of sqlite) {
      const rendered = POSTGRES.placeholders(postgres.get(name)!);
      assert.equal(placeholders(text), placeholders(postgres.get(name)!), `${name}: as many parameters on both`);
      assert.doesNotMatch(rendered, /\?/, `${name}: every placeholder numbered`);
    }
  });

  it('keeps SQL out of the one store implementation, and no statement of the table copied into another file', () => {
    assert.doesNotMatch(source('sql-store.ts'), /\b(SELECT|INSERT INTO|UPDATE|DELETE FROM)\b/, 'sql-store.ts names statements, never writes one');
    const statements = [...everyStatement(SQLITE).values(), ...everyStatement(POSTGRES).values()].map(squeeze).filter((s) => s.length > 12);
    for (const file of readdirSync(STORE_DIR).filter((f) => f.endsWith('.ts') && f !== 'statements.ts')) {
      const text = squeeze(source(file));
      for (const statement of statements) assert.ok(!text.includes(statement), `${file} holds a copy of: ${statement}`);
    }
  });

  it('every statement prepares on a migrated SQLite database', () => {
    const dir = mkdtempSync(join(tmpdir(), 'subako-statements-'));
    const db = new Database(join(dir, 'subako.db'));
    try {
      for (const migration of MIGRATIONS) db.exec(migrationSql(migration, 'sqlite'));
      for (const [name, text] of everyStatement(SQLITE)) {
        assert.doesNotThrow(() => db.prepare(SQLITE.placeholders(text)), `${name}: ${text}`);
      }
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('on PostgreSQL', () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const cleanup of cleanups.splice(0)) await cleanup();
    });

    it('every statement prepares on a migrated database, each parameter\'s type known', async () => {
      const database = await createTestDatabase();
      cleanups.push(() => database.drop());
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        for (const migration of MIGRATIONS) await client.query(migrationSql(migration, 'postgres'));
        let n = 0;
        for (const [name, text] of [...everyStatement(POSTGRES), ['dialect.lockUntilCommit', POSTGRES.lockUntilCommit!]]) {
          n += 1;
          await client.query(`PREPARE statement_${n} AS ${POSTGRES.placeholders(text)}`).catch((err: Error) => {
            assert.fail(`${name}: ${err.message}: ${text}`);
          });
          await client.query(`DEALLOCATE statement_${n}`);
        }
      } finally {
        await client.end();
      }
    });
  });
});
