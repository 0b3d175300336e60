import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyLine } from '../../src/function/messages.js';
import { LineSplitter } from '../../src/function/line-splitter.js';

describe('what a stdout line is', () => {
  test('a response with a result carries its id and result', () => {
    assert.deepEqual(classifyLine('{"jsonrpc":"2.0","id":"a-1","result":{"x":1}}'), { kind: 'result', id: 'a-1', result: { x: 1 } });
    assert.deepEqual(classifyLine('{"jsonrpc":"2.0","id":7,"result":null}\r'), { kind: 'result', id: 7, result: null });
  });

  test('messages without an id are notifications', () => {
    assert.equal(classifyLine('{"jsonrpc":"2.0","method":"notifications/progress","params":{}}').kind, 'notification');
  });

  test('a message with a method and an id is a request from the module', () => {
    assert.deepEqual(classifyLine('{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}'), { kind: 'request', method: 'sampling/createMessage' });
  });

  test('a JSON-RPC error answer is an error', () => {
    const message = classifyLine('{"jsonrpc":"2.0","id":"x","error":{"code":-32000,"message":"no"}}');
    assert.equal(message.kind, 'error');
  });

  for (const [line, why] of [
    ['hello', 'not JSON'],
    ['[1,2]', 'not an object'],
    ['{"id":1,"result":{}}', 'jsonrpc'],
    ['{"jsonrpc":"2.0","id":1}', 'exactly one'],
    ['{"jsonrpc":"2.0","id":1,"result":{},"error":{}}', 'exactly one'],
    ['{"jsonrpc":"2.0","id":{"a":1},"result":{}}', 'string or a number'],
    ['{"jsonrpc":"2.0","method":5}', 'not a string'],
  ] as const) {
    test(`a line that is not a JSON-RPC message is invalid: ${line}`, () => {
      const message = classifyLine(line);
      assert.equal(message.kind, 'invalid');
      assert.match((message as { why: string }).why, new RegExp(why));
    });
  }
});

describe('stdout as a stream', () => {
  test('chunks split anywhere give whole lines, in order, multi-byte characters intact', () => {
    const text = '{"a":"héllo"}\n{"b":2}\n{"c":"日本"}\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut += 1) {
      const lines: string[] = [];
      const splitter = new LineSplitter();
      splitter.push(bytes.subarray(0, cut), (l) => lines.push(l));
      splitter.push(bytes.subarray(cut), (l) => lines.push(l));
      assert.deepEqual(lines, ['{"a":"héllo"}', '{"b":2}', '{"c":"日本"}'], `cut at ${cut}`);
      assert.equal(splitter.rest(), '');
    }
  });

  test('what follows the last newline is kept as the rest', () => {
    const splitter = new LineSplitter();
    const lines: string[] = [];
    splitter.push(Buffer.from('one\ntw'), (l) => lines.push(l));
    splitter.push(Buffer.from('o'), (l) => lines.push(l));
    assert.deepEqual(lines, ['one']);
    assert.equal(splitter.rest(), 'two');
  });
});

describe('any stdout line is classified, never thrown on', () => {
  test('arbitrary text and arbitrary JSON', async () => {
    const fc = (await import('fast-check')).default;
    fc.assert(fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.jsonValue().map((v) => JSON.stringify(v))), (line) => {
      const message = classifyLine(line);
      assert.ok(['notification', 'request', 'result', 'error', 'invalid'].includes(message.kind));
    }), { numRuns: 2000 });
  });
});
