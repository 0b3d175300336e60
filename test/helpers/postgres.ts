/**
 * Databases of the machine's PostgreSQL (services.md: 127.0.0.1:5432, trust auth) for tests: each one named
 * `subako_test_<random>`, made for a test run and dropped after it. They are made with an ICU en-US
 * collation, on purpose: it does not sort text by bytes (`B` after `a`, `-` and `_` ignored at first), as many
 * production databases do not, so a query that forgets the byte order SQLite keeps fails here.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_HOST = process.env.SUBAKO_TEST_PG_HOST ?? '127.0.0.1';
export const POSTGRES_PORT = Number(process.env.SUBAKO_TEST_PG_PORT ?? 5432);

export function postgresUrl(database: string, port = POSTGRES_PORT): string {
  return `postgres://postgres@${POSTGRES_HOST}:${port}/${database}`;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>, port = POSTGRES_PORT): Promise<T> {
  const client = new pg.Client({ connectionString: postgresUrl('postgres', port) });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database; `drop()` removes it (closing whatever connections are left). */
export async function createTestDatabase(port = POSTGRES_PORT): Promise<TestDatabase> {
  const name = `subako_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`), port);
  return {
    name,
    url: postgresUrl(name, port),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), port).then(() => undefined),
  };
}
