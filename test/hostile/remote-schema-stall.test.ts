/**
 * Attack (trust boundaries, finding 5): a remote MCP server's schema must not freeze the server. The remote
 * server here is the official v2 server SDK on loopback, declaring the schemas an attacker would: a pattern that
 * backtracks catastrophically (`^(\w+\s?)*$` against a 68-character question ending in a character it does not
 * match), a known ReDoS e-mail pattern, and `uniqueItems` over ~40,000 objects. While such a call is checked,
 * `GET /v1/health` must keep answering, and the call must be checked correctly (a linear-time engine gives the
 * right answer) or refused naming the keyword — never sent upstream when the arguments do not match. The same
 * holds for a tool's output schema, which the server writes along with the answer checked against it.
 *
 * The platform is a real `subako serve` child: a frozen event loop in this process would freeze the test too,
 * so the old code would hang the file instead of failing it. The child is killed by its pid in `after`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { serve, type Served } from './helpers/serve.js';

/** A question of 68 characters that `^(\w+\s?)*$` does not match: the `!` sends a backtracking engine through 2^60 paths. */
const QUESTION = 'What is the best way to configure the server for many tenants today!';
/** A known ReDoS e-mail pattern (catastrophic on a long run of letters without an `@`). */
const EMAIL = '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$';
const ITEMS = 40_000;
/** Generous: a server that is not frozen answers its health check in far less, even on a loaded machine. */
const HEALTH_CEILING_MS = 10_000;
/** A call that is checked, refused or answered ends well within this; the old code's stall does not. */
const CALL_CEILING_MS = 120_000;

const TOOLS = [
  {
    name: 'ask',
    description: 'Answers a question.',
    inputSchema: { type: 'object', properties: { question: { type: 'string', pattern: '^(\\w+\\s?)*$' } }, required: ['question'] },
  },
  {
    name: 'register',
    description: 'Registers an e-mail address.',
    inputSchema: { type: 'object', properties: { email: { type: 'string', pattern: EMAIL } }, required: ['email'] },
  },
  {
    name: 'dedupe',
    description: 'Takes distinct records.',
    inputSchema: {
      type: 'object',
      properties: { records: { type: 'array', uniqueItems: true, items: { type: 'object' } } },
      required: ['records'],
    },
  },
  {
    name: 'reply',
    description: 'Answers with a question of its own (its output schema backtracks on it).',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: { type: 'object', properties: { answer: { type: 'string', pattern: '^(\\w+\\s?)*$' } }, required: ['answer'] },
  },
];

let platform: Served;
let remote: HttpServer;
let remoteUrl: string;
/** What reached the remote server: a refused call must never be here. */
const received: Array<{ name: string; arguments: Record<string, unknown> }> = [];
let sessionId: string;

before(async () => {
  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'hostile-schemas', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: TOOLS }) as never);
    server.setRequestHandler('tools/call', async (request) => {
      received.push({ name: request.params.name, arguments: (request.params.arguments ?? {}) as Record<string, unknown> });
      if (request.params.name === 'reply') return { content: [{ type: 'text', text: QUESTION }], structuredContent: { answer: QUESTION } } as never;
      return { content: [{ type: 'text', text: `${request.params.name} done` }] } as never;
    });
    return server;
  });
  const node = toNodeHandler(handler);
  remote = createServer((req, res) => { void node(req, res); });
  await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
  remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}/mcp`;

  platform = await serve(['--no-examples', '--workers', '1']);
  const agent = await platform.call('POST', '/v1/agents', { name: 'hostile-schemas', mcp_servers: [{ name: 'remote', url: remoteUrl }] });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  const session = await platform.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
  assert.equal(session.status, 201, JSON.stringify(session.body));
  sessionId = session.body.id;
});

after(async () => {
  // SIGKILL: a server whose event loop is frozen never runs its SIGTERM handler.
  if (platform && platform.child.exitCode === null && platform.child.pid !== undefined) {
    process.kill(platform.child.pid, 'SIGKILL');
    await platform.exited;
  }
  await new Promise<void>((resolve) => remote?.close(() => resolve()) ?? resolve());
});

interface CallAnswer {
  status: number;
  body: { call: { outcome: string }; result: { isError?: boolean; content: Array<{ text?: string }> } };
}

/**
 * Makes the call and, until it ends, asks `/v1/health` again and again: every health check must answer
 * within the ceiling. Returns the call's answer.
 */
async function callWhileWatchingHealth(tool: string, args: Record<string, unknown>): Promise<CallAnswer> {
  let settled = false;
  const call = fetch(`${platform.url}/v1/sessions/${sessionId}/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${platform.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool, arguments: args }),
    signal: AbortSignal.timeout(CALL_CEILING_MS),
  }).then(async (response) => ({ status: response.status, body: await response.json() }) as CallAnswer)
    .finally(() => { settled = true; });
  let healthChecks = 0;
  do {
    const health = await fetch(`${platform.url}/v1/health`, { signal: AbortSignal.timeout(HEALTH_CEILING_MS) }).catch((err: Error) => err);
    assert.ok(!(health instanceof Error), `GET /v1/health did not answer within ${HEALTH_CEILING_MS} ms while "${tool}" was being checked: ${String(health)}`);
    assert.equal(health.status, 200);
    await health.arrayBuffer();
    healthChecks += 1;
    await new Promise((resolve) => setTimeout(resolve, 50));
  } while (!settled);
  assert.ok(healthChecks > 0);
  return call;
}

const textOf = (answer: CallAnswer): string => answer.body.result.content.map((block) => block.text ?? '').join('');

describe('a remote server\'s schema cannot stall the server', () => {
  it('a catastrophic-backtracking pattern against a 68-character question: checked correctly, health answers, nothing sent', async () => {
    assert.equal(QUESTION.length, 68);
    const before = received.length;
    const answer = await callWhileWatchingHealth('ask', { question: QUESTION });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.call.outcome, 'invalid_arguments');
    assert.match(textOf(answer), /argument \/question must match pattern .* \(rule: pattern\)/);
    assert.equal(received.length, before, 'the refused call reached the remote server');
  });

  it('the same pattern still lets a matching question through (the check is kept, not dropped)', async () => {
    const before = received.length;
    const answer = await callWhileWatchingHealth('ask', { question: 'What is the best way to configure the server' });
    assert.equal(answer.body.call.outcome, 'ok', JSON.stringify(answer.body));
    assert.equal(received.length, before + 1);
    assert.deepEqual(received.at(-1), { name: 'ask', arguments: { question: 'What is the best way to configure the server' } });
  });

  it('a known ReDoS e-mail pattern against a long address without an @: refused as not matching, health answers', async () => {
    const before = received.length;
    const answer = await callWhileWatchingHealth('register', { email: `${'a'.repeat(64)}!` });
    assert.equal(answer.body.call.outcome, 'invalid_arguments', JSON.stringify(answer.body));
    assert.match(textOf(answer), /argument \/email must match pattern .* \(rule: pattern\)/);
    assert.equal(received.length, before);

    const good = await callWhileWatchingHealth('register', { email: 'ada@example.org' });
    assert.equal(good.body.call.outcome, 'ok', JSON.stringify(good.body));
    assert.equal(received.length, before + 1);
  });

  it('uniqueItems over 40,000 objects with one duplicate: refused naming uniqueItems, health answers, nothing sent', async () => {
    const records = Array.from({ length: ITEMS }, (_, i) => ({ id: i, name: `record ${i}` }));
    // Item 1 equals item 0 (key order is not part of a JSON value): a pairwise check, scanning from the end,
    // compares every other pair first.
    records[1] = { name: 'record 0', id: 0 };
    const before = received.length;
    const answer = await callWhileWatchingHealth('dedupe', { records });
    assert.equal(answer.body.call.outcome, 'invalid_arguments', JSON.stringify(answer.body).slice(0, 500));
    // Checked (the duplicate found) or, on a machine too loaded to finish within the budget, refused: both name the keyword.
    assert.match(textOf(answer), /\(rule: uniqueItems\)/);
    assert.match(textOf(answer), /items ## 0 and 1 are identical|cannot be checked against the schema's uniqueItems/);
    assert.equal(received.length, before);
  });

  it('uniqueItems over 40,000 distinct objects: sent when checked within the budget, else refused naming uniqueItems', async () => {
    const records = Array.from({ length: ITEMS }, (_, i) => ({ id: i, name: `record ${i}` }));
    const before = received.length;
    const answer = await callWhileWatchingHealth('dedupe', { records });
    if (answer.body.call.outcome === 'ok') {
      assert.equal(received.length, before + 1);
      assert.equal((received.at(-1)!.arguments.records as unknown[]).length, ITEMS);
    } else {
      assert.equal(answer.body.call.outcome, 'invalid_arguments', JSON.stringify(answer.body).slice(0, 500));
      assert.match(textOf(answer), /cannot be checked against the schema's uniqueItems .*\(rule: uniqueItems\)/);
      assert.equal(received.length, before);
    }
  });

  it('an output schema whose pattern backtracks on the server\'s own answer: checked correctly, health answers', async () => {
    const answer = await callWhileWatchingHealth('reply', {});
    assert.notEqual(answer.body.call.outcome, 'ok');
    assert.equal(answer.body.result.isError, true);
    assert.match(textOf(answer), /structured content at \/answer must match pattern .* \(rule: pattern\)/);
  });
});
