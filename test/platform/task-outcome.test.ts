/**
 * What a task keeps of its call's end (platform/tasks/task-outcome.ts): sealed to its session and task, and a
 * result past the bound kept as the call log keeps one — the blocks that fit, the start of the one that did not,
 * and a block saying how much was left out.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { boundedResult, openOutcome, sealOutcome } from '../../src/platform/tasks/task-outcome.js';

const key = randomBytes(32);

describe('a task\'s outcome', () => {
  it('opens only for the session and task it was sealed for', () => {
    const sealed = sealOutcome({ result: { content: [{ type: 'text', text: 'secret answer' }] } }, key, 'ses_1', 'tsk_1');
    assert.ok(!sealed.includes('secret answer'));
    assert.deepEqual(openOutcome(sealed, key, 'ses_1', 'tsk_1'), { result: { content: [{ type: 'text', text: 'secret answer' }] } });
    assert.throws(() => openOutcome(sealed, key, 'ses_2', 'tsk_1'), /does not open/);
    assert.throws(() => openOutcome(sealed, key, 'ses_1', 'tsk_2'), /does not open/);
  });

  it('keeps a result within the bound whole', () => {
    const result = { content: [{ type: 'text', text: 'x'.repeat(1000) }], structuredContent: { n: 1 }, isError: true };
    assert.equal(boundedResult(result, 4096), result);
  });

  it('cuts a result past the bound to the blocks that fit, the start of the next text, and a note, within the bound', () => {
    const result = { content: [{ type: 'text', text: 'a'.repeat(1000) }, { type: 'text', text: '"é'.repeat(3000) }, { type: 'text', text: 'never' }], isError: true };
    const kept = boundedResult(result, 4096);
    assert.ok(Buffer.byteLength(JSON.stringify(kept)) <= 4096, `${Buffer.byteLength(JSON.stringify(kept))} bytes`);
    assert.equal(kept.isError, true);
    assert.deepEqual(kept.content[0], result.content[0]);
    assert.equal(kept.content[1].truncated, true);
    assert.ok(result.content[1].text.startsWith(kept.content[1].text as string) && (kept.content[1].text as string).length > 100);
    assert.match(kept.content[2].text as string, /of the \d+ bytes of this result were left out/);
    assert.equal(kept.content.length, 3);
  });
});
