/**
 * `subako mcp stdio`: an official SDK client that only launches stdio servers reaches a Streamable HTTP server
 * through the real command (a child process), in both eras; the header it was given reaches the server and
 * never the client; a server it cannot reach is one JSON-RPC error per request, with no secret of the URL in
 * it. And `subako mcp client-config`: the snippet for each client.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startModernServer, startLegacyServer, type RunningServer } from './helpers/servers.js';
import { runCli } from './helpers/cli.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { clientConfig, CLIENT_FORMATS } from '../../src/cli/mcp-client-config.js';
import { freePort } from '../helpers/nats.js';

const BIN = join(REPO_ROOT, 'bin', 'subako.js');
const TOKEN = 'Bearer stdio-bridge-s3cret';

describe('subako mcp stdio', () => {
  let modern: RunningServer;
  let legacy: RunningServer;
  let home: string;
  const clients: Client[] = [];

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'subako-stdio-'));
    [modern, legacy] = await Promise.all([startModernServer({ requireAuthorization: TOKEN }), startLegacyServer({ requireAuthorization: TOKEN })]);
  });
  after(async () => {
    // Closing the client ends the bridge's stdin; the transport kills the child if it does not go.
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await Promise.all([modern?.stop(), legacy?.stop()]);
    rmSync(home, { recursive: true, force: true });
  });

  async function connect(url: string, mode: 'auto' | 'legacy'): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', 'stdio', '--url', url, '--header', `Authorization=${TOKEN}`],
      env: { ...process.env, SUBAKO_HOME: home } as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' }, { versionNegotiation: { mode } });
    clients.push(client);
    await client.connect(transport, { timeout: 60_000 });
    return client;
  }

  it('relays a 2026-07-28 client: every page of tools, a call, and the header kept from the client', async () => {
    const client = await connect(modern.url, 'auto');
    assert.equal(client.getProtocolEra(), 'modern');
    const before = modern.stats.modernRequests;
    const pagesBefore = modern.stats.listPages;
    const tools = await client.listTools();
    // The bridge relays pages as they come; the client follows the cursor through it, page by page.
    assert.deepEqual(tools.tools.map((tool) => tool.name), ['add', 'pixel', 'fail', 'whoami', 'echo_auth_error']);
    assert.equal(modern.stats.listPages - pagesBefore, 3);
    const sum = await client.callTool({ name: 'add', arguments: { x: 40, y: 2 } });
    assert.deepEqual(sum.structuredContent, { sum: 42 });
    assert.ok(modern.stats.modernRequests > before, 'requests went out as 2026-07-28 ones');
    // The server saw the header; the client is shown the server's echo of it with the value cut out.
    assert.ok(modern.stats.authorizations.includes(TOKEN));
    const whoami = await client.callTool({ name: 'whoami', arguments: {} });
    const text = JSON.stringify(whoami);
    assert.ok(!text.includes('stdio-bridge-s3cret'), text);
  });

  it('relays a 2025-era client to a server with sessions: initialize, then requests in that session', async () => {
    const client = await connect(legacy.url, 'legacy');
    const sum = await client.callTool({ name: 'add', arguments: { x: 1, y: 2 } });
    assert.deepEqual(sum.structuredContent, { sum: 3 });
    const pixel = await client.callTool({ name: 'pixel', arguments: {} });
    assert.equal((pixel.content as Array<{ type: string }>)[0].type, 'image');
    assert.equal(legacy.stats.initializes, 1, 'one session, reused by every request');
    assert.equal(legacy.stats.calls, 2);
  });

  it('answers each request to a server it cannot reach with one JSON-RPC error, no secret of the URL in it, and ends with its stdin', async () => {
    const port = await freePort(); // nothing listens there
    const url = `http://127.0.0.1:${port}/mcp/capability-path-s3cret`;
    const child = spawn(process.execPath, [BIN, 'mcp', 'stdio', '--url', url], { env: { ...process.env, SUBAKO_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const lines = createInterface({ input: child.stdout });
      const answers: unknown[] = [];
      lines.on('line', (line) => answers.push(JSON.parse(line)));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} })}\n`);
      child.stdin.write('this is not json\n');
      // A line past the cap is not held whole (it is dropped as it comes) and is answered once.
      const chunk = 'x'.repeat(1024 * 1024);
      for (let i = 0; i < 12; i++) child.stdin.write(chunk);
      child.stdin.write('\n');
      child.stdin.end();
      assert.equal(await exited, 0, stderr);
      const error = answers.find((answer) => (answer as { id?: unknown }).id === 7) as { error: { code: number; message: string } };
      assert.equal(error.error.code, -32000);
      assert.ok(error.error.message.length > 0 && !error.error.message.includes('\n'), error.error.message);
      const parseErrors = answers.filter((answer) => (answer as { id?: unknown }).id === null) as Array<{ error: { code: number; message: string } }>;
      assert.deepEqual(parseErrors.map((answer) => answer.error.code), [-32700, -32700]);
      assert.match(parseErrors[1].error.message, /passed 10485760 bytes/);
      for (const text of [JSON.stringify(answers), stderr]) assert.ok(!text.includes('capability-path-s3cret'), text);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('subako mcp client-config', () => {
  const input = { name: 'tools', url: 'https://subako.example/s/abc', headers: {}, node: '/usr/bin/node', subako: '/opt/subako/bin/subako.js' };

  it('gives HTTP clients the URL and stdio-only clients the bridge, with absolute paths', () => {
    assert.deepEqual(JSON.parse(clientConfig('cursor', input).snippet), { mcpServers: { tools: { url: input.url } } });
    assert.deepEqual(JSON.parse(clientConfig('vscode', input).snippet), { servers: { tools: { type: 'http', url: input.url } } });
    assert.deepEqual(JSON.parse(clientConfig('windsurf', input).snippet), { mcpServers: { tools: { serverUrl: input.url } } });
    assert.deepEqual(JSON.parse(clientConfig('claude-desktop', input).snippet), {
      mcpServers: { tools: { command: '/usr/bin/node', args: ['/opt/subako/bin/subako.js', 'mcp', 'stdio', '--url', input.url] } },
    });
    assert.equal(clientConfig('claude-code', input).snippet, `claude mcp add --transport http tools ${input.url}\n`);
    const withHeader = { ...input, headers: { Authorization: "Bearer it's" } };
    assert.deepEqual(JSON.parse(clientConfig('vscode', withHeader).snippet).servers.tools.headers, withHeader.headers);
    assert.deepEqual(JSON.parse(clientConfig('stdio', withHeader).snippet).args.slice(-2), ['--header', "Authorization=Bearer it's"]);
    assert.equal(clientConfig('claude-code', withHeader).snippet, `claude mcp add --transport http tools ${input.url} --header 'Authorization: Bearer it'\\''s'\n`);
    assert.throws(() => clientConfig('emacs', input), /unknown client "emacs": give one of claude-desktop, claude-code, cursor, vscode, windsurf, stdio/);
  });

  it('prints the snippet on stdout and the warning on stderr; an unknown client is a usage error', async () => {
    const run = await runCli(['mcp', 'client-config', 'claude-desktop', '--url', input.url, '--name', 'mine']);
    assert.equal(run.code, 0, run.stderr);
    const launch = JSON.parse(run.stdout).mcpServers.mine;
    assert.equal(launch.command, process.execPath);
    assert.equal(launch.args[0], BIN);
    assert.match(run.stderr, /keep it private/);
    const bad = await runCli(['mcp', 'client-config', 'emacs', '--url', input.url]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, new RegExp(Object.keys(CLIENT_FORMATS).join(', ')));
  });
});
