/**
 * Finding 6 of the trust-boundaries issue, remote half: one 96 MiB answer of a remote MCP server added 1.2 GiB to
 * the server and was stored whole in the call log. A remote answer is now read up to a cap (8 MiB a message,
 * the server setting remoteAnswerMiB): past it the call is a crash naming the cap and how to raise it, the
 * upstream's response is cut off before it is all written (nothing past the cap is buffered), the record stays
 * small, and the connection serves the next call. Answers under the cap reach the caller whole. A real upstream
 * (the v2 server SDK) answers 40 MiB both ways Streamable HTTP allows: one JSON response, and an SSE stream.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnServe, startInProcess, tempDir, type Api, type InProcess } from '../server/helpers/harness.js';
import { bigText, startLargeAnswerServer, type LargeAnswerServer } from '../mcp/helpers/large-answer-server.js';

const MiB = 1024 * 1024;
const HUGE = 40 * MiB;
const BIG = 2 * MiB;

let s: InProcess;
let upstream: LargeAnswerServer;

before(async () => {
  upstream = await startLargeAnswerServer({ hugeBytes: HUGE, bigBytes: BIG });
  s = await startInProcess({ limits: { callTimeoutMs: 120_000 } });
});
after(async () => {
  await s?.close();
  await upstream?.stop();
});

async function sessionOf(server: Api, url: string): Promise<string> {
  const agent = await server.call('POST', '/v1/agents', { name: `large-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`, mcp_servers: [{ name: 'remote', url }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  return (await server.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id;
}

async function callRaw(server: InProcess, session: string, tool: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.url}/v1/sessions/${session}/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool, arguments: {} }),
  });
  return { status: response.status, text: await response.text() };
}

const textOf = (result: { content: { text?: string }[] }): string => result.content.map((b) => b.text ?? '').join('');

describe('a remote answer past the cap', () => {
  for (const mode of ['json', 'sse'] as const) {
    it(`40 MiB as ${mode === 'json' ? 'one JSON response' : 'an SSE stream'}: a crash naming the cap, the upstream cut off, a small record, the connection kept`, { timeout: 240_000 }, async () => {
      const session = await sessionOf(s, upstream.url(mode));
      // Warm the connection (the listing), then count: the refused answer must not cost it.
      assert.equal(JSON.parse((await callRaw(s, session, 'small')).text).call.outcome, 'ok');
      const handshakes = upstream.handshakes();
      const answers = upstream.hugeAnswers.length;

      const { status, text } = await callRaw(s, session, 'huge');
      assert.equal(status, 200, text.slice(0, 500));
      assert.ok(text.length < 64 * 1024, `the REST answer is ${text.length} bytes`);
      const { call, result } = JSON.parse(text);
      assert.equal(call.outcome, 'crash');
      assert.equal(call.crash.reason, 'transport');
      const reason = /answered the request to call tool "huge" with more than 8 MiB \(8388608 bytes\) in one message/;
      assert.match(call.crash.message, reason);
      assert.match(call.crash.message, /raise the server setting remoteAnswerMiB \(--remote-answer-mib, \$SUBAKO_REMOTE_ANSWER_MIB or "remoteAnswerMiB" in subako\.config\.json\)/);
      assert.equal(result.isError, true);
      assert.match(textOf(result), reason);

      // The upstream's response was cut off: it never wrote all of it.
      const answer = upstream.hugeAnswers[answers]!;
      await waitFor(() => answer.cancelled, 'the upstream saw its response aborted');
      assert.equal(answer.done, false);
      assert.ok(answer.written < answer.total / 2, `the upstream wrote ${answer.written} of ${answer.total} bytes`);

      const stored = await s.call('GET', `/v1/calls/${call.id}`);
      assert.ok(JSON.stringify(stored.body).length < 16 * 1024, `the record is ${JSON.stringify(stored.body).length} bytes`);

      assert.equal(JSON.parse((await callRaw(s, session, 'small')).text).call.outcome, 'ok');
      assert.equal(upstream.handshakes(), handshakes, 'the cut-off answer cost the connection: the next call opened a new one');
    });
  }
});

describe('a remote answer under the cap', () => {
  for (const mode of ['json', 'sse'] as const) {
    it(`2 MiB as ${mode}: the caller gets it whole; the call log keeps a bounded preview`, { timeout: 120_000 }, async () => {
      const session = await sessionOf(s, upstream.url(mode));
      const { status, text } = await callRaw(s, session, 'big');
      assert.equal(status, 200, text.slice(0, 500));
      const { call, result } = JSON.parse(text);
      assert.equal(call.outcome, 'ok');
      assert.equal(textOf(result), bigText(BIG));

      const stored = (await s.call('GET', `/v1/calls/${call.id}`)).body;
      assert.ok(JSON.stringify(stored.model).length <= 64 * 1024, `the stored model is ${JSON.stringify(stored.model).length} bytes`);
      const [start, note] = stored.model;
      assert.equal(start.truncated, true);
      assert.ok(bigText(BIG).startsWith(start.text) && start.text.length > 32 * 1024);
      assert.equal(note.truncated, true);
      assert.match(note.text, /bytes of what the model saw were left out of the call log, which keeps 64 KiB of a result; the caller received all of it/);
    });
  }
});

describe('the cap is the server\'s setting', () => {
  it('subako serve --remote-answer-mib 1 refuses the 2 MiB answer the default lets through, naming 1 MiB', { timeout: 120_000 }, async () => {
    const served = await spawnServe(tempDir(), undefined, ['--remote-answer-mib', '1']);
    try {
      const session = await sessionOf(served, upstream.url('sse'));
      const { call } = (await served.call('POST', `/v1/sessions/${session}/calls`, { tool: 'big', arguments: {} })).body;
      assert.equal(call.outcome, 'crash');
      assert.match(call.crash.message, /with more than 1 MiB \(1048576 bytes\) in one message/);
      assert.match(call.crash.message, /--remote-answer-mib/);
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  });
});

async function waitFor(condition: () => boolean, what: string, ceilingMs = 30_000): Promise<void> {
  const until = Date.now() + ceilingMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
