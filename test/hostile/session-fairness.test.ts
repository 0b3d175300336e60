/**
 * Finding 5: one session could stall all others. The run queue was unbounded and a queued run had no
 * deadline: six 29-second calls from one session made another session's instant call take 86 s.
 *
 * Through a real `subako serve` (two workers, a 2.5 s call deadline, a session may run one call and queue
 * three): one session floods slow calls (the probe's `timeout` tool spins until its deadline) past its
 * limits, in one JSON-RPC batch over its MCP endpoint and over REST. Another session of the same agent still
 * gets its instant call answered before any of the flood's calls end; the flood past the queue is refused at
 * once (REST 429 with Retry-After, MCP a JSON-RPC error with a retry hint) and never logged; the queued calls,
 * whose deadline passes while the one running call holds the session's turn, end as timeouts without running.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { probeAgent, serve, type ProbeSession, type Served } from './helpers/serve.js';

const DEADLINE_MS = 2_500;
const SESSION_QUEUE = 3;

describe('one session cannot stall the others', () => {
  let server: Served;
  let flooder: ProbeSession;
  let bystander: ProbeSession;

  before(async () => {
    server = await serve([
      '--no-examples', '--workers', '2', '--call-timeout-ms', String(DEADLINE_MS),
      '--session-concurrency', '1', '--session-queue', String(SESSION_QUEUE),
    ]);
    const made = await probeAgent(server, 2);
    [flooder, bystander] = made.sessions;
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
  });

  it('floods one session past its limits; the other session\'s instant call answers first; the flood is refused or times out', async () => {
    const finished: string[] = [];
    // Six slow calls in one POST (a 2025-03-26 batch, dispatched together): one runs, three wait, two are refused.
    const batch = Array.from({ length: 6 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'timeout', arguments: {} } }));
    const flood = fetch(flooder.mcp.capability_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' },
      body: JSON.stringify(batch),
    }).then(async (response) => {
      const text = await response.text();
      finished.push('flood');
      return { status: response.status, messages: answers(text) };
    });
    // Wait until the flood holds the session: its running call and its queue are all taken.
    await until(async () => (await server.call('GET', `/v1/sessions/${flooder.id}/calls`)).body.items.length === 1 + SESSION_QUEUE);

    const refused = await server.call('POST', `/v1/sessions/${flooder.id}/calls`, { tool: 'echo', arguments: {} }, { 'idempotency-key': 'retry-me' });
    finished.push('refused');
    const instant = await server.call('POST', `/v1/sessions/${bystander.id}/calls`, { tool: 'echo', arguments: { hello: 'world' } });
    finished.push('bystander');

    const { status, messages } = await flood;
    assert.deepEqual(finished, ['refused', 'bystander', 'flood'], 'the other session\'s instant call ends before the flood\'s calls');
    assert.equal(instant.status, 200);
    assert.equal(instant.body.call.outcome, 'ok');

    // Past the queue, REST answers 429 at once, naming the limit, with a retry hint; nothing was logged.
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(refused.body.error.code, 'too_many_calls');
    assert.equal(refused.body.error.limit, 'session');
    assert.match(refused.body.error.message, /already runs 1 calls \(at most 1 at once\) and has 3 waiting \(at most 3\)/);

    // The batch: two JSON-RPC errors with the retry hint, four tool results (all failures: timeouts).
    assert.equal(status, 200);
    const errors = messages.filter((m) => m.error);
    const results = messages.filter((m) => m.result);
    assert.equal(errors.length, 2);
    for (const e of errors) {
      assert.equal(e.error.code, -32000);
      assert.equal(e.error.data.retryAfterMs, 1000);
      assert.equal(e.error.data.limit, 'session');
    }
    assert.equal(results.length, 4);
    assert.ok(results.every((m) => m.result.isError === true));

    // The log holds the four admitted calls only, each ended by its deadline.
    const log = (await server.call('GET', `/v1/sessions/${flooder.id}/calls`)).body.items as { outcome: string; crash: { reason: string; message: string } }[];
    assert.equal(log.length, 4, 'refused calls are not logged');
    assert.ok(log.every((c) => c.outcome === 'crash' && c.crash.reason === 'timeout'));
    const ran = log.filter((c) => /time limit/.test(c.crash.message));
    const waited = log.filter((c) => /waited \d+ ms for a turn .* deadline of 2500 ms, which counts the wait, passed before it could start/.test(c.crash.message));
    // The first ran into its deadline; the three queued ones mostly never start. Each deadline counts from its own
    // admission, a few milliseconds apart (more on a loaded machine): a queued call whose turn comes as the first
    // one ends may still have those milliseconds left, start, and end on the module's time limit instead.
    const crashes = JSON.stringify(log.map((c) => c.crash.message));
    assert.ok(ran.length >= 1, crashes);
    assert.equal(ran.length + waited.length, 4, crashes);
  });

  it('once the flood is over, the refused call retried with its Idempotency-Key runs (a 429 is not replayed)', async () => {
    const again = await server.call('POST', `/v1/sessions/${flooder.id}/calls`, { tool: 'echo', arguments: {} }, { 'idempotency-key': 'retry-me' });
    assert.equal(again.status, 200);
    assert.equal(again.body.call.outcome, 'ok');
    assert.equal(again.headers.get('idempotent-replayed'), null);
  });
});

/** The JSON-RPC messages of an answer: one JSON value, or the `data:` lines of an SSE stream. */
function answers(text: string): any[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    const value = JSON.parse(trimmed);
    return Array.isArray(value) ? value : [value];
  }
  return trimmed.split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)));
}

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
