/** `subako mcp tools` and `subako mcp call` for people, run as the real command against a real server. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startModernServer, startLegacyServer, type RunningServer } from './helpers/servers.js';
import { runCli, type CliRun } from './helpers/cli.js';

describe('subako mcp tools / call', () => {
  let modern: RunningServer;
  let legacy: RunningServer;
  let home: string;
  const env = () => ({ SUBAKO_HOME: home });

  // Every command runs once, all at the same time (a process start is the slow part); the tests read the runs.
  let runs: Record<string, CliRun>;
  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'subako-cli-'));
    [modern, legacy] = await Promise.all([startModernServer(), startLegacyServer()]);
    // A port nothing listens on (one just let go): fetch refuses some low ports outright ("bad port"), such as 9.
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const { port } = closed.address() as AddressInfo;
    await new Promise((done) => closed.close(done));
    const nowhere = `http://127.0.0.1:${port}/mcp`;
    const commands: Record<string, string[]> = {
      tools: ['mcp', 'tools', '--url', modern.url],
      toolsJson: ['mcp', 'tools', '--url', legacy.url, '--json'],
      sum: ['mcp', 'call', '--url', modern.url, 'add', '{"x":40,"y":2}'],
      pixel: ['mcp', 'call', '--url', legacy.url, 'pixel'],
      sumJson: ['mcp', 'call', '--url', modern.url, '--json', 'add', '{"x":1,"y":2}'],
      failed: ['mcp', 'call', '--url', modern.url, 'fail', '{"reason":"quota"}'],
      unreachable: ['mcp', 'tools', '--url', nowhere],
      callUnreachable: ['mcp', 'call', '--url', nowhere, 'add', '{}'],
      unknownTool: ['mcp', 'call', '--url', modern.url, 'nope'],
      badArgs: ['mcp', 'call', '--url', modern.url, 'add', '[1,2]'],
    };
    const done = await Promise.all(Object.entries(commands).map(async ([name, args]) => [name, await runCli(args, env())] as const));
    runs = Object.fromEntries(done);
  });
  after(async () => {
    await Promise.all([modern.stop(), legacy.stop()]);
    rmSync(home, { recursive: true, force: true });
  });

  it('tools prints each tool with its description and arguments', () => {
    const run = runs.tools;
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^add — Adds two integers\.\n {2}x: integer — first\n {2}y: integer\n/m);
    assert.match(run.stdout, /^pixel — Returns an image\.\n {2}\(no arguments\)/m);
    assert.match(run.stdout, /reason: string \(optional\)/);
  });

  it('tools --json prints the metadata as JSON (a 2025-era server too)', () => {
    const run = runs.toolsJson;
    assert.equal(run.code, 0, run.stderr);
    const tools = JSON.parse(run.stdout) as Array<{ name: string; inputSchema: unknown; source: unknown }>;
    assert.deepEqual(tools.map((t) => t.name), ['add', 'pixel', 'fail', 'whoami', 'echo_auth_error']);
    assert.deepEqual(tools[0].source, { kind: 'mcp', url: legacy.url });
  });

  it('call prints the result: text, and images described', async () => {
    const sum = runs.sum;
    assert.equal(sum.code, 0, sum.stderr);
    assert.equal(sum.stdout, '42\n');
    const pixel = runs.pixel;
    assert.equal(pixel.stdout, '[image image/png, 70 bytes]\none pixel\n');
  });

  it('call --json prints the whole result', () => {
    const run = runs.sumJson;
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout).structuredContent, { sum: 3 });
  });

  it('call exits as subako call does (cli/call-exit.ts): 1 a tool error, 2 an unknown tool, 3 a server not reached', async () => {
    const failed = runs.failed;
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /tool "fail" failed: failed: quota/);
    assert.equal(runs.unknownTool.code, 2, runs.unknownTool.stderr);
    assert.match(runs.unknownTool.stderr, /has no tool "nope"/);
    assert.equal(runs.callUnreachable.code, 3, runs.callUnreachable.stderr);
  });

  it('a server that cannot be reached is one line naming it, without the SDK\'s probe or a promise to reconnect', () => {
    const unreachable = runs.unreachable;
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /^subako: cannot reach the MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp to list tools \(ECONNREFUSED\)\n$/);
    assert.equal(runs.callUnreachable.stderr, unreachable.stderr);
  });

  it('malformed arguments are a usage error (exit 2)', () => {
    const run = runs.badArgs;
    assert.equal(run.code, 2);
    assert.match(run.stderr, /ARGS-JSON must be a JSON object/);
  });
});
