/**
 * Nothing in the bytes can make the checker throw: random mutations, insertions, deletions and
 * truncations of real modules, and random bytes after a valid header, always give a report.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkModule, instrumentModule } from '../../src/wasm/index.js';
import { FUNCTION_MODULE_RULES } from '../../src/package/module-rules.js';
import { SubakoError } from '../../src/errors.js';
import { builtFixture, HEADER, watFixture } from './module-builder.js';

type Edit =
  | { kind: 'set'; at: number; value: number }
  | { kind: 'insert'; at: number; values: number[] }
  | { kind: 'delete'; at: number; length: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), values: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 8 }) }),
);

function mutate(original: Uint8Array, edits: Edit[], cut: number | null): Uint8Array {
  const bytes = [...original];
  for (const e of edits) {
    // Edits land past the header most of the time: that is where decoding gets interesting.
    const at = bytes.length === 0 ? 0 : e.at % bytes.length;
    if (e.kind === 'set') bytes[at] = e.value;
    else if (e.kind === 'insert') bytes.splice(at, 0, ...e.values);
    else bytes.splice(at, e.length);
  }
  const result = new Uint8Array(bytes);
  return cut === null ? result : result.subarray(0, cut % (result.length + 1));
}

function assertReport(bytes: Uint8Array): void {
  const result = checkModule(bytes, FUNCTION_MODULE_RULES);
  assert.equal(typeof result.ok, 'boolean');
  assert.equal(result.ok, result.problems.length === 0);
  for (const p of result.problems) {
    assert.equal(typeof p.code, 'string');
    assert.ok(p.message.length > 0);
    // The decoders' own safety net must never be what caught it: that would be a decoder bug.
    assert.doesNotMatch(p.message, /internal decoder error/);
  }
}

describe('the checker never throws', async () => {
  const seeds: Array<[string, Uint8Array]> = [
    ['valid-function.wat', await watFixture('valid-function')],
    ['allowed-features.wat', await watFixture('allowed-features')],
    ['feature-exceptions-try-catch.wat', await watFixture('feature-exceptions-try-catch')],
    ['C http-client.wasm', await builtFixture('c', 'toolchain', 'http-client.wasm')],
  ];

  for (const [name, seed] of seeds) {
    test(`random mutations and truncations of ${name} give a report, never an exception`, () => {
      fc.assert(
        fc.property(fc.array(edit, { minLength: 1, maxLength: 6 }), fc.option(fc.nat(), { nil: null }), (edits, cut) => {
          assertReport(mutate(seed, edits, cut));
        }),
        { numRuns: 300 },
      );
    });
  }

  test('every truncation of a real module is reported as malformed, never thrown', () => {
    const seed = seeds[0][1];
    for (let length = 0; length < seed.length; length++) {
      const result = checkModule(seed.subarray(0, length), FUNCTION_MODULE_RULES);
      assert.equal(result.ok, false, `cut at ${length}`);
    }
  });

  test('random bytes after a valid header give a report', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (tail) => {
        assertReport(new Uint8Array([...HEADER, ...tail]));
      }),
      { numRuns: 500 },
    );
  });

  test('the memory rewrite throws only its own typed errors on mutated input', () => {
    const seed = seeds[1][1];
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
        try {
          instrumentModule(mutate(seed, edits, null), { maxMemoryBytes: 1 << 20 });
        } catch (error) {
          assert.ok(error instanceof SubakoError, String(error));
        }
      }),
      { numRuns: 200 },
    );
  });
});
