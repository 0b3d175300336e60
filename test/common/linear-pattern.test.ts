/**
 * A schema subako did not write has its patterns matched by a linear-time engine: the same answers as
 * ECMAScript's engine (JSON Schema's dialect) for every pattern it runs, and a named refusal for the ones it
 * cannot run without backtracking.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileLinearPattern, estimateProgramSize, MAX_PATTERN_PROGRAM, UnsupportedPatternError } from '../../src/common/linear-pattern.js';

/** Patterns as tool schemas write them, and every construct whose meaning differs between the two syntaxes. */
const PATTERNS = [
  '^(\\w+\\s?)*$',
  '^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$',
  '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$',
  '^\\d{4}-\\d{2}-\\d{2}$',
  '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  '^https?://[^\\s/$.?#].[^\\s]*$',
  '\\s', '\\S', '^\\s*$', '^\\S+$', '[\\s]', '[^\\s]', '[\\S]', '[^\\S]', '[a\\sb]', '[\\S\\d]',
  '.', '^.$', '^.+$', 'a.c', '[.]',
  '[^]', '^[^]$', '[]', 'a[]', '[[]', '[[:alpha:]', '[\\b]', '\\bword\\b', '\\Bx',
  '^\\u0041$', '\\u{1F600}', '^\\uD83D\\uDE00$', '\\x41', '\\cJ', '\\0', '[\\cJ\\u{1F600}]',
  '^\\p{L}+$', '[\\p{L}\\d]+', '[^\\P{Lu}]', '\\p{Lu}', '\\P{L}', '\\p{gc=Nd}', '\\p{Script=Greek}', '\\p{sc=Latin}',
  '(?<year>\\d{4})-(?<month>\\d{2})', '(?:ab)+?c', 'a{2,3}', 'a{2,}', 'a{3}', 'x*?y', '^$', '', 'a|', '(|b)',
  '\\/\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\', '[\\-\\]]', '[a-]', '\\t\\n\\r\\f\\v',
];

/** Strings that tell the differences apart: every kind of space, line terminators, astral characters. */
const STRINGS = [
  '', 'a', 'abc', 'a c', 'ab\u00a0cd', '\u00a0', '\v', '\t', '\r', '\n', '\u2028', '\u2029', '\u3000', '\ufeff', '\u180e',
  '\u0085', '\u200b', 'word', ' word ', 'A', 'AB', '😀', 'x😀y', '\ud83d', 'λόγος', 'Ünïcödé', '2024-05-17', '2024-5-17',
  // Short enough that the native engine, which backtracks, answers the ReDoS patterns above in time.
  'ada@example.org', 'a'.repeat(12) + '!', 'What is the best way!',
  'https://example.org/a?b', 'http://x y', '3f2b8c1e-0a4d-4e5f-9a7b-1c2d3e4f5a6b', ']', '[', '-', 'b', '\b', '\x00', 'x*y',
  '/.*+?()[]{}|^$\\', 'abcabc', 'ac', 'aac', 'aaaa', 'yy', 'Hello World', 'ΑΒΓ', '12345',
];

describe('a pattern of a schema subako did not write matches exactly what ECMAScript matches', () => {
  it('for every pattern and string of the table, the same answer as the native engine with the u flag', () => {
    for (const source of PATTERNS) {
      const native = new RegExp(source, 'u');
      const linear = compileLinearPattern(source);
      for (const text of STRINGS) {
        assert.equal(linear.test(text), native.test(text), `pattern ${JSON.stringify(source)} against ${JSON.stringify(text)}`);
      }
    }
  });

  it('\\s, \\S and . agree with ECMAScript on every code point of the Basic Multilingual Plane', () => {
    const cases = ['^\\s$', '^\\S$', '^.$', '^[\\s]$', '^[\\S]$'].map((source) => [new RegExp(source, 'u'), compileLinearPattern(source)] as const);
    for (let codePoint = 0; codePoint <= 0xffff; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue; // not characters on their own
      const char = String.fromCharCode(codePoint);
      for (const [native, linear] of cases) {
        if (linear.test(char) !== native.test(char)) assert.fail(`${native.source} against U+${codePoint.toString(16)}`);
      }
    }
  });

  it('random strings over a tricky alphabet get the same answers (property)', () => {
    const alphabet = fc.constantFrom('a', 'b', 'A', '0', '9', ' ', '\u00a0', '\v', '\r', '\n', '\u2028', '-', '.', '@', '_', '😀', 'é', '[', ']');
    fc.assert(
      fc.property(fc.constantFrom(...PATTERNS), fc.array(alphabet, { maxLength: 16 }).map((chars) => chars.join('')), (source, text) => {
        assert.equal(compileLinearPattern(source).test(text), new RegExp(source, 'u').test(text));
      }),
      { numRuns: 3_000 },
    );
  });

  it('the backtracking attack is answered by the linear engine: the 68-character question does not match', () => {
    const question = 'What is the best way to configure the server for many tenants today!';
    assert.equal(question.length, 68);
    assert.equal(compileLinearPattern('^(\\w+\\s?)*$').test(question), false);
    assert.equal(compileLinearPattern('^(\\w+\\s?)*$').test(question.slice(0, -1)), true);
  });
});

describe('what the linear engine cannot run is refused, naming the construct', () => {
  const refusals: Array<[string, RegExp]> = [
    ['(?=a)b', /uses lookahead \(\(\?=…\)/],
    ['a(?!b)', /uses lookahead \(\(\?!…\)/],
    ['(?<=a)b', /uses lookbehind \(\(\?<=…\)/],
    ['(?<!a)b', /uses lookbehind \(\(\?<!…\)/],
    ['(a)\\1', /uses a backreference \(\\1\)/],
    ['(?<x>a)\\k<x>', /uses a backreference \(\\k<…>\)/],
    ['a{1001}', /cannot be compiled by the linear-time engine \(.*invalid repeat count/],
    ['(?:[a-z]{1000}x){10}', new RegExp(`would compile to about \\d+ instructions, more than the ${MAX_PATTERN_PROGRAM} accepted`)],
    ['\\p{Letter}', /cannot be compiled by the linear-time engine/],
  ];
  for (const [source, reason] of refusals) {
    it(`${source}: ${reason.source}`, () => {
      assert.throws(() => compileLinearPattern(source), (err: unknown) => {
        assert.ok(err instanceof UnsupportedPatternError);
        assert.match(err.message, reason);
        assert.match(err.message, /without lookahead, lookbehind or backreferences/);
        assert.equal(err.pattern, source);
        return true;
      });
    });
  }

  it('a pattern ECMAScript refuses is refused as the native engine refused it (SyntaxError), before any translation', () => {
    for (const source of ['(', '[', 'a**', '[\\d-z]', '\\p{Nope}', '\\A', '(?i)a', '\\q']) {
      assert.throws(() => compileLinearPattern(source), SyntaxError, source);
    }
  });

  it('the program estimate, read before compiling, follows the compiled size (within a factor of two)', () => {
    for (const source of [...PATTERNS, '^[a-z0-9-]{1,64}$', '(?:a{10}){10}', 'x{0,999}', '(ab|cd){5,7}', '(?:[a-z]{100}x){5}']) {
      const { programSize } = compileLinearPattern(source);
      assert.ok(estimateProgramSize(source) * 2 + 10 >= programSize, `${source}: estimated ${estimateProgramSize(source)}, compiled ${programSize}`);
    }
  });
});
