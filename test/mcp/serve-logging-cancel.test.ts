/**
 * Logging and cancellation through `mcp.serve` (issue 27, point 4), with the official v2 client:
 * - a request whose `_meta` carries `io.modelcontextprotocol/logLevel` gives a defineTool handler `ctx.log`, and the
 *   messages it sends at that level or above reach the client as `notifications/message`, in order; those below
 *   it do not; a 2026-07-28 request without the key gives the handler no `ctx.log` and the client no message (the
 *   revision: none for a request that did not ask); a 2025-era request without it gets `info` and above;
 * - a 2026-07-28 client that aborts its call closes the request's stream, and the handler's signal aborts;
 * - a 2025-era client that aborts sends `notifications/cancelled` in a POST of its own, which reaches the call it
 *   names although the endpoint is served statelessly, and the handler's signal aborts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { mcp, defineTool } from '../../src/mcp/index.js';
import { LOG_LEVELS, type Toolbox } from '../../src/tool.js';
import { until } from '../helpers/eventually.js';

const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';
/** How long a cancellation may take to reach the tool (issue 27: within 2 s); a ceiling, not a timing. */
const CANCEL_REACHES_WITHIN_MS = 2_000;

interface Logged { level: string; data: unknown; logger?: string }

let sawLog: boolean[] = [];
let started = 0;
let aborted = 0;
const toolbox: Toolbox = {
  chatty: defineTool({
    name: 'chatty', inputSchema: { type: 'object', properties: {} },
    handler: (_args, ctx) => {
      sawLog.push(ctx.log !== undefined);
      for (const level of LOG_LEVELS) ctx.log?.(level, { said: level }, 'chatty');
      return 'done';
    },
  }),
  hang: defineTool({
    name: 'hang', inputSchema: { type: 'object', properties: {} },
    handler: (_args, ctx) => new Promise<string>((resolve) => {
      started += 1;
      ctx.signal?.addEventListener('abort', () => {
        aborted += 1;
        resolve('aborted');
      }, { once: true });
    }),
  }),
};

function collectLogs(client: Client): Logged[] {
  const logged: Logged[] = [];
  client.setNotificationHandler('notifications/message', (n) => {
    logged.push({ level: n.params.level, data: n.params.data, ...(n.params.logger !== undefined ? { logger: n.params.logger } : {}) });
  });
  return logged;
}

async function connect(url: string, era: 'modern' | 'legacy'): Promise<Client> {
  const client = new Client({ name: 'v2', version: '1' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  assert.equal(client.getProtocolEra(), era);
  return client;
}

describe('logging through mcp.serve', () => {
  it('messages at the request\'s logLevel and above reach a v2 client in order; below it, none; without it, no ctx.log', async () => {
    sawLog = [];
    await mcp.serve(toolbox, async (url) => {
      const client = await connect(url, 'modern');
      try {
        const logged = collectLogs(client);
        const result = await client.callTool({ name: 'chatty', arguments: {}, _meta: { [LOG_LEVEL_KEY]: 'warning' } });
        assert.deepEqual(result.content, [{ type: 'text', text: 'done' }]);
        await until('the five messages at warning and above arrived', () => logged.length >= 5);
        assert.deepEqual(logged, ['warning', 'error', 'critical', 'alert', 'emergency'].map((level) => ({ level, data: { said: level }, logger: 'chatty' })));
        // No level asked: the handler has no reporter, and whatever it might send goes nowhere.
        const plain = await client.callTool({ name: 'chatty', arguments: {} });
        assert.deepEqual(plain.content, [{ type: 'text', text: 'done' }]);
        // A later call with a level shows the plain call's messages (had there been any) would have come first.
        await client.callTool({ name: 'chatty', arguments: {}, _meta: { [LOG_LEVEL_KEY]: 'emergency' } });
        await until('the emergency message of the third call arrived', () => logged.length >= 6);
        assert.deepEqual(logged.slice(5), [{ level: 'emergency', data: { said: 'emergency' }, logger: 'chatty' }]);
        assert.deepEqual(sawLog, [true, false, true]);
      } finally {
        await client.close();
      }
    });
  });

  it('a 2025-era client that named no level gets info and above; one that named a level gets that level and above', async () => {
    sawLog = [];
    await mcp.serve(toolbox, async (url) => {
      const client = await connect(url, 'legacy');
      try {
        const logged = collectLogs(client);
        await client.callTool({ name: 'chatty', arguments: {} });
        await until('the seven messages at info and above arrived', () => logged.length >= 7);
        assert.deepEqual(logged.map((l) => l.level), LOG_LEVELS.slice(1));
        logged.length = 0;
        await client.callTool({ name: 'chatty', arguments: {}, _meta: { [LOG_LEVEL_KEY]: 'alert' } });
        await until('the two messages at alert and above arrived', () => logged.length >= 2);
        assert.deepEqual(logged.map((l) => l.level), ['alert', 'emergency']);
      } finally {
        await client.close();
      }
    });
  });
});

describe('cancellation through mcp.serve', () => {
  for (const era of ['modern', 'legacy'] as const) {
    const how = era === 'modern' ? 'a 2026-07-28 client closing its request\'s stream' : 'a 2025-era client sending notifications/cancelled';
    it(`${how} aborts the handler's signal`, async () => {
      await mcp.serve(toolbox, async (url) => {
        const client = await connect(url, era);
        try {
          const before = { started, aborted };
          const controller = new AbortController();
          const call = client.callTool({ name: 'hang', arguments: {} }, { signal: controller.signal });
          await until('the call started', () => started > before.started);
          controller.abort('the user pressed stop');
          await assert.rejects(call);
          await until('the handler saw the cancellation', () => aborted > before.aborted, CANCEL_REACHES_WITHIN_MS);
        } finally {
          await client.close();
        }
      });
    });
  }
});
