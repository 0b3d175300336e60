/**
 * The serving side of logging (log-sender.ts), as a pure function of what a tool sends: the request's level gates
 * it, whatever is not one of MCP's levels is dropped, data and logger names are cut, a call's count is bounded,
 * nothing goes out after the call ended, and a failing send never reaches the tool.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  LOG_LEVEL_META_KEY, MAX_LOG_DATA_CHARS, MAX_LOG_MESSAGES_PER_CALL, MAX_LOGGER_CHARS, logLevelOf, logSender, type LogNotification,
} from '../../src/mcp/log-sender.js';
import { LOG_LEVELS, type LogLevel } from '../../src/tool.js';

function capture(threshold: LogLevel) {
  const sent: LogNotification['params'][] = [];
  const errors: Error[] = [];
  const sender = logSender(threshold, async (n) => void sent.push(n.params), (e) => void errors.push(e));
  return { sent, errors, sender };
}

describe('the level a request asks for', () => {
  it('is read from the first place that carries a valid one; anything else is no level', () => {
    assert.equal(logLevelOf({ [LOG_LEVEL_META_KEY]: 'notice' }), 'notice');
    assert.equal(logLevelOf(undefined, { [LOG_LEVEL_META_KEY]: 'error' }), 'error');
    assert.equal(logLevelOf({ [LOG_LEVEL_META_KEY]: 'verbose' }), undefined);
    assert.equal(logLevelOf({ [LOG_LEVEL_META_KEY]: 3 }), undefined);
    assert.equal(logLevelOf({ logLevel: 'info' }), undefined);
    assert.equal(logLevelOf(null, 'info'), undefined);
  });
});

describe('a log sender', () => {
  it('sends the levels at its threshold and above, in order, and reports its threshold', () => {
    const { sent, sender } = capture('error');
    assert.equal(sender.report.level, 'error');
    for (const level of LOG_LEVELS) sender.report(level, level);
    assert.deepEqual(sent.map((p) => p.level), ['error', 'critical', 'alert', 'emergency']);
  });

  it('drops a level that is not one of MCP\'s (what a hostile upstream may send)', () => {
    const { sent, sender } = capture('debug');
    sender.report('verbose' as LogLevel, 'x');
    sender.report(undefined as unknown as LogLevel, 'x');
    assert.equal(sent.length, 0);
  });

  it('cuts data past the limit to its JSON text, and a long logger name', () => {
    const { sent, sender } = capture('debug');
    sender.report('info', { text: 'a'.repeat(MAX_LOG_DATA_CHARS) }, 'l'.repeat(MAX_LOGGER_CHARS + 10));
    assert.equal(typeof sent[0].data, 'string');
    assert.equal((sent[0].data as string).length, MAX_LOG_DATA_CHARS + 1);
    assert.ok((sent[0].data as string).startsWith('{"text":"aaa'));
    assert.equal(sent[0].logger!.length, MAX_LOGGER_CHARS);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    sender.report('info', cyclic);
    assert.equal(typeof sent[1].data, 'string');
  });

  it('sends at most its per-call count, then nothing; nothing after the call ended', () => {
    const { sent, sender } = capture('debug');
    for (let i = 0; i < MAX_LOG_MESSAGES_PER_CALL + 5; i++) sender.report('info', i);
    assert.equal(sent.length, MAX_LOG_MESSAGES_PER_CALL);
    const second = capture('debug');
    second.sender.report('info', 'before');
    second.sender.end();
    second.sender.report('emergency', 'after');
    assert.deepEqual(second.sent.map((p) => p.data), ['before']);
  });

  it('a send that throws or rejects is reported, never thrown into the tool', async () => {
    const errors: Error[] = [];
    const throwing = logSender('debug', () => { throw new Error('gone'); }, (e) => void errors.push(e));
    assert.doesNotThrow(() => throwing.report('info', 'x'));
    const rejecting = logSender('debug', () => Promise.reject(new Error('closed')), (e) => void errors.push(e));
    rejecting.report('info', 'x');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(errors.map((e) => e.message), ['gone', 'closed']);
  });
});
