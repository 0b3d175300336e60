/**
 * The cap on what a remote MCP server answers (answer-cap.ts, bounded-transport.ts): one message — a JSON body,
 * or one event of an SSE stream — is read up to the pool's `maxAnswerBytes`; past it the request fails naming
 * the cap and what sets it, the HTTP response is cut off, and the connection stays. Answers under the cap, and
 * SSE streams of many events each under it, arrive whole.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MessageMeter, describeBytes } from '../../src/mcp/answer-cap.js';
import { McpClientPool, McpServerError, mcp } from '../../src/mcp/index.js';
import { bigText, startLargeAnswerServer, type LargeAnswerServer } from './helpers/large-answer-server.js';

const MiB = 1024 * 1024;
const bytes = (text: string) => new TextEncoder().encode(text);

describe('a message is the whole body, or one event of an event stream', () => {
  it('a body that is not an event stream is counted whole, across chunks', () => {
    const meter = new MessageMeter(false);
    assert.equal(meter.add(bytes('{"a":')), 5);
    assert.equal(meter.add(bytes('\n\n1}')), 9);
  });

  it('an event ends at a blank line, whether lines end with LF, CRLF or CR, and the count starts again after it', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const meter = new MessageMeter(true);
      const event = `event: message${eol}data: ${'x'.repeat(100)}${eol}${eol}`;
      assert.equal(meter.add(bytes(event)), event.length, JSON.stringify(eol));
      // The next event counts from zero: five events are never counted as one.
      assert.equal(meter.add(bytes(event.repeat(5))), event.length, JSON.stringify(eol));
    }
  });

  it('a CRLF split across chunks is one line end, not a blank line', () => {
    const meter = new MessageMeter(true);
    meter.add(bytes('data: a\r'));
    assert.equal(meter.add(bytes('\ndata: b\r\n\r\n')), 'data: a\r\ndata: b\r\n\r\n'.length);
  });

  it('an event of many data lines, or one line without an end, is counted whole', () => {
    const meter = new MessageMeter(true);
    assert.equal(meter.add(bytes('data: 1\ndata: 2\n')), 16);
    assert.equal(meter.add(bytes('x'.repeat(1000))), 1016);
  });

  it('says a cap in MiB with its bytes', () => {
    assert.equal(describeBytes(8 * MiB), '8 MiB (8388608 bytes)');
    assert.equal(describeBytes(1000), '1000 bytes');
  });
});

describe('a pool reads an answer up to its cap', () => {
  let server: LargeAnswerServer;
  before(async () => {
    server = await startLargeAnswerServer({ hugeBytes: 16 * MiB, bigBytes: 512 * 1024, chattyEvents: 200 });
  });
  after(async () => server.stop());

  for (const mode of ['json', 'sse'] as const) {
    it(`an answer past the cap (${mode}) fails naming the cap and what sets it, is cut off, and the connection stays`, { timeout: 60_000 }, async () => {
      const pool = new McpClientPool({ maxAnswerBytes: MiB });
      try {
        const toolbox = await mcp.tools({ url: server.url(mode), pool });
        const before = server.hugeAnswers.length;
        await assert.rejects(toolbox.huge!.call({}), (err: unknown) => {
          assert.ok(err instanceof McpServerError, String(err));
          assert.equal(err.reason, 'transport');
          assert.match(err.message, /answered the request to call tool "huge" with more than 1 MiB \(1048576 bytes\) in one message/);
          assert.match(err.message, /raise the McpClientPool option maxAnswerBytes/);
          return true;
        });
        const answer = server.hugeAnswers[before]!;
        await waitFor(() => answer.cancelled, 'the server saw its response cut off');
        assert.equal(answer.done, false);
        assert.ok(answer.written < answer.total, `wrote ${answer.written} of ${answer.total} bytes`);
        // The same connection answers the next call.
        assert.deepEqual((await toolbox.small!.call({})).content, [{ type: 'text', text: 'ok' }]);
        assert.equal(pool.connectsMade, 1);
      } finally {
        await pool.closeAll();
      }
    });

    it(`an answer under the cap (${mode}) arrives whole`, { timeout: 120_000 }, async () => {
      const pool = new McpClientPool({ maxAnswerBytes: MiB });
      try {
        const toolbox = await mcp.tools({ url: server.url(mode), pool });
        const result = await toolbox.big!.call({});
        assert.equal((result.content[0] as unknown as { text: string }).text, bigText(512 * 1024));
      } finally {
        await pool.closeAll();
      }
    });
  }

  it('an SSE stream of many events, each under the cap, is read whole however long it is', { timeout: 60_000 }, async () => {
    const pool = new McpClientPool({ maxAnswerBytes: MiB });
    try {
      const toolbox = await mcp.tools({ url: server.url('sse'), pool });
      let updates = 0;
      const result = await toolbox.chatty!.call({}, { progress: () => { updates += 1; } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'done' }]);
      assert.equal(updates, 200, '200 events of 60 KiB: 12 MiB on one stream');
    } finally {
      await pool.closeAll();
    }
  });
});

async function waitFor(condition: () => boolean, what: string, ceilingMs = 20_000): Promise<void> {
  const until = Date.now() + ceilingMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
