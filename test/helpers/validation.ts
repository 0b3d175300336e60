/** The problems a configuration check refuses with: runs `run`, which must throw a ValidationError, and returns its messages. */
import assert from 'node:assert/strict';
import { ValidationError } from '../../src/errors.js';

export function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ValidationError, String(err));
    return err.problems.map((p) => p.message);
  }
  assert.fail('expected a ValidationError');
}
