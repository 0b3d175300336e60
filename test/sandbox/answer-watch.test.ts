/** The worker ends stdin itself once the conversation's answer line is written: only that exact line counts. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerWatch } from '../../src/sandbox/answer-watch.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('AnswerWatch', () => {
  test('a complete line holding a JSON object with the id is the answer, across chunks', () => {
    const watch = new AnswerWatch('call-1');
    assert.equal(watch.push(bytes('{"jsonrpc":"2.0","id":"ca')), false);
    assert.equal(watch.push(bytes('ll-1","result":{}}')), false, 'no newline yet: the line is not complete');
    assert.equal(watch.push(bytes('\n')), true);
    assert.equal(watch.push(bytes('anything')), true, 'and stays seen');
  });

  test('notifications, other ids, numbers for strings and lines that are not JSON are not the answer', () => {
    const watch = new AnswerWatch('7');
    const lines = [
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{}}',
      '{"jsonrpc":"2.0","id":7,"result":{}}',
      '{"jsonrpc":"2.0","id":"8","result":{}}',
      'not json "id":"7"',
      '["id","7"]',
    ];
    assert.equal(watch.push(bytes(lines.join('\n') + '\n')), false);
    assert.equal(watch.push(bytes('{"id":"7"}\n')), true);
  });

  test('several lines in one chunk: the answer after a notification is found', () => {
    const watch = new AnswerWatch(3);
    assert.equal(watch.push(bytes('{"method":"notifications/message"}\n{"id":3,"result":{}}\n')), true);
  });
});
