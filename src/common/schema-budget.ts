/**
 * The budget of one check against a schema subako did not write (a remote MCP server's, a package's). Such a
 * schema chooses how much work a check is: a pattern that backtracks, `uniqueItems` over objects (pairwise),
 * a big `enum`, subschemas that `$ref` each other twice at every level (2^depth evaluations of one value). The
 * check runs on the event loop, so it is bounded there, and what is past the bound is refused naming the
 * keyword, never skipped:
 *
 * - patterns run on a linear-time engine (linear-pattern.ts); one match may take at most MAX_MATCH_STEPS
 *   (the string's length × the pattern's program size), decided before it runs;
 * - `uniqueItems` over items that may be objects or arrays is one pass over canonical forms (unique-items.ts);
 * - every keyword Ajv evaluates reports to a meter, which reads the clock every few thousand units of work
 *   and ends the check past CHECK_BUDGET_MS (compiling: COMPILE_BUDGET_MS), naming the keyword it was in.
 *
 * The meter hooks Ajv's keyword rules of the engines made for such schemas only (`boundKeywords`): each
 * keyword's code generator is wrapped to emit one call to `charge` before the keyword's own code. Our own
 * schemas compile on engines without it.
 */
import { createRequire } from 'node:module';
import type { AnySchemaObject, CodeKeywordDefinition, KeywordCxt } from 'ajv';
import type { Rule } from 'ajv/dist/compile/rules.js';
import { compileLinearPattern } from './linear-pattern.js';
import { lastDuplicate, type Duplicate } from './unique-items.js';

/** How long one check of arguments (or a result) against such a schema may hold the event loop. */
export const CHECK_BUDGET_MS = 250;
/** How long compiling such a schema may take (once per schema: compiled validators are cached). */
export const COMPILE_BUDGET_MS = 1_000;
/** One match's bound, in steps: the string's length × the pattern's program size (≈ 0.3 s at worst). */
export const MAX_MATCH_STEPS = 1_000_000;
/** Work between two reads of the clock: small enough that the budget is not overrun by much. */
const UNITS_PER_CLOCK_READ = 2_048;

/** The check ran past its budget: what it was doing, where in the schema, and why it stopped. */
export class SchemaBudgetExceeded extends Error {
  constructor(readonly keyword: string, readonly location: string, readonly reason: string) {
    super(`${keyword} at ${location}: ${reason}`);
    this.name = 'SchemaBudgetExceeded';
  }
}

interface Meter {
  readonly deadline: number;
  readonly budgetMs: number;
  /** What is being bounded, as the refusal says it: "checking", "compiling". */
  readonly activity: string;
  units: number;
  keyword: string;
  location: string;
}

/** The meter of the check running now: checks are synchronous, so there is at most one. */
let active: Meter | undefined;

/**
 * Runs `work` (`activity`: compiling or checking on a bounded engine) under a budget of `budgetMs`; throws
 * SchemaBudgetExceeded past it, and for a value or schema nested deeper than the stack (a RangeError).
 */
export function withinBudget<T>(activity: 'checking' | 'compiling', budgetMs: number, work: () => T): T {
  const outer = active;
  const meter: Meter = { deadline: performance.now() + budgetMs, budgetMs, activity, units: 0, keyword: 'schema', location: '#' };
  active = meter;
  try {
    return work();
  } catch (err) {
    if (err instanceof RangeError) {
      throw new SchemaBudgetExceeded(meter.keyword, meter.location, `it nests deeper than the checker follows (${err.message})`);
    }
    throw err;
  } finally {
    active = outer;
  }
}

/** Counts `units` of work done at `keyword` (plus the width of `data`, when the keyword walks it). */
function charge(units: number, data: unknown, keyword: string, location: string): void {
  const meter = active;
  if (meter === undefined) return;
  meter.keyword = keyword;
  meter.location = location;
  meter.units += units + (data === undefined ? 0 : widthOf(data));
  if (meter.units < UNITS_PER_CLOCK_READ) return;
  meter.units = 0;
  if (performance.now() > meter.deadline) {
    throw new SchemaBudgetExceeded(
      keyword, location, `${meter.activity} takes more than ${meter.budgetMs} ms, the most subako spends on it for a schema it did not write`,
    );
  }
}

function widthOf(data: unknown): number {
  if (typeof data === 'string' || Array.isArray(data)) return data.length;
  return typeof data === 'object' && data !== null ? Object.keys(data).length : 0;
}

/** Keywords whose work grows with the value they check (its length, items or properties). */
const WALKS_THE_VALUE = new Set([
  'minLength', 'maxLength', 'items', 'prefixItems', 'additionalItems', 'contains', 'unevaluatedItems', 'uniqueItems',
  'additionalProperties', 'patternProperties', 'propertyNames', 'unevaluatedProperties', 'minProperties', 'maxProperties',
]);

/**
 * The work a keyword's own value makes per evaluation: every node of an `enum` or `const` (compared deeply),
 * the entries of a `required` list or a `properties` map (its subschemas are metered where they run).
 */
function schemaUnits(keyword: string, value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const entries = Array.isArray(value) ? value : Object.values(value);
  if (keyword !== 'enum' && keyword !== 'const') return entries.length;
  let units = entries.length;
  for (const entry of entries) units += schemaUnits(keyword, entry);
  return units;
}

/** The regular-expression engine Ajv gets (its `code.regExp` option): linear time, each match bounded. */
export const boundedRegExp = Object.assign(
  (pattern: string): { test(text: string): boolean; toString(): string } => {
    const compiled = compileLinearPattern(pattern);
    return {
      test(text: string): boolean {
        const steps = text.length * compiled.programSize;
        if (steps > MAX_MATCH_STEPS) {
          throw new SchemaBudgetExceeded(
            active?.keyword ?? 'pattern',
            active?.location ?? '#',
            `matching ${text.length} characters against pattern ${JSON.stringify(pattern)} (${compiled.programSize} instructions) ` +
              `takes more than the ${MAX_MATCH_STEPS} steps one match may take (length × instructions); a shorter string is checked`,
          );
        }
        const matched = compiled.test(text);
        if (active) charge(steps, undefined, active.keyword, active.location);
        return matched;
      },
      // Ajv shares one compiled engine per distinct key within a validator.
      toString: () => `linear:${pattern}`,
    };
  },
  { code: 'subako/linear-pattern' },
);

/** The face of an Ajv instance this file needs: its keyword rules. */
interface RuledAjv {
  RULES: { all: Record<string, boolean | Rule | undefined> };
}

type Generate = NonNullable<CodeKeywordDefinition['code']>;
type Codegen = typeof import('ajv/dist/compile/codegen/index.js');
type DataTypes = typeof import('ajv/dist/compile/validate/dataType.js');

const requireAjv = createRequire(import.meta.url);

/**
 * Makes an Ajv instance's `uniqueItems` one pass over canonical forms (unique-items.ts) wherever Ajv would compare
 * every pair of items. Every instance gets it, trusted schemas' too: the pairwise loop is quadratic, and its deep
 * equality calls an item's own `toString` when it has one — `[{"toString":1},{"toString":1}]` threw a TypeError out
 * of the check. `find` is the duplicate search (metered for untrusted schemas). Call once, before compiling.
 */
export function linearUniqueItems(ajv: RuledAjv, find: (items: unknown[], location: string) => Duplicate | undefined = (items) => lastDuplicate(items)): void {
  const { _ } = requireAjv('ajv/dist/compile/codegen/index.js') as Codegen;
  const { getSchemaTypes } = requireAjv('ajv/dist/compile/validate/dataType.js') as DataTypes;
  const unique = ajv.RULES.all.uniqueItems;
  if (typeof unique !== 'object') return;
  const generate = (unique.definition as CodeKeywordDefinition).code;
  (unique.definition as CodeKeywordDefinition).code = (cxt: KeywordCxt, ruleType?: string) => {
    // Ajv's own check is a hash when the items are declared scalars; only its pairwise loop is replaced.
    const itemTypes = cxt.parentSchema.items ? getSchemaTypes(cxt.parentSchema.items as AnySchemaObject) : [];
    const scalars = itemTypes.length > 0 && !itemTypes.some((type) => type === 'object' || type === 'array');
    if (cxt.schema !== true || scalars) return generate(cxt, ruleType);
    const search = cxt.gen.scopeValue('func', { ref: find });
    const duplicate = cxt.gen.const('duplicate', _`${search}(${cxt.data}, ${`${cxt.it.errSchemaPath}/uniqueItems`})`);
    cxt.setParams({ i: _`${duplicate}.i`, j: _`${duplicate}.j` });
    cxt.fail(_`${duplicate} !== undefined`);
  };
}

/** Makes an Ajv instance's keywords bounded: metered, and `uniqueItems` linear. Call once, before compiling. */
export function boundKeywords(ajv: RuledAjv): void {
  const { _ } = requireAjv('ajv/dist/compile/codegen/index.js') as Codegen;
  linearUniqueItems(ajv, meteredLastDuplicate);

  for (const [keyword, rule] of Object.entries(ajv.RULES.all)) {
    if (typeof rule !== 'object' || typeof (rule.definition as CodeKeywordDefinition).code !== 'function') continue;
    const definition = rule.definition as CodeKeywordDefinition;
    const generate: Generate = definition.code;
    const walks = WALKS_THE_VALUE.has(keyword);
    definition.code = (cxt: KeywordCxt, ruleType?: string) => {
      const location = `${cxt.it.errSchemaPath}/${keyword}`;
      const units = 1 + schemaUnits(keyword, cxt.schema);
      charge(units, undefined, keyword, location); // compiling is metered too
      const meter = cxt.gen.scopeValue('func', { ref: charge });
      cxt.gen.code(_`${meter}(${units}, ${walks ? cxt.data : _`undefined`}, ${keyword}, ${location})`);
      generate(cxt, ruleType);
    };
  }
}

function meteredLastDuplicate(items: unknown[], location: string): Duplicate | undefined {
  return lastDuplicate(items, (units) => charge(units, undefined, 'uniqueItems', location));
}
