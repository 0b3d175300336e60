/**
 * Turning a server's tool names into safe, unique TypeScript names. A tool may be called `get-user`,
 * `class`, `1st` or `__proto__`; the generated module must still compile and never let two tools share
 * a name. Pure functions: same input, same names.
 */

/** Words that cannot be a binding name in strict-mode ES modules, plus names with special meaning. */
const RESERVED_WORDS: ReadonlySet<string> = new Set([
  'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do',
  'else', 'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in',
  'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try', 'typeof', 'var',
  'void', 'while', 'with', 'yield', 'let', 'static', 'implements', 'interface', 'package', 'private',
  'protected', 'public', 'arguments', 'eval', 'undefined', 'NaN', 'Infinity',
  // An object literal key `__proto__` sets the prototype instead of making a property.
  '__proto__',
]);

/** Code-unit order: unlike localeCompare it does not depend on the machine's locale. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** True when `text` can be written bare as a property name in a type or an object literal. */
export function isPlainPropertyName(text: string): boolean {
  return IDENTIFIER.test(text) && text !== '__proto__';
}

/** A valid, non-reserved identifier resembling `name`: `get-user` → `get_user`, `1st` → `_1st`, `class` → `class_`. */
export function toIdentifier(name: string): string {
  let id = name.replace(/[^A-Za-z0-9_$]/g, '_');
  if (id === '') id = '_';
  if (/^[0-9]/.test(id)) id = `_${id}`;
  if (RESERVED_WORDS.has(id)) id = `${id}_`;
  return id;
}

/** A PascalCase type-name stem: `get-user` → `GetUser`, `list_files` → `ListFiles`, `1st` → `T1st`. */
export function toTypeStem(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
  let stem = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
  if (stem === '') stem = 'Tool';
  if (/^[0-9]/.test(stem)) stem = `T${stem}`;
  return stem;
}

/**
 * Hands out names that are unique within one namespace. The first claim of a name gets it as is; later
 * claims get a numeric suffix (`get_user`, `get_user_2`). Names claimed up front (the module's own
 * helpers) are never handed out.
 */
export class NameSpace {
  private readonly taken = new Set<string>();

  constructor(reserved: Iterable<string> = []) {
    for (const name of reserved) this.taken.add(name);
  }

  has(name: string): boolean {
    return this.taken.has(name);
  }

  /** Claims `base`, or `base` + separator + the smallest free number from 2. */
  claim(base: string, separator = '_'): string {
    let name = base;
    for (let n = 2; this.taken.has(name); n++) name = `${base}${separator}${n}`;
    this.taken.add(name);
    return name;
  }

  /** Claims one stem for which every `stem + suffix` is free, so a tool's types share a stem. */
  claimStem(base: string, suffixes: readonly string[]): string {
    let stem = base;
    for (let n = 2; suffixes.some((s) => this.taken.has(stem + s)); n++) stem = `${base}${n}`;
    for (const s of suffixes) this.taken.add(stem + s);
    return stem;
  }
}
