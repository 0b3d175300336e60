/**
 * ABI 1's stderr-tail rule on every path a call takes past the function host (test/function/stderr-tail
 * covers the host itself, in the sandbox process and in threads): `subako call` (a process of its own),
 * REST and MCP through a session of `subako serve`'s platform, and a call dispatched over NATS to a
 * `subako worker`. Each row of the table — crash reason × one or many writes × before or after the deciding
 * line — must show the last 4 KiB of what the module wrote, marker line included, in `crash.stderr` (where
 * the path shows it), in the call log's `stderr_tail`, and in the text the model reads.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startServer } from '../../src/app.js';
import { packBundle } from '../../src/package/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, removeBuckets, runName, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { makeApi, startInProcess, tempDir, TEST_KEY, type Api, type InProcess } from './helpers/harness.js';
import {
  assertRow, rowArguments, rowName, STDERR_ROWS, stderrTailPackageDir, TABLE_LIMITS, type StderrRow,
} from '../function/stderr-tail-rows.js';

const textOf = (blocks: { text?: unknown }[]): string => blocks.map((block) => String(block.text ?? '')).join('\n');

/** Runs `subako call <dir> crash <args> --json` and resolves with its printed outcome. */
function cliCall(dir: string, row: StderrRow): Promise<{ code: number | null; outcome: any }> {
  const argv = [join(REPO_ROOT, 'bin', 'subako.js'), 'call', dir, 'crash', JSON.stringify(rowArguments(row)), '--json',
    '--timeout', String(TABLE_LIMITS.callTimeoutMs), '--memory', String(TABLE_LIMITS.memoryBytes >> 20)];
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => { out += chunk; });
  child.stderr.on('data', (chunk) => { err += chunk; });
  // Stopped by its pid if the file ends first (a timeout of the runner).
  const stop = (): void => { child.kill('SIGKILL'); };
  process.once('exit', stop);
  return new Promise((resolve, reject) => child.on('exit', (code) => {
    process.off('exit', stop);
    try {
      resolve({ code, outcome: JSON.parse(out) });
    } catch {
      reject(new Error(`subako call printed no JSON (exit ${code}): ${out.slice(0, 300)} ${err.slice(0, 300)}`));
    }
  }));
}

/**
 * Two sessions of an agent whose one tool is the stderr_tail package's `crash` (their REST ids and MCP URLs):
 * a session runs one call at a time by default, and a row queued behind another's deadline would end as a
 * timeout in the queue, so the two rows that run at once each have a session.
 */
async function sessionsOfTail(api: Api, agentName: string): Promise<{ id: string; mcpUrl: string }[]> {
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

/** One row through REST: the answer's record (its crash and stderr_tail) and the model's text. */
async function restRow(api: Api, sessionId: string, row: StderrRow): Promise<void> {
  const answer = await api.call('POST', `/v1/sessions/${sessionId}/calls`, { tool: 'crash', arguments: rowArguments(row) });
  assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300));
  const call = answer.body.call;
  assertRow(row, { reason: call.crash?.reason, stderr: call.stderr_tail, modelText: textOf(answer.body.result.content) });
  assertRow(row, { reason: call.crash?.reason, modelText: textOf(call.model) });
  // The call log keeps what the answer showed.
  const logged = await api.call('GET', `/v1/calls/${call.id}`);
  assert.equal(logged.status, 200);
  assertRow(row, { reason: logged.body.crash?.reason, stderr: logged.body.stderr_tail, modelText: textOf(logged.body.model) });
}

describe('the stderr tail through `subako call`', { concurrency: 2 }, () => {
  const dir = stderrTailPackageDir();
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const row of STDERR_ROWS) {
    test(rowName(row), async () => {
      const { code, outcome } = await cliCall(dir, row);
      assert.equal(code, 1, `${rowName(row)}: a crash exits 1`);
      assert.equal(outcome.status, 'crash');
      assertRow(row, { reason: outcome.crash?.reason, stderr: outcome.crash?.stderr, modelText: textOf(outcome.model) });
    });
  }
});

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
    rmSync(server.dataDir, { recursive: true, force: true });
  });
  for (const row of STDERR_ROWS) {
    test(`REST ${rowName(row)}`, () => restRow(server, sessions[0].id, row));
    test(`MCP ${rowName(row)}`, async () => {
      const result = (await client.callTool({ name: 'crash', arguments: rowArguments(row) })) as { content: { text?: string }[]; isError?: boolean };
      assert.equal(result.isError, true);
      // MCP shows the model's view only; the record behind it is checked through REST above.
      const text = textOf(result.content);
      assertRow(row, { reason: /The function crashed \((\w+)\)/.exec(text)?.[1], modelText: text });
    });
  }
});

describe('the stderr tail through a call dispatched over NATS to a worker', { concurrency: 2 }, () => {
  const prefix = runName('subako_tail');
  const dataDir = tempDir();
  const volumesDir = tempDir('subako-tail-volumes-');
  let api: Api;
  let close: () => Promise<void>;
  let worker: ChildWorker;
  let sessions: { id: string }[];
  before(async () => {
    worker = await spawnWorker({
      url: SHARED_NATS_URL, prefix, volumesDir, pool: 2, repoRoot: REPO_ROOT,
      env: { ...TEST_KEY, SUBAKO_MEMORY_MIB: String(TABLE_LIMITS.memoryBytes >> 20), SUBAKO_CALL_TIMEOUT_MS: String(TABLE_LIMITS.callTimeoutMs) },
    });
    const { server, firstStart } = await startServer({
      dataDir, port: 0, examplesDir: null, limits: TABLE_LIMITS, env: { ...process.env, ...TEST_KEY },
      nats: { url: SHARED_NATS_URL, prefix }, volumesDir,
    });
    api = makeApi(server.url, firstStart!.apiKey);
    close = () => server.close(5_000);
    sessions = await sessionsOfTail(api, 'tail-nats');
  });
  after(async () => {
    await close?.();
    await worker?.stop();
    await removeBuckets(prefix);
    for (const path of [dataDir, volumesDir]) rmSync(path, { recursive: true, force: true });
  });
  STDERR_ROWS.forEach((row, i) => {
    test(rowName(row), () => restRow(api, sessions[i % 2].id, row));
  });
});
