/** The store suite on the embedded back end: a SQLite file in a temporary directory per test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import { storeSuite } from './helpers/store-suite.js';

const dirs: string[] = [];

storeSuite('the store on SQLite', {
  async fresh() {
    const dir = mkdtempSync(join(tmpdir(), 'subako-store-'));
    dirs.push(dir);
    const file = join(dir, 'subako.db');
    return {
      store: new SqliteStore(file),
      reopen: async () => new SqliteStore(file),
      schemaVersion: async (store) => (store as SqliteStore).schemaVersion(),
    };
  },
  async cleanup() {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  },
});
