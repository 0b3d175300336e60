/**
 * Finding 6 of the trust-boundaries issue, call log half: 40 function calls of 900 KiB (the ABI allows it: stdout
 * is 1 MiB) made one page of the call log 35 MiB. The call log now keeps a bounded preview of what the model saw
 * (64 KiB, like the arguments), while the caller still receives the whole result; and a list page ends before
 * 1 MiB of JSON whatever its `limit`, its cursor going on from there, so following the cursors gives every call
 * exactly once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { packBundle } from '../../src/package/index.js';
import { probePackageDir, startInProcess, type InProcess } from '../server/helpers/harness.js';

/** A list page's bound as documented (README, the OpenAPI `limit`): its items under 1 MiB of JSON. */
const PAGE_BUDGET = 1024 * 1024;
const RESULT_BYTES = 900 * 1024;
const READS = 40;
/** A view differs from the record the page was measured on by a few bytes of key names. */
const VIEW_SLACK = 8 * 1024;

let s: InProcess;
let session: { id: string; mcp: { capability_url: string } };
/** 900 KiB of text (none that JSON escapes: the probe's write_file stores its argument as it is in the JSON). */
const written = `${'a'.repeat(1000)} é ✓ `.repeat(Math.floor(RESULT_BYTES / 1010));
/** Every call of the session, in the order made. */
const made: string[] = [];

const textOf = (result: { content: { text?: string }[] }): string => result.content.map((b) => b.text ?? '').join('');
const call = (tool: string, args: Record<string, unknown>) => s.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: args });

before(async () => {
  s = await startInProcess({ limits: { callTimeoutMs: 30_000 } });
  assert.equal((await s.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
  const agent = await s.call('POST', '/v1/agents', { name: 'big-results', tools: [{ package: 'probe' }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
  const write = await call('write_file', { path: '/volume/tmp/big.txt', text: written });
  assert.match(textOf(write.body.result), /^wrote /);
  made.push(write.body.call.id);
  for (let i = 0; i < READS; i++) {
    const read = await call('read_file', { path: '/volume/tmp/big.txt' });
    assert.equal(read.body.call.outcome, 'ok', JSON.stringify(read.body.call.crash));
    made.push(read.body.call.id);
  }
});
after(async () => { await s?.close(); });

describe('the call log keeps a bounded preview of a result', () => {
  it('a 900 KiB function result reaches its REST caller and its MCP client whole', async () => {
    const rest = await call('read_file', { path: '/volume/tmp/big.txt' });
    made.push(rest.body.call.id);
    assert.equal(textOf(rest.body.result), written);
    const client = new Client({ name: 'reader', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    try {
      const result = (await client.callTool({ name: 'read_file', arguments: { path: '/volume/tmp/big.txt' } })) as { content: { text?: string }[] };
      assert.equal(textOf(result), written);
    } finally {
      await client.close();
    }
    made.push((await s.call('GET', `/v1/calls?session=${session.id}&limit=1`)).body.items[0].id);
  });

  it('its record keeps 64 KiB of it: the start of the text marked truncated, and a note of what was left out', async () => {
    const record = (await s.call('GET', `/v1/calls/${made[1]}`)).body;
    assert.ok(JSON.stringify(record).length < 80 * 1024, `the record is ${JSON.stringify(record).length} bytes`);
    assert.ok(Buffer.byteLength(JSON.stringify(record.model)) <= 64 * 1024);
    const [start, note] = record.model;
    assert.deepEqual(Object.keys(start).sort(), ['text', 'truncated', 'type']);
    assert.ok(written.startsWith(start.text) && Buffer.byteLength(JSON.stringify(start)) > 60 * 1024);
    assert.equal(note.truncated, true);
    assert.match(note.text, /^\[\d+ of the \d+ bytes of what the model saw were left out of the call log/);
    // The 900 KiB arguments of the write are a preview too, as they were.
    const write = (await s.call('GET', `/v1/calls/${made[0]}`)).body;
    assert.equal(write.arguments.truncated, true);
    assert.ok(Buffer.byteLength(write.arguments.preview) <= 64 * 1024);
  });
});

describe('a list page is bounded in bytes as well as in count', () => {
  for (const [name, path, order] of [
    ['GET /v1/calls (newest first)', () => `/v1/calls?session=${session.id}&limit=200`, 'newest'],
    ['GET /v1/sessions/{id}/calls (oldest first)', () => `/v1/sessions/${session.id}/calls?limit=200`, 'oldest'],
  ] as const) {
    it(`${name}: every page under 1 MiB, its cursor giving every call once`, async () => {
      const seen: string[] = [];
      let pages = 0;
      for (let after: string | null = null; ;) {
        const response: Response = await fetch(`${s.url}${path()}${after ? `&after=${encodeURIComponent(after)}` : ''}`, { headers: { authorization: `Bearer ${s.apiKey}` } });
        const text = await response.text();
        assert.equal(response.status, 200, text.slice(0, 300));
        assert.ok(text.length <= PAGE_BUDGET + VIEW_SLACK, `page ${pages + 1} is ${text.length} bytes`);
        const page = JSON.parse(text) as { items: { id: string }[]; next_cursor: string | null };
        assert.ok(page.items.length >= 1);
        seen.push(...page.items.map((c) => c.id));
        pages += 1;
        if (page.next_cursor === null) break;
        after = page.next_cursor;
      }
      assert.ok(pages >= 3, `${pages} pages: the 200-call limit was not what ended them`);
      assert.equal(new Set(seen).size, seen.length, 'no call twice');
      assert.deepEqual(seen, order === 'oldest' ? made : [...made].reverse());
    });
  }
});
