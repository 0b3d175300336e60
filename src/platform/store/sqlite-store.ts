/**
 * The embedded Store: one SQLite file in WAL mode (readers never wait for the writer; a crash loses at most
 * the transaction in flight). The store itself is sql-store.ts's; this is the database under it: better-sqlite3,
 * synchronous, with its statements prepared once, its transactions run whole within one turn of the event
 * loop, and the call log's writes batched.
 */
import Database from 'better-sqlite3';
import { SQLITE } from './dialect.js';
import { MIGRATIONS, migrationSql } from './migrations.js';
import { runProgram, type Program, type SqlDatabase, type Step } from './sql-database.js';
import { SqlStore } from './sql-store.js';
import type { Row } from './store-rows.js';

/** The end of each queue of `exclusively` work, by file and name. */
const exclusiveTails = new Map<string, Promise<void>>();

export class SqliteStore extends SqlStore<SqliteDatabase> {
  constructor(file: string) {
    super(new SqliteDatabase(file));
    // A data directory's file is one process's at a time: whoever held a lease in it before this open has
    // stopped, so its calls left running are marked at once rather than a lease's length later.
    this.db.runNow(this.sql.instances.dropAll);
  }

  /** The schema version the database is at (the highest migration run). */
  schemaVersion(): number {
    return this.db.schemaVersion();
  }
}

export class SqliteDatabase implements SqlDatabase {
  readonly dialect = SQLITE;
  private readonly db: Database.Database;
  /**
   * Statements by their SQL text, each prepared once: preparing costs more than running the small statements
   * of a call (a session lookup, the call log's insert and update), and a call runs several. The texts are
   * statements.ts's and the few shapes of a call search, so the map stays small.
   */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
  }

  schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  private migrate(): void {
    const current = this.schemaVersion();
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      this.db.transaction(() => {
        this.db.exec(migrationSql(migration, 'sqlite'));
        this.db.pragma(`user_version = ${migration.version}`);
      })();
    }
  }

  /**
   * The call log's writes (`addCall`, `finishCall`, `recordEndedCall`), held until the end of this turn of the
   * event loop and committed together in one transaction: a commit costs several times the statement, and
   * with calls in flight several land in each turn. Nothing can see them out of order: every other statement
   * (outside a transaction) and every transaction commits what is held first, and a write's promise resolves
   * only once it is committed (the call log awaits a `running` record it writes before the tool runs).
   */
  private held: { statement: Database.Statement; params: readonly unknown[]; resolve: (changes: number) => void; reject: (err: unknown) => void }[] = [];
  private flushQueued = false;

  write(sql: string, params: readonly unknown[]): Promise<number> {
    const statement = this.prepared(sql);
    return new Promise((resolve, reject) => {
      this.held.push({ statement, params, resolve, reject });
      if (!this.flushQueued) {
        this.flushQueued = true;
        setImmediate(() => this.commitHeld());
      }
    });
  }

  private commitHeld(): void {
    this.flushQueued = false;
    if (this.held.length === 0) return;
    const batch = this.held;
    this.held = [];
    let changes: number[];
    try {
      changes = this.db.transaction(() => batch.map((held) => held.statement.run(...held.params).changes))();
    } catch {
      // One write failed (its session was deleted meanwhile) and the batch rolled back: each alone, so that
      // each caller gets its own answer.
      for (const held of batch) {
        try {
          held.resolve(held.statement.run(...held.params).changes);
        } catch (err) {
          held.reject(err);
        }
      }
      return;
    }
    batch.forEach((held, i) => held.resolve(changes[i]));
  }

  /** A statement to run now, outside a transaction: what the call log holds is committed first. */
  private now(sql: string): Database.Statement {
    if (this.held.length > 0 && !this.db.inTransaction) this.commitHeld();
    return this.prepared(sql);
  }

  private prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  // better-sqlite3 answers at once; the promises are the contract's (PostgreSQL's are real).
  async get(sql: string, params: readonly unknown[] = []): Promise<Row | undefined> {
    return this.now(sql).get(...params) as Row | undefined;
  }
  async all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.now(sql).all(...params) as Row[];
  }
  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.runNow(sql, params);
  }
  /** `run`, synchronously (for the store's own start). */
  runNow(sql: string, params: readonly unknown[] = []): number {
    return this.now(sql).run(...params).changes;
  }

  /**
   * The program runs whole, synchronously, in one `BEGIN IMMEDIATE` transaction (the write lock taken at once,
   * so a read in it is never made stale by another process's write before its own), after what the call log
   * holds is committed (so that cannot be rolled back with it).
   */
  async transaction<T>(program: () => Program<T>): Promise<T> {
    this.commitHeld();
    return this.db.transaction(() => runProgram(program(), (step) => this.step(step))).immediate();
  }

  private step({ sql, params, answer }: Step): unknown {
    const statement = this.prepared(sql);
    if (answer === 'get') return statement.get(...params);
    if (answer === 'all') return statement.all(...params);
    return statement.run(...params).changes;
  }

  /**
   * One process uses a data directory's file, so taking turns within this process is enough: stores opened on
   * the same file here (a test's "second process") queue behind each other.
   */
  async exclusively<T>(name: string, work: () => Promise<T>): Promise<T> {
    const key = `${this.file}\u0000${name}`;
    const before = exclusiveTails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => { done = resolve; });
    const tail = before.then(() => mine);
    exclusiveTails.set(key, tail);
    await before;
    try {
      return await work();
    } finally {
      done();
      if (exclusiveTails.get(key) === tail) exclusiveTails.delete(key);
    }
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    this.commitHeld();
    this.db.close();
  }
}
