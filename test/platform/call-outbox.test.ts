/**
 * What the outbox keeps of a call's end once it is past its byte budget (call-outbox.ts `compactEnd`): the
 * outcome survives, the bulk does not, and a key's kept result gives way to the record (a retry is answered
 * from it). Pure: the outbox's writing and retrying run against real PostgreSQL in call-end-outage.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compactEnd, type PendingEnd } from '../../src/platform/calls/call-outbox.js';
import type { CallRecord } from '../../src/platform/store/index.js';

const record: CallRecord = {
  id: 'call_1', sessionId: 'ses_1', via: 'mcp', tool: 'ledger__charge', arguments: { amount: 1 }, outcome: 'crash',
  crash: { reason: 'trap', message: 'unreachable' }, model: [{ type: 'text', text: 'x'.repeat(100_000) }], stderrTail: 'boom',
  egress: [{ method: 'GET', url: 'https://api.example.com/', status: 200, bytesIn: 1, bytesOut: 0, durationMs: 1 }], durationMs: 12,
  startedAt: '2026-01-01T00:00:00.000Z', instanceId: 'ins_1',
};

describe('an end kept without its bulk', () => {
  it('keeps the outcome, crash, duration and the rest of the record; drops what the model saw, stderr and egress, saying so', () => {
    const kept = compactEnd({ record, agentId: 'agt_1' });
    assert.deepEqual({ ...kept.record, model: [] }, { ...record, model: [], stderrTail: '', egress: [] });
    assert.equal(kept.record.model.length, 1);
    assert.match(JSON.stringify(kept.record.model), /left out: the database was out of reach when the call ended/);
    assert.equal(kept.agentId, 'agt_1');
    assert.ok(JSON.stringify(kept).length < 2_000);
  });

  it('a key\'s result is not kept (the key then answers from the record); a key to free is still freed', () => {
    const key = { sessionId: 'ses_1', key: 'k', callId: 'call_1' };
    const settled: PendingEnd = { record, agentId: 'agt_1', key: { ...key, write: { result: 'subako-sealed:v1:...'.repeat(1000) } } };
    assert.deepEqual(compactEnd(settled).key, { ...key, write: 'none' });
    const freed: PendingEnd = { record, agentId: 'agt_1', key: { ...key, write: 'release' } };
    assert.deepEqual(compactEnd(freed).key, { ...key, write: 'release' });
  });
});
