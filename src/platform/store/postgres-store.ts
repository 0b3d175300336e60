/**
 * The Store on PostgreSQL, for several API replicas sharing one database. The store itself is sql-store.ts's
 * (the same statements, records, pages, cursors and conflicts as on SQLite); this is the database under it:
 * a pool, transactions on one connection, advisory locks, migrations under a lock, and errors that mean "the
 * database is not there" told apart.
 *
 * Why `pg` (node-postgres) and not `postgres` (porsager): it is the driver most deployments already run and
 * audit, its pool is explicit (a client per transaction, `BEGIN`/`COMMIT` on it, nothing implicit), and its
 * errors carry the SQLSTATE we map (lost connections to a 503).
 *
 * JSON fields are stored as text, not jsonb: jsonb rewrites what it keeps (key order, duplicate keys, number
 * spelling), and a record must come back exactly as it went in, as on SQLite. The queries that look inside
 * JSON read it as json as they go (dialect.ts `jsonStrings`).
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Secret } from '../../common/index.js';
import { ValidationError } from '../../errors.js';
import { POSTGRES } from './dialect.js';
import { MIGRATIONS, migrationSql, type Migration } from './migrations.js';
import { ConflictError, StoreUnavailableError } from '../errors.js';
import { runProgramAsync, type Program, type SqlDatabase, type Step } from './sql-database.js';
import { SqlStore } from './sql-store.js';
import type { Row } from './store-rows.js';

/**
 * One key for the advisory lock every replica takes to migrate: the first one in migrates, the others wait,
 * then find nothing left to run. (A 64-bit number; this one spells "subako" in ASCII.)
 */
const MIGRATION_LOCK = '126943810357103';

/** The driver's own statements: bookkeeping no store method runs. */
const SCHEMA_VERSION = 'SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations';

export interface PostgresStoreOptions {
  /** Connections the pool holds at most; 10 by default. */
  maxConnections?: number;
  /** How long to wait for a connection (a new one, or a free one of the pool); 5 s by default. */
  connectTimeoutMs?: number;
  /** The migrations to bring the database to; all of them by default (fewer: an older release, in tests). */
  migrations?: readonly Migration[];
}

export class PostgresStore extends SqlStore<PostgresDatabase> {
  private constructor(database: PostgresDatabase) {
    super(database);
  }

  /** Connects, migrates (once, under the advisory lock, whatever other replicas do meanwhile), and answers. */
  static async open(url: Secret, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    // Checked here so that no parser's error (which would quote the URL, password and all) is ever thrown.
    if (!URL.canParse(url.reveal())) {
      throw new ValidationError([{ code: 'config.database', message: 'the database URL does not parse; give it as postgres://user:password@host:port/database' }]);
    }
    const pool = new pg.Pool({
      connectionString: url.reveal(), max: options.maxConnections ?? 10,
      // A database host that drops packets (rather than refusing) must not hold a request forever: past this a
      // connection attempt, or the wait for a pooled one, fails as unavailable (503).
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
      // TCP keep-alive, so a connection to a host that vanished is noticed and dropped from the pool.
      keepAlive: true,
    });
    // An idle client whose server went away emits here; without a listener that would end the process. The
    // next query fails on its own (as a StoreUnavailableError), which is where it is reported.
    pool.on('error', () => undefined);
    const database = new PostgresDatabase(pool);
    try {
      await database.migrate(options.migrations ?? MIGRATIONS);
    } catch (err) {
      await pool.end();
      throw unavailableOr(err);
    }
    return new PostgresStore(database);
  }

  /** The schema version the database is at (the highest migration run). */
  schemaVersion(): Promise<number> {
    return this.db.schemaVersion();
  }
}

/** One of the call log's writes, held until its batch is sent. */
interface HeldWrite {
  readonly query: pg.QueryConfig;
  resolve(changes: number): void;
  reject(err: unknown): void;
}

export class PostgresDatabase implements SqlDatabase {
  readonly dialect = POSTGRES;
  /** Each statement's text with its placeholders numbered, by the text written (statements.ts): a small map. */
  private readonly rendered = new Map<string, string>();
  /** The call log's statements as named prepared statements, by their text: each connection parses one once. */
  private readonly named = new Map<string, string>();
  private closed = false;
  /**
   * The call log's writes (two a call, every call), held to the end of this turn of the event loop and sent as
   * one batch: alone, one prepared statement (one round trip, its own commit); several, one transaction on one
   * connection, so calls that start and end close together share one commit (the WAL flush that is most of a
   * small write's cost). A write's promise resolves once its batch is committed; nothing is answered before.
   */
  private held: HeldWrite[] = [];
  private flushQueued = false;
  /** Batches sent and not yet answered: a close waits for them, so no row is lost on shutdown. */
  private readonly sending = new Set<Promise<void>>();

  constructor(private readonly pool: pg.Pool) {}

  async schemaVersion(): Promise<number> {
    return Number((await this.get(SCHEMA_VERSION))?.v);
  }

  async migrate(migrations: readonly Migration[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      // A session lock, held across the per-migration transactions and released below (or with the connection).
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
          version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)`);
        const { rows } = await client.query(SCHEMA_VERSION);
        const current = Number(rows[0].v);
        for (const migration of migrations) {
          if (migration.version <= current) continue;
          await inTransaction(client, async () => {
            await client.query(migrationSql(migration, 'postgres'));
            await client.query('INSERT INTO schema_migrations (version, description, applied_at) VALUES ($1, $2, $3)',
              [migration.version, migration.description, new Date().toISOString()]);
          });
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      }
    } finally {
      client.release();
    }
  }

  private text(sql: string): string {
    let text = this.rendered.get(sql);
    if (text === undefined) {
      text = this.dialect.placeholders(sql);
      this.rendered.set(sql, text);
    }
    return text;
  }

  /** A statement as a named prepared one: its name is its text's digest, so the same text is the same statement on every connection. */
  private prepared(sql: string, params: readonly unknown[]): pg.QueryConfig {
    let name = this.named.get(sql);
    if (name === undefined) {
      name = `subako_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
      this.named.set(sql, name);
    }
    return { name, text: this.text(sql), values: [...params] };
  }

  /** One statement on any pooled connection; a lost database is a StoreUnavailableError. */
  private async query(sql: string, params: readonly unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.pool.query(this.text(sql), [...params]);
    } catch (err) {
      throw unavailableOr(err);
    }
  }
  async get(sql: string, params: readonly unknown[] = []): Promise<Row | undefined> {
    return (await this.query(sql, params)).rows[0] as Row | undefined;
  }
  async all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return (await this.query(sql, params)).rows as Row[];
  }
  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.query(sql, params)).rowCount ?? 0;
  }

  write(sql: string, params: readonly unknown[]): Promise<number> {
    if (this.closed) return Promise.reject(new StoreUnavailableError({ cause: new Error('the store is closed') }));
    return new Promise((resolve, reject) => {
      this.held.push({ query: this.prepared(sql, params), resolve, reject });
      if (!this.flushQueued) {
        this.flushQueued = true;
        setImmediate(() => this.sendHeld());
      }
    });
  }

  /** Sends what is held as one batch; resolves once it is answered (each write's own promise says how it went). */
  private sendHeld(): Promise<void> {
    this.flushQueued = false;
    if (this.held.length === 0) return Promise.resolve();
    const batch = this.held;
    this.held = [];
    const sent = this.sendBatch(batch).finally(() => this.sending.delete(sent));
    this.sending.add(sent);
    return sent;
  }

  private async sendBatch(batch: HeldWrite[]): Promise<void> {
    if (batch.length === 1) return this.sendAlone(batch[0]);
    let changes: number[];
    try {
      changes = await this.withClient((client, markBroken) => inTransaction(client, async () => {
        const counts: number[] = [];
        for (const held of batch) counts.push((await client.query(held.query)).rowCount ?? 0);
        return counts;
      }, markBroken));
    } catch (err) {
      const failure = unavailableOr(err);
      // The database is gone: every write of the batch fails alike (the call log holds the ends and retries).
      if (failure instanceof StoreUnavailableError) {
        for (const held of batch) held.reject(failure);
        return;
      }
      // One write failed (its session was deleted meanwhile) and the batch rolled back: each alone, so that
      // each caller gets its own answer.
      await Promise.all(batch.map((held) => this.sendAlone(held)));
      return;
    }
    batch.forEach((held, i) => held.resolve(changes[i]));
  }

  private async sendAlone(held: HeldWrite): Promise<void> {
    try {
      held.resolve((await this.pool.query(held.query)).rowCount ?? 0);
    } catch (err) {
      held.reject(unavailableOr(err));
    }
  }

  /**
   * Runs `work` on a connection of its own, checked out of the pool and given back after; a connection that
   * broke meanwhile (`markBroken`, or an 'error' it emitted) is dropped from the pool rather than handed out again.
   */
  private async withClient<T>(work: (client: pg.PoolClient, markBroken: (err: unknown) => void) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw unavailableOr(err);
    }
    let broken: Error | undefined;
    // A checked-out client whose connection drops emits 'error' besides failing its query; unheard, that
    // would end the process.
    const onLost = (err: Error): void => { broken = err; };
    client.on('error', onLost);
    try {
      return await work(client, (err) => { broken = err instanceof Error ? err : new Error(String(err)); });
    } finally {
      client.off('error', onLost);
      client.release(broken);
    }
  }

  /** The program's statements on one connection, between BEGIN and COMMIT (ROLLBACK when it throws). */
  transaction<T>(program: () => Program<T>): Promise<T> {
    return this.withClient(async (client, markBroken) => {
      try {
        return await inTransaction(client, () => runProgramAsync(program(), (step) => this.step(client, step)), markBroken);
      } catch (err) {
        throw unavailableOr(err);
      }
    });
  }

  private async step(client: pg.PoolClient, { sql, params, answer }: Step): Promise<unknown> {
    const result = await client.query(this.text(sql), [...params]);
    if (answer === 'get') return result.rows[0] as Row | undefined;
    if (answer === 'all') return result.rows as Row[];
    return result.rowCount ?? 0;
  }

  exclusively<T>(name: string, work: () => Promise<T>): Promise<T> {
    // A session lock on a connection of its own, held while `work` runs on the pool's others. If that
    // connection drops, PostgreSQL releases the lock with it.
    return this.withClient(async (client, markBroken) => {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [`exclusive:${name}`]).catch((err: unknown) => { throw unavailableOr(err); });
      try {
        return await work();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`exclusive:${name}`]).catch(markBroken);
      }
    });
  }

  /** Sends what the call log holds and waits for every batch on its way, then ends the pool: no row is lost on shutdown. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.sendHeld();
    await Promise.all([...this.sending]);
    await this.pool.end();
  }
}

/**
 * `work` between BEGIN and COMMIT on one connection, rolled back when it (or BEGIN, or COMMIT) throws, and the
 * error thrown on; a connection that cannot even roll back is reported to `markBroken` (so that it is not
 * handed out again).
 */
async function inTransaction<T>(client: pg.ClientBase, work: () => Promise<T>, markBroken: (err: unknown) => void = () => undefined): Promise<T> {
  try {
    await client.query('BEGIN');
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(markBroken);
    throw err;
  }
}

/**
 * Errors that mean "the database is not there" (refused, reset, shut down, starting up, a connection lost
 * mid-way) become a StoreUnavailableError, which the API answers with 503; anything else passes unchanged.
 */
function unavailableOr(err: unknown): unknown {
  if (err instanceof ConflictError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : '';
  const lost = typeof code === 'string' && (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', '57P01', '57P02', '57P03'].includes(code) || code.startsWith('08'));
  if (lost || /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message)) {
    return new StoreUnavailableError({ cause: err });
  }
  return err;
}
