/**
 * A small, strict parser of the Prometheus text exposition format (version 0.0.4), written for the tests so
 * that `/metrics` is checked against the format itself and not against prom-client's own idea of it. It
 * refuses what a scraper would: a malformed line, a name or label out of the grammar, a bad escape, a TYPE
 * after its samples or given twice, a family's samples split apart, a series given twice, a negative counter,
 * histogram buckets that are not cumulative or lack `+Inf`, or a `_count` that differs from the `+Inf` bucket.
 */
export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string | null;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES: readonly MetricType[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const finished = new Set<string>();
  const series = new Set<string>();
  let current: string | null = null;
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line.slice(0, 80))})`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!meta) return; // a plain comment
      const [, kind, name, rest = ''] = meta;
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: ${name} is not a metric name`);
      if (finished.has(name) || (families.get(name)?.samples.length ?? 0) > 0) throw new Error(`${where}: ${kind} of ${name} after its samples`);
      const family = familyOf(families, name);
      if (kind === 'TYPE') {
        if (family.typeSeen) throw new Error(`${where}: a second TYPE for ${name}`);
        if (!(TYPES as readonly string[]).includes(rest)) throw new Error(`${where}: ${rest} is not a metric type`);
        family.type = rest as MetricType;
        family.typeSeen = true;
      } else {
        if (family.help !== null) throw new Error(`${where}: a second HELP for ${name}`);
        family.help = unescape(rest, false, where);
      }
      if (current !== null && current !== name) finished.add(current);
      current = name;
      return;
    }
    const sample = parseSample(line, where);
    const familyName = owningFamily(families, sample.name);
    if (familyName !== current) {
      if (current !== null) finished.add(current);
      if (finished.has(familyName)) throw new Error(`${where}: the samples of ${familyName} are not together`);
      current = familyName;
    }
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (series.has(key)) throw new Error(`${where}: the series ${key} is given twice`);
    series.add(key);
    const family = familyOf(families, familyName);
    if (family.type === 'counter' && !(sample.value >= 0)) throw new Error(`${where}: a counter is negative or NaN`);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return new Map([...families].map(([name, f]) => [name, { name, type: f.type, help: f.help, samples: f.samples }]));
}

/** The value of one series (0 when the family has no such series yet: counters start at 0). */
export function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(owningFamily(families, name));
  const found = family?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length);
  return found ? found.value : 0;
}

type Building = Family & { typeSeen?: boolean };

function familyOf(families: Map<string, Family>, name: string): Building {
  let family = families.get(name) as Building | undefined;
  if (!family) {
    family = { name, type: 'untyped', help: null, samples: [] };
    families.set(name, family);
  }
  return family;
}

/** `x_bucket`, `x_sum`, `x_count` belong to the histogram or summary `x` when one is declared. */
function owningFamily(families: Map<string, Family>, sampleName: string): string {
  const base = /^(.*)_(bucket|sum|count)$/.exec(sampleName)?.[1];
  if (base !== undefined) {
    const type = families.get(base)?.type;
    if (type === 'histogram' || type === 'summary') return base;
  }
  return sampleName;
}

function parseSample(line: string, where: string): Sample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) throw new Error(`${where}: no metric name`);
  const name = nameMatch[0];
  let at = name.length;
  const labels: Record<string, string> = {};
  if (line[at] === '{') {
    at += 1;
    while (line[at] !== '}') {
      const labelMatch = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(at));
      if (!labelMatch || !LABEL_NAME.test(labelMatch[1])) throw new Error(`${where}: a bad label at column ${at + 1}`);
      at += labelMatch[0].length;
      let raw = '';
      while (line[at] !== '"') {
        if (at >= line.length) throw new Error(`${where}: an unterminated label value`);
        if (line[at] === '\\') {
          raw += line.slice(at, at + 2);
          at += 2;
        } else raw += line[at++];
      }
      at += 1;
      if (Object.hasOwn(labels, labelMatch[1])) throw new Error(`${where}: the label ${labelMatch[1]} is given twice`);
      labels[labelMatch[1]] = unescape(raw, true, where);
      if (line[at] === ',') at += 1;
      else if (line[at] !== '}') throw new Error(`${where}: expected , or } at column ${at + 1}`);
    }
    at += 1;
  }
  const rest = /^ (\S+)(?: (-?\d+))?$/.exec(line.slice(at));
  if (!rest) throw new Error(`${where}: expected " <value> [timestamp]"`);
  return { name, labels, value: parseValue(rest[1], where) };
}

/** As Go's strconv.ParseFloat reads it (the format says so): NaN and Inf in any case, Inf with a sign or none. */
function parseValue(text: string, where: string): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`${where}: ${text} is not a value`);
  return Number(text);
}

/** Label values escape \\, \" and \n; HELP text escapes \\ and \n. */
function unescape(raw: string, labelValue: boolean, where: string): string {
  return raw.replace(/\\(.?)/g, (_, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    if (c === '"' && labelValue) return '"';
    throw new Error(`${where}: the escape \\${c} is not allowed here`);
  });
}

function checkHistogram(family: Family): void {
  const byLabels = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = byLabels.get(key) ?? { buckets: [] };
    byLabels.set(key, entry);
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      entry.buckets.push([parseValue(le, `${family.name} le`), sample.value]);
    } else if (sample.name === `${family.name}_count`) entry.count = sample.value;
    else if (sample.name === `${family.name}_sum`) entry.sum = sample.value;
    else throw new Error(`${family.name}: ${sample.name} does not belong to a histogram`);
  }
  for (const [key, entry] of byLabels) {
    const sorted = [...entry.buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.length === 0 || sorted[sorted.length - 1][0] !== Infinity) throw new Error(`${family.name}${key}: no +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i][1] < sorted[i - 1][1]) throw new Error(`${family.name}${key}: buckets are not cumulative`);
    }
    if (entry.count === undefined || entry.sum === undefined) throw new Error(`${family.name}${key}: _count or _sum is missing`);
    if (entry.count !== sorted[sorted.length - 1][1]) throw new Error(`${family.name}${key}: _count differs from the +Inf bucket`);
  }
}
