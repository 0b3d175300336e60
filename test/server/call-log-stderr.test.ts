/** The call log keeps the end of stderr for every call, not only for crashes: it is how a function logs. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcess } from './helpers/harness.js';

test('a completed call\'s log entry carries its stderr tail', async () => {
  const s = await startInProcess();
  try {
    const session = await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {});
    const call = await s.call('POST', `/v1/sessions/${session.body.id}/calls`, { tool: 'greet', arguments: { name: 'Ada' } });
    assert.equal(call.status, 200, JSON.stringify(call.body));
    const log = await s.call('GET', `/v1/sessions/${session.body.id}/calls`);
    assert.equal(log.body.items.length, 1);
    assert.equal(log.body.items[0].outcome, 'ok');
    assert.equal(log.body.items[0].stderr_tail, 'greeted Ada\n');
  } finally {
    await s.close();
  }
});
