/**
 * `subako dev` (issue 14's second "done when"): one MCP URL, printed once; a change to the example tool's
 * source is served at that URL on the next call; a broken edit prints the compiler's error and the last
 * good module keeps serving.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { cRecipe } from '../../src/devkit/recipes/c.js';
import { toolchainMissing } from '../helpers/toolchains.js';
import { SUBAKO, scratchDir, subako } from './helpers.js';

// The project is the C template's: without clang and wasi-libc there is nothing to serve.
describe('subako dev', { skip: toolchainMissing(cRecipe) }, () => {
  let scratch: string;
  let project: string;
  let child: ChildProcess;
  let stdout = '';
  let stderr = '';
  let url: string;
  let client: Client;

  /** Waits until the dev server's stderr has said `pattern` `times` times in all. */
  async function told(pattern: RegExp, times: number): Promise<void> {
    const global = new RegExp(pattern.source, 'g');
    while ((stderr.match(global) ?? []).length < times) {
      if (child.exitCode !== null) throw new Error(`subako dev exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const greet = async (): Promise<string> => {
    const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    return String((result.structuredContent as { message: string }).message);
  };

  const edit = (from: string, to: string): void => {
    const path = join(project, 'src', 'main.c');
    const source = readFileSync(path, 'utf8');
    assert.ok(source.includes(from), `the template's main.c holds ${from}`);
    writeFileSync(path, source.replace(from, to));
  };

  before(async () => {
    scratch = scratchDir('dev');
    project = join(scratch, 'project');
    const init = await subako(['init', project, '--name', 'dev-demo']);
    assert.equal(init.code, 0, init.stderr);
    child = spawn(process.execPath, [SUBAKO, 'dev', project], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    while (!/^MCP URL .*: (\S+)$/m.test(stdout)) {
      if (child.exitCode !== null) throw new Error(`subako dev exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    url = /^MCP URL .*: (\S+)$/m.exec(stdout)![1];
    await told(/built; serving 1 tool: greet/, 1);
    client = new Client({ name: 'devkit-dev-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  });

  after(async () => {
    await client?.close();
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(scratch, { recursive: true, force: true });
  });

  test('the first build is served at the URL it printed', async () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp\/[A-Za-z0-9_-]{43}$/);
    assert.equal(await greet(), 'Hello, Ada.');
  });

  test('a change to the example tool is the next call\'s code, at the same URL', async () => {
    edit('"Hello, %s%s"', '"Howdy, %s%s"');
    await told(/built; serving 1 tool: greet/, 2);
    assert.equal(await greet(), 'Howdy, Ada.');
  });

  test('a broken edit prints the compiler\'s error, and the last good module keeps serving', async () => {
    edit('subako_structured(call, out);', 'subako_structured(call, out) not_c;');
    await told(/the last good build keeps serving/, 1);
    assert.match(stderr, /src\/main\.c:\d+:\d+: error: /, 'clang\'s own diagnostic, as it wrote it');
    assert.match(stderr, /not_c/);
    assert.equal(await greet(), 'Howdy, Ada.');
  });

  test('fixing it serves the fix, and the URL was printed once only', async () => {
    edit('subako_structured(call, out) not_c;', 'subako_structured(call, out);');
    edit('"Howdy, %s%s"', '"Hi, %s%s"');
    await told(/built; serving 1 tool: greet/, 3);
    assert.equal(await greet(), 'Hi, Ada.');
    assert.equal((stdout.match(/MCP URL/g) ?? []).length, 1);
  });

  test('SIGTERM stops it', async () => {
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('exit', r));
    assert.equal(code, 0);
    assert.match(stderr, /subako dev: stopped/);
  });
});

describe('subako dev refusals', () => {
  let holder: Server | undefined;
  after(() => new Promise<void>((done) => (holder ? holder.close(() => done()) : done())));

  test('a port another program holds: one line naming the port and --port, no EADDRINUSE stack, exit 1', async () => {
    holder = createServer();
    await new Promise<void>((done) => holder!.listen(0, '127.0.0.1', done));
    const port = (holder.address() as AddressInfo).port;
    const project = join(scratchDir('dev-busy'), 'project');
    const init = await subako(['init', project, '--name', 'busy-demo']);
    assert.equal(init.code, 0, init.stderr);
    const run = await subako(['dev', project, '--port', String(port)]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, `subako dev: port ${port} on 127.0.0.1 is already in use by another program; choose another with --port <port>, or leave --port out for a free one\n`);
  });

  test('a directory that is no project: one line saying how to start one, exit 1, nothing served', async () => {
    const dir = scratchDir('dev-none');
    const run = await subako(['dev', dir]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^subako dev: .* is not a package project subako can build .*subako init <dir>.*\n$/);
    rmSync(dir, { recursive: true, force: true });
  });
});
