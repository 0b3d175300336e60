/**
 * `pull` never writes a credential, end to end: the CLI pulls (1) from a real capability URL served by
 * `mcp.serve`, and (2) from a v2 SDK server that wants a token in its query AND a bearer header. Each
 * generated file is grepped for every planted token (none found), compiled with tsc in a strict project,
 * and its wrappers call the server with the URL given only at run time (argument or environment variable).
 */
import assert from 'node:assert/strict';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { UsageError } from '../../../src/errors.js';
import { defineTool } from '../../../src/mcp/define-tool.js';
import { mcp } from '../../../src/mcp/index.js';
import { makeProject, run, TSC } from './ts-project.js';

const RUNNER = join(dirname(fileURLToPath(import.meta.url)), '..', 'oauth', 'cli-runner.js');
const QUERY_TOKEN = 'query-token-5d1c8e2a7f904b3c';
const HEADER_TOKEN = 'header-token-77ab31c0e9d24f58';

interface Bindings {
  URL_VARIABLE: string;
  connect: (...args: unknown[]) => Record<string, (args?: unknown) => Promise<unknown>>;
}

let work: string;
let http: Server;
let queryUrl: string;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'subako-pull-secret-'));
  const server = (): McpServer => {
    const s = new McpServer({ name: 'query-keyed', version: '1.0.0' });
    s.registerTool('shout', { inputSchema: z.object({ text: z.string() }), outputSchema: z.object({ loud: z.string() }) }, async ({ text }) => ({
      content: [{ type: 'text', text: text.toUpperCase() }],
      structuredContent: { loud: text.toUpperCase() },
    }));
    return s;
  };
  const handler = createMcpHandler(server);
  // Both credentials are required: the pull and the compiled wrappers must send the key (in the query, or
  // as X-Key for the public-URL case) and the bearer header.
  http = createServer(
    toNodeHandler({
      fetch: async (request: Request) =>
        (new URL(request.url).searchParams.get('key') ?? request.headers.get('x-key')) === QUERY_TOKEN &&
        request.headers.get('authorization') === `Bearer ${HEADER_TOKEN}`
          ? handler.fetch(request)
          : new Response('unauthorized', { status: 401 }),
    }),
  );
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  queryUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp?key=${QUERY_TOKEN}`;
});

after(async () => {
  await mcp.close();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
  await rm(work, { recursive: true, force: true });
});

async function compileAndImport(name: string, text: string): Promise<Bindings> {
  const project = await makeProject(work, { [`${name}.ts`]: text }, `project-${name}`);
  const compiled = await run(TSC, ['-p', 'tsconfig.json'], project);
  assert.equal(compiled.code, 0, `tsc failed:\n${compiled.stdout}${compiled.stderr}`);
  return (await import(pathToFileURL(join(project, 'out', `${name}.js`)).href)) as Bindings;
}

describe('subako mcp pull keeps credentials out of the generated file', () => {
  test('a capability URL from mcp.serve: not in the file; connect(url) takes no auth and calls through the URL given at run time', async () => {
    const echo = defineTool({
      name: 'echo',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      handler: async ({ text }: { text: string }) => ({ content: [{ type: 'text', text: `echo ${text}` }] }),
    });
    await mcp.serve({ echo }, async (url) => {
      const token = new URL(url).pathname.split('/').pop()!;
      assert.ok(token.length >= 40, 'serve hands out a token path');
      const out = join(work, 'cap-tools.ts');
      const pulled = await run(process.execPath, [RUNNER, 'pull', '--url', url, '--out', out], work);
      assert.equal(pulled.code, 0, pulled.stderr);
      assert.match(pulled.stdout, /the URL is not in the file \(its path has a segment that may be a token\): connect\(\) reads it from \$SUBAKO_CAP_TOOLS_URL/);
      assert.ok(!pulled.stdout.includes(token) && !pulled.stderr.includes(token), 'nor in what the CLI prints');
      const text = await readFile(out, 'utf8');
      assert.ok(!text.includes(token), 'the capability token is not in the file');
      assert.ok(!text.includes(new URL(url).pathname), 'nor the capability path');
      assert.match(text, /--url "\$SUBAKO_CAP_TOOLS_URL" --out /);

      const bindings = await compileAndImport('cap-tools', text);
      assert.equal(bindings.URL_VARIABLE, 'SUBAKO_CAP_TOOLS_URL');
      const viaArgument = bindings.connect(url);
      assert.deepEqual(((await viaArgument.echo!({ text: 'hi' })) as { content: unknown }).content, [{ type: 'text', text: 'echo hi' }]);

      // Without the URL, connect() names the variable to set; with it set, it calls.
      assert.throws(() => bindings.connect(), (err: unknown) => err instanceof UsageError && /SUBAKO_CAP_TOOLS_URL/.test(err.message));
      process.env.SUBAKO_CAP_TOOLS_URL = url;
      try {
        const viaEnvironment = bindings.connect();
        assert.deepEqual(((await viaEnvironment.echo!({ text: 'env' })) as { content: unknown }).content, [{ type: 'text', text: 'echo env' }]);
      } finally {
        delete process.env.SUBAKO_CAP_TOOLS_URL;
      }
      // An auth where the URL belongs is refused, not sent along.
      assert.throws(() => bindings.connect(mcp.headers({ Authorization: 'Bearer x' })), (err: unknown) => err instanceof UsageError && /no auth/.test(err.message));
    });
  });

  test('a token in the query plus header auth: neither token is in the file; connect(auth, url) calls with both', async () => {
    const out = join(work, 'keyed.ts');
    const pulled = await run(process.execPath, [RUNNER, 'pull', '--url', queryUrl, '--out', out, '--header', `Authorization=Bearer ${HEADER_TOKEN}`], work);
    assert.equal(pulled.code, 0, pulled.stderr);
    assert.match(pulled.stdout, /query string/);
    const text = await readFile(out, 'utf8');
    for (const planted of [QUERY_TOKEN, HEADER_TOKEN]) {
      assert.ok(!text.includes(planted), `${planted} is not in the file`);
      assert.ok(!pulled.stdout.includes(planted) && !pulled.stderr.includes(planted), `${planted} is not printed`);
    }
    assert.ok(!text.includes('?key'), 'no part of the query is written');
    assert.match(text, /--url "\$SUBAKO_KEYED_URL" --out \S+ --header 'Authorization=<value>'/);

    const bindings = await compileAndImport('keyed', text);
    const tools = bindings.connect(mcp.headers({ Authorization: `Bearer ${HEADER_TOKEN}` }), queryUrl);
    assert.deepEqual(await tools.shout!({ text: 'quiet' }), { loud: 'QUIET' });
  });

  test('--url-env keeps even a public-looking URL out, under the name given', async () => {
    const out = join(work, 'forced.ts');
    const publicUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const headers = ['--header', `Authorization=Bearer ${HEADER_TOKEN}`, '--header', `X-Key=${QUERY_TOKEN}`];
    const pulled = await run(process.execPath, [RUNNER, 'pull', '--url', publicUrl, '--out', out, ...headers, '--url-env', 'MY_MCP_URL'], work);
    assert.equal(pulled.code, 0, pulled.stderr);
    const text = await readFile(out, 'utf8');
    assert.match(text, /URL_VARIABLE = "MY_MCP_URL"/);
    assert.ok(!text.includes(publicUrl));
    assert.match(pulled.stdout, /--url-env was given/);
    assert.match(text, /--url "\$MY_MCP_URL" .*--url-env MY_MCP_URL/);
    for (const planted of [QUERY_TOKEN, HEADER_TOKEN]) assert.ok(!text.includes(planted));
  });
});
