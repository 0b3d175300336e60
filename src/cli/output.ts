/**
 * What the platform commands print: the API's JSON with --json (for scripts), else a plain table (for
 * people) whose columns each command names. One place, so every command looks and behaves the same.
 */
export type Column<T> = [header: string, cell: (row: T) => unknown];

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Columns padded to their widest cell; an empty list prints its note instead. */
export function printTable<T>(rows: readonly T[], columns: readonly Column<T>[], empty = '(none)'): void {
  if (rows.length === 0) {
    process.stdout.write(`${empty}\n`);
    return;
  }
  const cells = rows.map((row) => columns.map(([, cell]) => text(cell(row))));
  const widths = columns.map(([header], i) => Math.max(header.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]): string => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]))).join('  ').trimEnd();
  process.stdout.write(`${[line(columns.map(([header]) => header)), ...cells.map(line)].join('\n')}\n`);
}

/** One record as `field  value` lines. */
export function printFields(fields: readonly [string, unknown][]): void {
  const width = Math.max(...fields.map(([name]) => name.length));
  process.stdout.write(`${fields.map(([name, value]) => `${name.padEnd(width)}  ${text(value)}`).join('\n')}\n`);
}

/** Either the JSON or the people's view, as --json says. */
export function print(json: boolean | undefined, value: unknown, forPeople: () => void): void {
  if (json) printJson(value);
  else forPeople();
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return value.replace(/[\r\n\t]+/g, ' ');
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** A span as a person reads it at a glance: 42s, 5m, 3h, 2d (negative spans read 0s). */
export function spanText(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
