/**
 * The ABI rules on a module's interface: which imports it may ask for, and which exports it must have.
 */
import type { Problem } from '../errors.js';
import type { ParseResult } from './parse-module.js';
import { functionType, formatFuncType, type ParsedModule, type Signature } from './module-types.js';
import { EXPORT_MISSING, EXPORT_TYPE, IMPORT_KIND, IMPORT_MODULE, IMPORT_NAME, IMPORT_SIGNATURE } from './problem-codes.js';

type AllowedImports = Readonly<Record<string, Readonly<Record<string, Signature>>>>;

const quoteList = (names: string[]): string => names.map((n) => `"${n}"`).join(', ');

const sameTypes = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((t, i) => t === b[i]);

/** Levenshtein distance, for "did you mean" on a misspelt import name. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

function suggestion(name: string, candidates: string[]): string {
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = distance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best ? ` Did you mean "${best}"?` : '';
}

/** `typesKnown` false: the type section was not decoded whole, so signatures cannot be compared. */
export function checkImports(module: ParsedModule, allowed: AllowedImports, typesKnown = true): Problem[] {
  const problems: Problem[] = [];
  const modules = Object.keys(allowed);
  for (const entry of module.imports) {
    const label = `The import "${entry.module}"."${entry.name}"`;
    if (entry.kind !== 'func') {
      problems.push({
        code: IMPORT_KIND,
        message: `${label} is a ${entry.kind}; a function package may import only functions (from ${quoteList(modules)}). Define the ${entry.kind} in the module instead${entry.kind === 'memory' ? ' and export it as "memory"' : ''}.`,
      });
      continue;
    }
    const provided = Object.hasOwn(allowed, entry.module) ? allowed[entry.module] : undefined;
    if (!provided) {
      problems.push({
        code: IMPORT_MODULE,
        message: `${label} comes from the module "${entry.module}", which Subako does not provide; imports may come only from ${quoteList(modules)}.`,
      });
      continue;
    }
    const expected = Object.hasOwn(provided, entry.name) ? provided[entry.name] : undefined;
    if (!expected) {
      const names = Object.keys(provided);
      const listed = names.length <= 8 ? ` It provides ${quoteList(names)}.` : '';
      problems.push({
        code: IMPORT_NAME,
        message: `${label} is not a function "${entry.module}" provides.${listed}${suggestion(entry.name, names)}`,
      });
      continue;
    }
    const actual = entry.typeIndex === undefined ? null : module.types[entry.typeIndex];
    if (!actual && !typesKnown) continue;
    if (!actual || !sameTypes(actual.params, expected.params) || !sameTypes(actual.results, expected.results)) {
      problems.push({
        code: IMPORT_SIGNATURE,
        message: `${label} has the signature ${actual ? formatFuncType(actual) : 'of an unknown type'}; Subako provides it as ${formatFuncType(expected)}.`,
      });
    }
  }
  return problems;
}

/**
 * `_start: () -> ()` and `memory`. When the module is malformed, a missing export may only mean the
 * export section could not be read, so `export.missing` is not claimed then.
 */
export function checkExports(parsed: ParseResult, malformed: boolean): Problem[] {
  const { module } = parsed;
  const problems: Problem[] = [];
  const start = module.exports.find((e) => e.name === '_start');
  if (!start) {
    if (!malformed) {
      problems.push({
        code: EXPORT_MISSING,
        message: 'The module does not export "_start". A function package is a WASI command: export "_start" as a function () -> () (a C or Rust program with main() does this; do not build a reactor).',
      });
    }
  } else if (start.kind !== 'func') {
    problems.push({ code: EXPORT_TYPE, message: `The export "_start" is a ${start.kind}; it must be a function () -> ().` });
  } else {
    const type = functionType(module, start.index);
    if (type && (type.params.length > 0 || type.results.length > 0)) {
      problems.push({ code: EXPORT_TYPE, message: `The export "_start" has the signature ${formatFuncType(type)}; it must be () -> ().` });
    }
  }
  const memory = module.exports.find((e) => e.name === 'memory');
  if (!memory) {
    if (!malformed) {
      problems.push({
        code: EXPORT_MISSING,
        message: 'The module does not export "memory". Export its linear memory as "memory" (WASI toolchains do this by default).',
      });
    }
  } else if (memory.kind !== 'memory') {
    problems.push({ code: EXPORT_TYPE, message: `The export "memory" is a ${memory.kind}; it must be the module's linear memory.` });
  }
  return problems;
}
