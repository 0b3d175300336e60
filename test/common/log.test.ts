/** The logger writes one JSON object per line, errors with their type and message, and is quiet in tests. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, defaultLogLevel } from '../../src/common/index.js';

function collect(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((line) => line.length > 0));
      done();
    },
  });
  return { lines, destination };
}

test('a line is one JSON object carrying the level, the message, the bindings and the error', () => {
  const { lines, destination } = collect();
  const log = createLogger({ level: 'info', destination }).child({ component: 'sweeper' });
  log.error({ err: new RangeError('the disk is full'), chore: 'trash' }, 'the sweeper failed');
  log.debug({}, 'below the level: not written');
  assert.equal(lines.length, 1);
  const line = JSON.parse(lines[0]);
  assert.equal(line.level, 50);
  assert.equal(line.msg, 'the sweeper failed');
  assert.equal(line.component, 'sweeper');
  assert.equal(line.chore, 'trash');
  assert.equal(line.err.type, 'RangeError');
  assert.equal(line.err.message, 'the disk is full');
});

test('quiet under the test runner unless SUBAKO_LOG_LEVEL asks; info otherwise', () => {
  assert.equal(defaultLogLevel({ NODE_TEST_CONTEXT: 'child-v8' }), 'silent');
  assert.equal(defaultLogLevel({ NODE_TEST_CONTEXT: 'child-v8', SUBAKO_LOG_LEVEL: 'debug' }), 'debug');
  assert.equal(defaultLogLevel({}), 'info');
  assert.equal(defaultLogLevel({ SUBAKO_LOG_LEVEL: 'loud' }), 'info', 'an unknown level is ignored');
});
