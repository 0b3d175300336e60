/**
 * Issue 27, point 4, through a session of the platform, on both of its URL forms (the capability URL, and the
 * session URL with its bearer token), with the official v2 SDK as the client and as the upstream (a v2 McpServer
 * behind `createMcpHandler`, on loopback):
 * - progress: a function package guest's, and the upstream's, reach the client on the request's stream;
 * - cancellation reaching the upstream: a 2026-07-28 client closing its request's stream, and a 2025-era client
 *   sending `notifications/cancelled`, each end the upstream's request (its handler's signal aborts) within 2 s;
 *   an upstream that speaks only the 2025 era (the v1 SDK, sessionful) gets `notifications/cancelled` from subako;
 * - a cancelled guest call ends: the call is logged `cancelled`, the platform's one sandbox worker is idle again,
 *   and the next guest call runs on it;
 * - logging: the request's `io.modelcontextprotocol/logLevel` goes to the upstream, and what comes back reaches the
 *   client at that level and above only; an upstream that sends messages regardless (a hostile one) gets none to
 *   a client that did not ask, and none below the level it asked for.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import * as z from 'zod';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { McpServer as LegacyMcpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport as LegacyServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { packBundle } from '../../src/package/index.js';
import { LOG_LEVELS } from '../../src/tool.js';
import { serveMcpServer } from '../mcp/helpers/servers.js';
import { progressGuest } from '../helpers/wat-progress-guest.js';
import { eventually, until } from '../helpers/eventually.js';
import { parsePrometheusText, valueOf } from './helpers/prometheus.js';
import { probePackageDir, startInProcess, tempDir, type InProcess } from './helpers/harness.js';

const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';
/** How long a cancellation may take to reach the upstream (issue 27: within 2 s); a ceiling, not a timing. */
const CANCEL_REACHES_WITHIN_MS = 2_000;
const DEADLINE_MS = 60_000;

interface Update { progress: number; total?: number; message?: string }
interface Logged { level: string; data: unknown }

let s: InProcess;
let upstream: { url: string; stop(): Promise<void> };
let legacy: HttpServer;
let legacyUrl: string;
/**
 * What the upstreams saw: `hang` calls started and ended by their signal; the log level each `chatty` call carried;
 * the 2025-era upstream's `hang_legacy` calls started and cancelled.
 */
const seen = { hangStarted: 0, hangAborted: 0, levels: [] as (string | undefined)[], legacyStarted: 0, legacyAborted: 0 };

/** A 2025-era upstream as they are deployed: the v1 SDK with sessions, whose `hang_legacy` waits until cancelled. */
async function startLegacyUpstream(): Promise<void> {
  const sessions = new Map<string, LegacyServerTransport>();
  legacy = createServer((req, res) => {
    void (async () => {
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (transport === undefined) {
        const created: LegacyServerTransport = new LegacyServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, created) });
        transport = created;
        const server = new LegacyMcpServer({ name: 'legacy', version: '1.0.0' });
        server.registerTool('hang_legacy', { description: 'Waits until cancelled.' }, (extra) => new Promise((resolve) => {
          seen.legacyStarted += 1;
          extra.signal.addEventListener('abort', () => {
            seen.legacyAborted += 1;
            resolve({ content: [{ type: 'text', text: 'stopped' }] });
          }, { once: true });
        }));
        await server.connect(transport);
      }
      await transport.handleRequest(req, res);
    })();
  });
  await new Promise<void>((resolve) => legacy.listen(0, '127.0.0.1', resolve));
  legacyUrl = `http://127.0.0.1:${(legacy.address() as AddressInfo).port}/mcp`;
}

before(async () => {
  // One sandbox worker: a cancelled guest that held it would hold up every later guest call.
  s = await startInProcess({ workers: 1, limits: { callTimeoutMs: DEADLINE_MS } });
  assert.equal((await s.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
  const dir = tempDir('subako-progress-');
  writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'steps', description: 'Reports progress.', version: '1.0.0' }));
  writeFileSync(join(dir, 'module.wasm'), await progressGuest());
  assert.equal((await s.call('POST', '/v1/packages', await packBundle(dir))).status, 201);

  upstream = await serveMcpServer(() => {
    const server = new McpServer({ name: 'upstream', version: '1.0.0' }, { capabilities: { logging: {} } });
    server.registerTool('slow', { description: 'Reports two steps.', inputSchema: z.object({}) }, async (_args, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (const step of [1, 2]) {
        if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: step, total: 2, message: `upstream ${step}` } });
      }
      return { content: [{ type: 'text', text: 'slow done' }] };
    });
    server.registerTool('hang', { description: 'Waits until cancelled.', inputSchema: z.object({}) }, (_args, ctx) => new Promise((resolve) => {
      seen.hangStarted += 1;
      ctx.mcpReq.signal.addEventListener('abort', () => {
        seen.hangAborted += 1;
        resolve({ content: [{ type: 'text', text: 'stopped' }] });
      }, { once: true });
    }));
    // Logs as the SDK gates it: only when the request carried a level, and only at it or above.
    server.registerTool('chatty', { description: 'Logs at every level.', inputSchema: z.object({}) }, async (_args, ctx) => {
      seen.levels.push((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_KEY] as string | undefined);
      for (const level of LOG_LEVELS) await ctx.mcpReq.log(level, `chatty ${level}`);
      return { content: [{ type: 'text', text: 'chatty done' }] };
    });
    // Sends every level whatever the request asked: what subako forwards is its own decision.
    server.registerTool('loud', { description: 'Logs regardless.', inputSchema: z.object({}) }, async (_args, ctx) => {
      for (const level of LOG_LEVELS) await ctx.mcpReq.notify({ method: 'notifications/message', params: { level, data: `loud ${level}` } });
      return { content: [{ type: 'text', text: 'loud done' }] };
    });
    return server;
  });
  await startLegacyUpstream();
});
after(async () => {
  await s.close();
  await upstream.stop();
  legacy.closeAllConnections();
  await new Promise((resolve) => legacy.close(resolve));
});

interface Session { id: string; forms: { name: string; url: string; headers: Record<string, string> }[] }

async function newSession(): Promise<Session> {
  const agent = await s.call('POST', '/v1/agents', {
    name: `p4-${Math.random().toString(36).slice(2)}`, tools: [{ package: 'steps' }, { package: 'probe' }], mcp_servers: [{ name: 'up', url: upstream.url }, { name: 'old', url: legacyUrl }],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body;
  return {
    id: session.id,
    forms: [
      { name: 'the capability URL', url: session.mcp.capability_url, headers: {} },
      { name: 'the session URL with its token', url: session.mcp.url, headers: { authorization: session.mcp.authorization } },
    ],
  };
}

async function connect(form: Session['forms'][number], era: 'modern' | 'legacy' = 'modern'): Promise<{ client: Client; tool: (suffix: string) => string }> {
  const client = new Client({ name: 'v2', version: '1' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(form.url), { requestInit: { headers: form.headers } }));
  assert.equal(client.getProtocolEra(), era);
  const names = (await client.listTools()).tools.map((t) => t.name);
  const tool = (suffix: string) => {
    const name = names.find((n) => n.endsWith(suffix));
    assert.ok(name, `a tool ending in ${suffix} among ${JSON.stringify(names)}`);
    return name;
  };
  return { client, tool };
}

function collectLogs(client: Client): Logged[] {
  const logged: Logged[] = [];
  client.setNotificationHandler('notifications/message', (n) => void logged.push({ level: n.params.level, data: n.params.data }));
  return logged;
}

const shape = (updates: Update[]) => updates.map(({ progress, total, message }) => ({ progress, total, ...(message !== undefined ? { message } : {}) }));

async function busyWorkers(): Promise<number> {
  const answer = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.apiKey}` } });
  assert.equal(answer.status, 200);
  return valueOf(parsePrometheusText(await answer.text()), 'subako_sandbox_workers', { state: 'busy' });
}

type LoggedCall = { tool: string; outcome: string };
/** The session's latest logged call of `tool` (the session's call log lists its calls oldest first). */
const latestCall = async (sessionId: string, tool: string): Promise<LoggedCall | undefined> =>
  ((await s.call('GET', `/v1/sessions/${sessionId}/calls`)).body.items as LoggedCall[]).filter((c) => c.tool === tool).at(-1);

describe('progress, cancellation and logging through a session endpoint', () => {
  let session: Session;
  before(async () => {
    session = await newSession();
  });

  for (const formIndex of [0, 1]) {
    const formName = ['the capability URL', 'the session URL with its token'][formIndex];
    describe(`through ${formName}`, () => {
      it("a guest's progress and the upstream's reach the client on the request's stream", async () => {
        const { client, tool } = await connect(session.forms[formIndex]);
        try {
          const guest: Update[] = [];
          const answered = await client.callTool({ name: tool('work'), arguments: {} }, { onprogress: (p) => void guest.push(p) });
          assert.deepEqual(answered.content, [{ type: 'text', text: 'ok' }]);
          assert.deepEqual(shape(guest), [{ progress: 1, total: 2 }, { progress: 2, total: 2 }]);
          const remote: Update[] = [];
          const slow = await client.callTool({ name: tool('slow'), arguments: {} }, { onprogress: (p) => void remote.push(p) });
          assert.deepEqual(slow.content, [{ type: 'text', text: 'slow done' }]);
          assert.deepEqual(shape(remote), [{ progress: 1, total: 2, message: 'upstream 1' }, { progress: 2, total: 2, message: 'upstream 2' }]);
        } finally {
          await client.close();
        }
      });

      for (const era of ['modern', 'legacy'] as const) {
        const how = era === 'modern' ? 'a 2026-07-28 client closing its stream' : 'a 2025-era client sending notifications/cancelled';
        it(`${how} cancels the upstream's request within 2 s`, async () => {
          const { client, tool } = await connect(session.forms[formIndex], era);
          try {
            const before = { ...seen };
            const controller = new AbortController();
            const call = client.callTool({ name: tool('hang'), arguments: {} }, { signal: controller.signal });
            await until('the upstream started the call', () => seen.hangStarted > before.hangStarted);
            controller.abort('the user pressed stop');
            await assert.rejects(call);
            await until("the upstream's request was cancelled", () => seen.hangAborted > before.hangAborted, CANCEL_REACHES_WITHIN_MS);
            const logged = await eventually('the call logged as ended', () => latestCall(session.id, tool('hang')), (c) => c !== undefined && c.outcome !== 'running');
            assert.equal(logged?.outcome, 'cancelled');
          } finally {
            await client.close();
          }
        });

        it(`${era === 'modern' ? 'a 2026-07-28' : 'a 2025-era'} client cancelling a guest call ends it: logged cancelled, the worker idle again, the next guest call served`, async () => {
          const { client, tool } = await connect(session.forms[formIndex], era);
          try {
            const controller = new AbortController();
            const call = client.callTool({ name: tool('timeout'), arguments: {} }, { signal: controller.signal });
            await until('the guest is running on the worker', async () => (await busyWorkers()) === 1);
            controller.abort('the user pressed stop');
            await assert.rejects(call);
            await until('the worker is idle again', async () => (await busyWorkers()) === 0);
            const logged = await eventually('the guest call logged as ended', () => latestCall(session.id, tool('timeout')), (c) => c !== undefined && c.outcome !== 'running');
            assert.equal(logged?.outcome, 'cancelled');
            const next = await client.callTool({ name: tool('work'), arguments: {} });
            assert.deepEqual(next.content, [{ type: 'text', text: 'ok' }]);
          } finally {
            await client.close();
          }
        });
      }

      it('a call to a 2025-era upstream cancelled by its client reaches the upstream as notifications/cancelled within 2 s', async () => {
        const { client, tool } = await connect(session.forms[formIndex]);
        try {
          const before = { ...seen };
          const controller = new AbortController();
          const call = client.callTool({ name: tool('hang_legacy'), arguments: {} }, { signal: controller.signal });
          await until('the 2025-era upstream started the call', () => seen.legacyStarted > before.legacyStarted);
          controller.abort('the user pressed stop');
          await assert.rejects(call);
          await until("the 2025-era upstream's request was cancelled", () => seen.legacyAborted > before.legacyAborted, CANCEL_REACHES_WITHIN_MS);
        } finally {
          await client.close();
        }
      });

      it("the request's logLevel reaches the upstream and gates what reaches the client", async () => {
        const { client, tool } = await connect(session.forms[formIndex]);
        try {
          const logged = collectLogs(client);
          const levelsBefore = seen.levels.length;
          await client.callTool({ name: tool('chatty'), arguments: {}, _meta: { [LOG_LEVEL_KEY]: 'error' } });
          await until('the four messages at error and above arrived', () => logged.length >= 4);
          assert.deepEqual(logged, ['error', 'critical', 'alert', 'emergency'].map((level) => ({ level, data: `chatty ${level}` })));
          // An upstream that sends every level regardless: nothing to a request without a level, and only
          // those at the level for one with it (the next call's messages arrive after anything the first sent).
          logged.length = 0;
          await client.callTool({ name: tool('loud'), arguments: {} });
          await client.callTool({ name: tool('loud'), arguments: {}, _meta: { [LOG_LEVEL_KEY]: 'alert' } });
          await until('the two messages at alert and above arrived', () => logged.length >= 2);
          assert.deepEqual(logged, [{ level: 'alert', data: 'loud alert' }, { level: 'emergency', data: 'loud emergency' }]);
          // And a call without a level passes none upstream.
          await client.callTool({ name: tool('chatty'), arguments: {} });
          assert.deepEqual(seen.levels.slice(levelsBefore), ['error', undefined]);
        } finally {
          await client.close();
        }
      });
    });
  }
});
