/**
 * What the stderr-tail tests of the server's paths share (test/server/stderr-tail-*.test.ts): sessions of an
 * agent whose one tool is the stderr_tail guest's `crash`, and one row's check through REST and the call log.
 */
import assert from 'node:assert/strict';
import { packBundle } from '../../../src/package/index.js';
import { assertRow, rowArguments, stderrTailPackageDir, type StderrRow } from '../../function/stderr-tail-rows.js';
import type { Api } from './harness.js';

export const textOf = (blocks: { text?: unknown }[]): string => blocks.map((block) => String(block.text ?? '')).join('\n');

/**
 * Two sessions of an agent whose one tool is the stderr_tail package's `crash` (their REST ids and MCP URLs):
 * a session runs one call at a time by default, and a row queued behind another's deadline would end as a
 * timeout in the queue, so the two rows that run at once each have a session.
 */
export async function sessionsOfTail(api: Api, agentName: string): Promise<{ id: string; mcpUrl: string }[]> {
  const pushed = await api.call('POST', '/v1/packages', await packBundle(stderrTailPackageDir()));
  assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
  const agent = await api.call('POST', '/v1/agents', { name: agentName, tools: [{ package: 'tail' }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const sessions = [];
  for (let i = 0; i < 2; i++) {
    const session = await api.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    assert.equal(session.status, 201, JSON.stringify(session.body));
    sessions.push({ id: session.body.id as string, mcpUrl: session.body.mcp.capability_url as string });
  }
  return sessions;
}

/** One row through REST: the answer's record (its crash and stderr_tail), the model's text, and the call log's copy. */
export async function restRow(api: Api, sessionId: string, row: StderrRow): Promise<void> {
  const answer = await api.call('POST', `/v1/sessions/${sessionId}/calls`, { tool: 'crash', arguments: rowArguments(row) });
  assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300));
  const call = answer.body.call;
  assertRow(row, { reason: call.crash?.reason, stderr: call.stderr_tail, modelText: textOf(answer.body.result.content) });
  assertRow(row, { reason: call.crash?.reason, modelText: textOf(call.model) });
  const logged = await api.call('GET', `/v1/calls/${call.id}`);
  assert.equal(logged.status, 200);
  assertRow(row, { reason: logged.body.crash?.reason, stderr: logged.body.stderr_tail, modelText: textOf(logged.body.model) });
}
