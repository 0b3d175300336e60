/**
 * What differs between the two databases, and nothing else: every statement is written once (statements.ts)
 * with `?` placeholders and these pieces where the databases say a thing differently.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * Between a name and its ordinal in a list key (store-rows.ts `listKey`): it must sort before every name
   * character. SQLite text holds NUL; PostgreSQL text cannot, so it takes U+0001.
   */
  readonly listKeySeparator: string;
  /**
   * Ends a SELECT whose rows the transaction goes on to change: PostgreSQL locks them (`FOR UPDATE`), so two
   * replicas deciding on the same rows take turns; a SQLite transaction is the database's one writer already.
   */
  readonly forUpdate: string;
  /**
   * A statement taking a lock on one name (its one `?`) until the transaction ends, so that two replicas
   * writing under that name take turns (PostgreSQL: an advisory lock); null where the transaction is the one
   * writer already (SQLite).
   */
  readonly lockUntilCommit: string | null;
  /** A JSON array of strings (text: a `?` or a column) as a table whose one column of interest is `value`. */
  jsonStrings(json: string): string;
  /** The database's clock now, as the lease column holds it. */
  readonly now: string;
  /** The database's clock a number of milliseconds (its one `?`) from now. */
  readonly msFromNow: string;
  /** A statement as the driver takes it: `?` placeholders left as they are (SQLite) or numbered `$1…` (PostgreSQL). */
  placeholders(text: string): string;
}

export const SQLITE: Dialect = {
  name: 'sqlite',
  listKeySeparator: '\u0000',
  forUpdate: '',
  lockUntilCommit: null,
  jsonStrings: (json) => `json_each(${json})`,
  // ISO text to the millisecond, as `Date.toISOString()` writes it, so that text order is time order.
  now: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
  msFromNow: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || (? / 1000.0) || ' seconds')",
  placeholders: (text) => text,
};

export const POSTGRES: Dialect = {
  name: 'postgres',
  listKeySeparator: '\u0001',
  forUpdate: ' FOR UPDATE',
  lockUntilCommit: 'SELECT pg_advisory_xact_lock(hashtext(?))',
  // JSON fields are kept as text (a record comes back exactly as it went in), so read as json where looked into.
  jsonStrings: (json) => `json_array_elements_text(CAST(${json} AS json))`,
  now: 'now()',
  msFromNow: "now() + CAST(? AS double precision) * interval '1 millisecond'",
  placeholders: numberPlaceholders,
};

/**
 * `?` placeholders numbered `$1`, `$2`… in order, leaving alone those inside quoted text ('…') and quoted
 * names ("…"). Pure. (The statements use no PostgreSQL operator spelled `?`.)
 */
export function numberPlaceholders(text: string): string {
  let out = '';
  let n = 0;
  let quote: string | null = null;
  for (const char of text) {
    if (quote !== null) {
      if (char === quote) quote = null;
      out += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      out += char;
    } else if (char === '?') {
      n += 1;
      out += `$${n}`;
    } else {
      out += char;
    }
  }
  return out;
}
