/**
 * `uniqueItems` in linear time. Ajv compares every pair of items when they may be objects or arrays: 40,000
 * objects are 800 million deep comparisons, minutes on the event loop. Here each item is written once in a
 * canonical form (object keys sorted) and looked up in a map, so equal JSON values (as JSON Schema defines
 * equality: key order aside, `1` and `1.0` alike) meet in one pass.
 */

/** Ajv's answer, reproduced: `i` the last item equal to an earlier one, `j` the nearest such earlier item. */
export interface Duplicate {
  i: number;
  j: number;
}

/**
 * The pair Ajv's pairwise check reports for these items (its error reads "items ## j and i are identical"), or
 * undefined when all differ. `onItem` hears each item's canonical length: the caller's budget.
 */
export function lastDuplicate(items: readonly unknown[], onItem: (units: number) => void = () => {}): Duplicate | undefined {
  const lastSeen = new Map<string, number>();
  let found: Duplicate | undefined;
  for (let i = 0; i < items.length; i++) {
    const key = canonicalJson(items[i]);
    onItem(key.length);
    const before = lastSeen.get(key);
    if (before !== undefined) found = { i, j: before };
    lastSeen.set(key, i);
  }
  return found;
}

/** One text per JSON value: equal values (by JSON Schema's equality) and only they give the same text. */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'number') return Object.is(value, -0) ? '0' : String(value);
  if (value === null || typeof value !== 'object') return value === undefined ? 'undefined' : JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}
