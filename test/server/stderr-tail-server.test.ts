/**
 * ABI 1's stderr-tail rule through a session of the server (guests in its sandbox process): each row of the
 * table (test/function/stderr-tail-rows.ts) over REST — the answer, its record, the call log — and over the
 * session's MCP endpoint — what the model reads.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startInProcess, type InProcess } from './helpers/harness.js';
import { assertRow, rowArguments, rowName, STDERR_ROWS, TABLE_LIMITS } from '../function/stderr-tail-rows.js';
import { restRow, sessionsOfTail, textOf } from './helpers/stderr-tail.js';

describe('the stderr tail through a session of the server: REST and MCP', { concurrency: 2 }, () => {
  let server: InProcess;
  /** REST calls go to the first session, MCP calls to the second. */
  let sessions: { id: string; mcpUrl: string }[];
  let client: Client;
  before(async () => {
    server = await startInProcess({ limits: TABLE_LIMITS });
    sessions = await sessionsOfTail(server, 'tail-local');
    client = new Client({ name: 'stderr-tail', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(sessions[1].mcpUrl)));
  });
  after(async () => {
    await client?.close();
    await server?.close();
    if (server) rmSync(server.dataDir, { recursive: true, force: true });
  });
  for (const row of STDERR_ROWS) {
    test(`REST ${rowName(row)}`, () => restRow(server, sessions[0].id, row));
    test(`MCP ${rowName(row)}`, async () => {
      const result = (await client.callTool({ name: 'crash', arguments: rowArguments(row) })) as { content: { text?: string }[]; isError?: boolean };
      assert.equal(result.isError, true);
      // MCP shows the model's view only; the record behind it is checked through REST.
      const text = textOf(result.content);
      assertRow(row, { reason: /The function crashed \((\w+)\)/.exec(text)?.[1], modelText: text });
    });
  }
});
