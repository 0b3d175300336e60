/**
 * A `pattern` of a schema subako did not write, matched in linear time. JSON Schema's patterns are ECMAScript
 * regular expressions (Ajv compiles them with the `u` flag); a backtracking engine runs `^(\w+\s?)*$` against a
 * 68-character question for longer than the universe has, so these run on re2js (RE2 in pure JavaScript: no
 * backtracking; a match costs at most the string's length × the pattern's program size).
 *
 * The text is first parsed as ECMAScript (never run): what JavaScript refuses is refused as before. It is then
 * translated where the two syntaxes read the same text differently (`\s`, `.`, `[^]`, `[]`, `[\b]`, `\uXXXX`,
 * `\cX`, a `[` inside a class), so a pattern matches exactly what it matched on the native engine. What RE2
 * cannot run without backtracking — lookahead, lookbehind, backreferences — and what it bounds (a counted
 * repetition above 1000) is refused with the construct named: UnsupportedPatternError.
 */
import { RE2JS } from 're2js';

/** A pattern the linear-time engine does not run; the message names the construct and what is accepted. */
export class UnsupportedPatternError extends Error {
  constructor(readonly pattern: string, reason: string) {
    super(
      `pattern ${JSON.stringify(pattern)} ${reason}; a schema subako did not write is matched by a linear-time engine ` +
        '(RE2), which runs patterns without lookahead, lookbehind or backreferences and with repetition counts up to 1000',
    );
    this.name = 'UnsupportedPatternError';
  }
}

export interface LinearPattern {
  /** The pattern as the schema wrote it. */
  readonly source: string;
  /** RE2's measure of the compiled program: a match costs at most length × programSize steps. */
  readonly programSize: number;
  /** Whether the pattern matches anywhere in `text` (RegExp.prototype.test without flags). */
  test(text: string): boolean;
}

/** At most this many instructions per pattern: compiling is slow past it (120,000 took 1.4 s), matching too. */
export const MAX_PATTERN_PROGRAM = 5_000;

type Range = readonly [number, number];
/** ECMAScript's WhiteSpace and LineTerminator, what `\s` matches (RE2's `\s` is only `[\t\n\f\r ]`). */
const JS_SPACE: Range[] = [
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
];
/** What `.` does not match without the `s` flag (RE2's `.` stops only at `\n`). */
const JS_LINE_TERMINATORS: Range[] = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];
const MAX_CODE_POINT = 0x10ffff;

const hex = (codePoint: number): string => `\\x{${codePoint.toString(16)}}`;
const ranges = (list: readonly Range[]): string => list.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join('');

function complement(list: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of list) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const SPACE = ranges(JS_SPACE);
const NOT_SPACE = ranges(complement(JS_SPACE));
const DOT = `[${ranges(complement(JS_LINE_TERMINATORS))}]`;
const ANYTHING = `[${hex(0)}-${hex(MAX_CODE_POINT)}]`;
const NOTHING = `[^${hex(0)}-${hex(MAX_CODE_POINT)}]`;

/** `\p{gc=L}` and `\p{Script=Greek}` are RE2's `\p{L}` and `\p{Greek}`. */
const PROPERTY_PREFIX = /^(?:General_Category|gc|Script|sc)=/;

/** One escape at `at` (the backslash): the RE2 text for it and how many characters it took. */
function translateEscape(pattern: string, at: number, inClass: boolean): [string, number] {
  const letter = pattern[at + 1];
  switch (letter) {
    case 's': return [inClass ? SPACE : `[${SPACE}]`, 2];
    case 'S': return [inClass ? NOT_SPACE : `[^${SPACE}]`, 2];
    case 'b': return [inClass ? hex(8) : '\\b', 2]; // in a class, ECMAScript's \b is a backspace
    case 'c': return [hex(pattern.charCodeAt(at + 2) % 32), 3];
    case '0': return [hex(0), 2];
    case 'k': throw new UnsupportedPatternError(pattern, 'uses a backreference (\\k<…>)');
    case 'u': return translateUnicodeEscape(pattern, at);
    case 'p':
    case 'P': {
      const end = pattern.indexOf('}', at);
      const name = pattern.slice(at + 3, end).replace(PROPERTY_PREFIX, '');
      return [`\\${letter}{${name}}`, end + 1 - at];
    }
    default:
      if (letter >= '1' && letter <= '9') throw new UnsupportedPatternError(pattern, `uses a backreference (\\${letter})`);
      // \d \w \t \n \xHH and escaped syntax characters read the same in both (RE2's \d and \w are ASCII too).
      return [`\\${letter}`, 2];
  }
}

/** `\u{1F600}`, `\uXXXX`, and a surrogate pair written as two `\u` escapes (one code point under the `u` flag). */
function translateUnicodeEscape(pattern: string, at: number): [string, number] {
  if (pattern[at + 2] === '{') {
    const end = pattern.indexOf('}', at);
    return [hex(parseInt(pattern.slice(at + 3, end), 16)), end + 1 - at];
  }
  const high = parseInt(pattern.slice(at + 2, at + 6), 16);
  const pair = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(pattern.slice(at + 6));
  if (high >= 0xd800 && high <= 0xdbff && pair) {
    const low = parseInt(pair[1], 16);
    return [hex(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)), 12];
  }
  return [hex(high), 6];
}

/** The RE2 text that matches what the (valid, `u`-flag) ECMAScript pattern matches. */
export function toRe2Syntax(pattern: string): string {
  let out = '';
  let inClass = false;
  let at = 0;
  while (at < pattern.length) {
    const char = pattern[at];
    if (char === '\\') {
      const [text, length] = translateEscape(pattern, at, inClass);
      out += text;
      at += length;
    } else if (inClass) {
      if (char === ']') inClass = false;
      // RE2 reads `[:alpha:]` inside a class as a POSIX class; ECMAScript's `[` there is a character.
      out += char === '[' ? '\\[' : char;
      at += 1;
    } else if (char === '[') {
      if (pattern.startsWith('[]', at)) { out += NOTHING; at += 2; continue; } // never matches
      if (pattern.startsWith('[^]', at)) { out += ANYTHING; at += 3; continue; } // any character
      inClass = true;
      const negated = pattern[at + 1] === '^';
      out += negated ? '[^' : '[';
      at += negated ? 2 : 1;
    } else if (char === '.') {
      out += DOT;
      at += 1;
    } else if (char === '(' && pattern[at + 1] === '?') {
      const opener = pattern.slice(at, at + 4);
      if (opener.startsWith('(?=') || opener.startsWith('(?!')) throw new UnsupportedPatternError(pattern, `uses lookahead (${opener.slice(0, 3)}…)`);
      if (opener === '(?<=' || opener === '(?<!') throw new UnsupportedPatternError(pattern, `uses lookbehind (${opener}…)`);
      if (opener.startsWith('(?<')) {
        // A named group: only whether it matches matters here, and RE2's names are narrower than ECMAScript's.
        out += '(';
        at = pattern.indexOf('>', at) + 1;
      } else {
        out += '(?:';
        at += 3;
      }
    } else {
      out += char;
      at += 1;
    }
  }
  return out;
}

/** How many characters the escape at `at` (the backslash) spans. */
function escapeLength(pattern: string, at: number): number {
  const letter = pattern[at + 1];
  if ((letter === 'u' || letter === 'p' || letter === 'P') && pattern[at + 2] === '{') return pattern.indexOf('}', at) + 1 - at;
  if (letter === 'u') return 6;
  if (letter === 'x') return 4;
  if (letter === 'c') return 3;
  return 2;
}

const COUNTED_REPETITION = /^\{(\d+)(?:(,)(\d*))?\}/;

/**
 * An upper estimate of the program a (valid) pattern compiles to, read from its text before compiling: each
 * atom one instruction, a counted repetition its atom times the count. Compiling is what costs (a 2 KiB pattern
 * of `[a-z]{1000}` groups took 1.4 s), so a pattern past the limit is refused before it is compiled.
 */
export function estimateProgramSize(pattern: string): number {
  const outer: number[] = [];
  let size = 0;
  let last = 0;
  let at = 0;
  while (at < pattern.length) {
    const char = pattern[at];
    if (char === '(') {
      outer.push(size);
      size = 0;
      last = 0;
      at = pattern[at + 1] !== '?' ? at + 1 : pattern[at + 2] === ':' ? at + 3 : pattern.indexOf('>', at) + 1;
      continue;
    }
    if (char === ')') {
      last = size + 1;
      size = (outer.pop() ?? 0) + last;
      at += 1;
      continue;
    }
    const counted = char === '{' ? COUNTED_REPETITION.exec(pattern.slice(at, at + 32)) : null;
    if (counted) {
      const bound = counted[3] ? Number(counted[3]) : Number(counted[1]) + (counted[2] ? 1 : 0);
      size += last * Math.max(0, bound - 1) + 1;
      at += counted[0].length;
      continue;
    }
    if (char === '[') {
      let end = at + 1;
      if (pattern[end] === '^') end += 1;
      while (end < pattern.length && pattern[end] !== ']') end += pattern[end] === '\\' ? escapeLength(pattern, end) : 1;
      at = end + 1;
    } else {
      at += char === '\\' ? escapeLength(pattern, at) : 1;
    }
    last = char === '|' || char === '*' || char === '+' || char === '?' ? 0 : 1;
    size += 1;
  }
  return size;
}

/** Compiles a schema's pattern for linear-time matching; throws SyntaxError or UnsupportedPatternError. */
export function compileLinearPattern(pattern: string): LinearPattern {
  // Parsed, never run: a pattern ECMAScript refuses is refused as it was by the native engine.
  new RegExp(pattern, 'u');
  const translated = toRe2Syntax(pattern);
  const estimated = estimateProgramSize(pattern);
  if (estimated > MAX_PATTERN_PROGRAM) {
    throw new UnsupportedPatternError(pattern, `would compile to about ${estimated} instructions, more than the ${MAX_PATTERN_PROGRAM} accepted`);
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(translated);
  } catch (err) {
    if (err instanceof UnsupportedPatternError) throw err;
    throw new UnsupportedPatternError(pattern, `cannot be compiled by the linear-time engine (${(err as Error).message})`);
  }
  const programSize = compiled.programSize();
  if (programSize > MAX_PATTERN_PROGRAM) {
    throw new UnsupportedPatternError(pattern, `compiles to ${programSize} instructions, more than the ${MAX_PATTERN_PROGRAM} accepted`);
  }
  return { source: pattern, programSize, test: (text) => compiled.test(text) };
}
