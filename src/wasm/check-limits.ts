/**
 * The caps of `module-limits.ts` applied to a decoded module: which counts are past them, and the
 * problem (or the error, for the rewrite before compiling) that says so. Pure.
 */
import { SubakoError, type Problem } from '../errors.js';
import type { ParseResult } from './parse-module.js';
import { importCount, type ParsedModule } from './module-types.js';
import { formatLimit, MODULE_LIMIT_INFO, type LimitOverrun, type ModuleLimitName, type ModuleLimits } from './module-limits.js';
import { LIMIT_CODES } from './problem-codes.js';

/** Every count of the module past its cap: those that stopped the decoder first, then the rest. */
export function findLimitOverruns(parsed: ParseResult, moduleBytes: number, limits: ModuleLimits): LimitOverrun[] {
  const found: LimitOverrun[] = [];
  // One overrun per cap: the function and code sections, say, both count functions.
  const add = (overrun: LimitOverrun): void => {
    if (overrun.found > limits[overrun.limit] && !found.some((o) => o.limit === overrun.limit)) found.push(overrun);
  };
  parsed.overruns.forEach(add);
  const { module } = parsed;
  add({ limit: 'moduleBytes', found: moduleBytes });
  // The decoder caps these as it reads a section; imports alone can still pass them.
  add({ limit: 'functions', found: importCount(module, 'func') + module.functions.length });
  add({ limit: 'tables', found: importCount(module, 'table') + module.tables.length });
  add({ limit: 'globals', found: importCount(module, 'global') + module.globals.length });
  add({ limit: 'elementSegments', found: module.elementSegments });
  add({ limit: 'elementEntries', found: module.elementEntries });
  add({ limit: 'dataSegments', found: module.dataSegments });
  add({ limit: 'dataBytes', found: module.dataBytes });
  const tables = [...module.imports.flatMap((i) => (i.table ? [i.table] : [])), ...module.tables];
  add(worst('tableElements', 'table', tables.map((t) => t.limits.min), 0, limits));
  const firstDefined = importCount(module, 'func');
  add(worst('functionLocals', 'function', module.codes.map((code, i) => code.locals + paramCount(module, i)), firstDefined, limits));
  add(worst('functionBodyBytes', 'function', module.codes.map((code) => code.end - code.bodyStart), firstDefined, limits));
  return found;
}

function paramCount(module: ParsedModule, definedIndex: number): number {
  const typeIndex = module.functions[definedIndex];
  return typeIndex === undefined ? 0 : (module.types[typeIndex]?.params.length ?? 0);
}

/** For a per-item cap: the first item past it, and how many others are. */
function worst(limit: ModuleLimitName, noun: string, values: number[], firstIndex: number, limits: ModuleLimits): LimitOverrun {
  const cap = limits[limit];
  const first = values.findIndex((v) => v > cap);
  if (first < 0) return { limit, found: 0 };
  const others = values.filter((v) => v > cap).length - 1;
  return { limit, found: values[first], where: `${noun} ${firstIndex + first}`, others };
}

const SUBJECTS: Readonly<Record<ModuleLimitName, (found: string, where: string) => string>> = {
  moduleBytes: (n) => `The module is ${n} bytes`,
  types: (n) => `The module declares ${n} types`,
  typeParams: (n, at) => `The module's ${at} has ${n} parameters`,
  typeResults: (n, at) => `The module's ${at} has ${n} results`,
  imports: (n) => `The module declares ${n} imports`,
  exports: (n) => `The module declares ${n} exports`,
  functions: (n) => `The module has ${n} functions, imported and defined`,
  tables: (n) => `The module has ${n} tables, imported and defined`,
  tableElements: (n, at) => `The module's ${at} starts with ${n} elements`,
  globals: (n) => `The module has ${n} globals, imported and defined`,
  elementSegments: (n) => `The module declares ${n} element segments`,
  elementEntries: (n) => `The module's element segments hold ${n} entries in all`,
  dataSegments: (n) => `The module declares ${n} data segments`,
  dataBytes: (n) => `The module's data segments hold ${n} bytes in all`,
  functionLocals: (n, at) => `The module's ${at} has ${n} locals, its parameters included`,
  functionBodyBytes: (n, at) => `The body of the module's ${at} is ${n} bytes`,
};

export function limitMessage(overrun: LimitOverrun, limits: ModuleLimits): string {
  const { limit, found, where = '', others = 0 } = overrun;
  const more = others > 0 ? ` (and ${others} more ${where.split(' ')[0]}${others > 1 ? 's are' : ' is'} past it)` : '';
  return `${SUBJECTS[limit](found.toLocaleString('en-US'), where)}; the cap is ${formatLimit(limit, limits[limit])}${more}. ${MODULE_LIMIT_INFO[limit].advice}`;
}

export function limitProblem(overrun: LimitOverrun, limits: ModuleLimits): Problem {
  return { code: LIMIT_CODES[overrun.limit], message: limitMessage(overrun, limits) };
}

/**
 * A module past a cap reached the rewrite before compiling (it was not checked, or the caps differ):
 * refused with the same code and message the upload check gives.
 */
export class ModuleLimitError extends SubakoError {
  readonly limit: ModuleLimitName;
  readonly found: number;
  readonly cap: number;

  constructor(overrun: LimitOverrun, limits: ModuleLimits) {
    super(LIMIT_CODES[overrun.limit], limitMessage(overrun, limits));
    this.limit = overrun.limit;
    this.found = overrun.found;
    this.cap = limits[overrun.limit];
  }
}
