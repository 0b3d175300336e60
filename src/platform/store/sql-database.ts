/**
 * The one thing the store (sql-store.ts) asks of a database: run a statement, run a transaction, hold the
 * call log's writes, take turns. sqlite-store.ts and postgres-store.ts each implement it.
 *
 * A transaction's work is a *program*: a generator that yields the statements it runs (`yield* get(…)`) and
 * is handed each answer back. Written once, it runs two ways: SQLite runs it synchronously inside one
 * better-sqlite3 transaction, so nothing else in the process can interleave and no lock is held across a turn
 * of the event loop (as the SQLite store always did); PostgreSQL runs it on one pooled connection between
 * BEGIN and COMMIT, awaiting each statement.
 */
import type { Dialect } from './dialect.js';
import type { Row } from './store-rows.js';

export interface SqlDatabase {
  readonly dialect: Dialect;
  /** The first row a statement answers, or undefined. Statements are written with `?` (statements.ts). */
  get(sql: string, params?: readonly unknown[]): Promise<Row | undefined>;
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Runs a statement that changes rows; answers how many it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * One of the call log's writes (two a call, on every call), a prepared statement held to the end of the event
   * loop's turn and committed with the others of the turn in one transaction (SQLite: synchronously; PostgreSQL:
   * on one connection, or alone when it is the only one). Resolves once it is committed, with how many rows it
   * changed; a write that fails is refused alone. `close` commits what is held first.
   */
  write(sql: string, params: readonly unknown[]): Promise<number>;
  /** Runs a program in one transaction: committed when it returns, rolled back when it throws. */
  transaction<T>(program: () => Program<T>): Promise<T>;
  /** Runs `work` while no other process on this database runs work under the same name. */
  exclusively<T>(name: string, work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** One statement a program asks to run, and which answer it wants back. */
export interface Step {
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly answer: 'get' | 'all' | 'run';
}

export type Program<T> = Generator<Step, T, unknown>;

/** In a program: `const row = yield* get(sql, params)`. */
export function* get(sql: string, params: readonly unknown[] = []): Generator<Step, Row | undefined, unknown> {
  return (yield { sql, params, answer: 'get' }) as Row | undefined;
}
export function* all(sql: string, params: readonly unknown[] = []): Generator<Step, Row[], unknown> {
  return (yield { sql, params, answer: 'all' }) as Row[];
}
/** Answers how many rows the statement changed. */
export function* run(sql: string, params: readonly unknown[] = []): Generator<Step, number, unknown> {
  return (yield { sql, params, answer: 'run' }) as number;
}

/** Runs a program to its end, each statement by `exec` as it comes; a statement's error is thrown into the program. */
export function runProgram<T>(program: Program<T>, exec: (step: Step) => unknown): T {
  let next = program.next();
  while (!next.done) {
    let answer: unknown;
    try {
      answer = exec(next.value);
    } catch (err) {
      next = program.throw(err);
      continue;
    }
    next = program.next(answer);
  }
  return next.value;
}

/** `runProgram` for a database that answers asynchronously. */
export async function runProgramAsync<T>(program: Program<T>, exec: (step: Step) => Promise<unknown>): Promise<T> {
  let next = program.next();
  while (!next.done) {
    let answer: unknown;
    try {
      answer = await exec(next.value);
    } catch (err) {
      next = program.throw(err);
      continue;
    }
    next = program.next(answer);
  }
  return next.value;
}
