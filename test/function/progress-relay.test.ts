/**
 * ProgressRelay, the guard between a hostile guest's progress lines and the caller: only this call's token,
 * only rising finite numbers, at most one per interval with the last one always sent, nothing after the call
 * ended, a throwing reporter kept away from the call. The clock is the test's own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProgressRelay, MAX_GUEST_PROGRESS_MESSAGE_CHARS } from '../../src/function/progress-relay.js';

type Sent = [number, number | undefined, string | undefined];

function relay(intervalMs = 50) {
  let now = 0;
  const sent: Sent[] = [];
  const r = new ProgressRelay('tok', (done, total, message) => void sent.push([done, total, message]), { intervalMs, now: () => now });
  return { r, sent, at: (t: number) => { now = t; } };
}

describe('ProgressRelay', () => {
  it('sends the first at once, holds a burst, and flush sends the last one held (the one in between is dropped)', () => {
    const { r, sent, at } = relay();
    r.offer({ progressToken: 'tok', progress: 1, total: 3 });
    at(10); r.offer({ progressToken: 'tok', progress: 2, total: 3 });
    at(20); r.offer({ progressToken: 'tok', progress: 3, total: 3, message: 'last' });
    assert.deepEqual(sent, [[1, 3, undefined]]);
    r.flush();
    assert.deepEqual(sent, [[1, 3, undefined], [3, 3, 'last']]);
    r.offer({ progressToken: 'tok', progress: 4 });
    assert.equal(sent.length, 2, 'nothing after the call answered');
  });

  it('a held update goes out by itself once the interval has passed', async () => {
    const { r, sent, at } = relay(5);
    r.offer({ progressToken: 'tok', progress: 1 });
    r.offer({ progressToken: 'tok', progress: 2 });
    assert.equal(sent.length, 1);
    at(100);
    for (let i = 0; i < 200 && sent.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(sent, [[1, undefined, undefined], [2, undefined, undefined]]);
    r.close();
  });

  it('ignores another token, non-objects, non-numbers, non-finite and non-rising values; cuts long messages', () => {
    const { r, sent, at } = relay(0);
    for (const params of [undefined, null, 7, 'x', [], { progressToken: 'other', progress: 1 }, { progress: 1 }, { progressToken: 'tok', progress: '1' },
      { progressToken: 'tok', progress: Number.POSITIVE_INFINITY }, { progressToken: 'tok' }]) r.offer(params);
    assert.deepEqual(sent, []);
    r.offer({ progressToken: 'tok', progress: 5, total: 'ten', message: 'x'.repeat(MAX_GUEST_PROGRESS_MESSAGE_CHARS + 50) });
    at(1); r.offer({ progressToken: 'tok', progress: 5 });
    at(2); r.offer({ progressToken: 'tok', progress: 4 });
    assert.deepEqual(sent, [[5, undefined, 'x'.repeat(MAX_GUEST_PROGRESS_MESSAGE_CHARS)]]);
  });

  it('close drops what is held; a reporter that throws does not reach the caller of offer or flush', () => {
    const { r, sent } = relay();
    r.offer({ progressToken: 'tok', progress: 1 });
    r.offer({ progressToken: 'tok', progress: 2 });
    r.close();
    r.flush();
    assert.deepEqual(sent, [[1, undefined, undefined]]);
    const throwing = new ProgressRelay('tok', () => { throw new Error('reporter bug'); }, { now: () => 0 });
    assert.doesNotThrow(() => throwing.offer({ progressToken: 'tok', progress: 1 }));
    throwing.offer({ progressToken: 'tok', progress: 2 });
    assert.doesNotThrow(() => throwing.flush());
  });
});
