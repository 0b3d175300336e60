/**
 * Direct calls send what a server needs (SEP-2243): `mcp.call` given the tool's schema, the bindings `pull`
 * generates, and `subako mcp call` send the `Mcp-Param-*` headers the schema asks for on the first try, so a
 * real v2 McpServer (which refuses a call without them, 400/-32020) never has to refuse one; `subako mcp call`
 * checks the arguments against the schema first and names the one that is wrong (exit 2, nothing sent).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { call } from '../../src/mcp/client-api.js';
import { McpClientPool } from '../../src/mcp/connection.js';
import { generateBindings } from '../../src/mcp/pull/generate.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { runCli } from './helpers/cli.js';
import { ROUTE_INPUT_SCHEMA, startParamHeaderServer, type ParamHeaderServer } from './helpers/param-header-server.js';

describe('direct calls send the Mcp-Param-* headers a tool asks for', () => {
  let server: ParamHeaderServer;
  let home: string;
  before(async () => {
    server = await startParamHeaderServer();
    home = mkdtempSync(join(tmpdir(), 'subako-param-'));
  });
  after(async () => {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('mcp.call with the tool\'s schema sends them on the first try', async () => {
    const pool = new McpClientPool();
    try {
      const refusals = server.refusals;
      const result = await call({ url: server.url, pool, tool: 'route', arguments: { region: 'eu', count: 3 }, inputSchema: ROUTE_INPUT_SCHEMA as never });
      assert.deepEqual(result.content, [{ type: 'text', text: 'routed to eu' }]);
      assert.deepEqual(server.calls.at(-1), { 'mcp-param-region': 'eu', 'mcp-param-count': '3' });
      assert.equal(server.refusals, refusals, 'the server never had to refuse the call');
    } finally {
      await pool.closeAll();
    }
  });

  it('mcp.call without the schema, on a fresh connection, is refused once and retried by the SDK client', async () => {
    const pool = new McpClientPool();
    try {
      const refusals = server.refusals;
      const result = await call({ url: server.url, pool, tool: 'route', arguments: { region: 'us' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'routed to us' }]);
      assert.equal(server.refusals, refusals + 1);
    } finally {
      await pool.closeAll();
    }
  });

  it('the bindings pull generates carry the header part of the schema and send the headers', async () => {
    const text = generateBindings({ url: server.url, tools: [{ name: 'route', inputSchema: ROUTE_INPUT_SCHEMA as never }], command: 'subako mcp pull' });
    assert.match(text, /call\("route", args, \{"type":"object","properties":\{"region":\{"type":"string","x-mcp-header":"Region"\},"count":\{"type":"integer","x-mcp-header":"Count"\}\}\}\)/);
    // Run the generated module itself, its `subako` import pointed at this build.
    const js = ts.transpileModule(text, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } }).outputText
      .replace("from 'subako'", `from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'dist', 'src', 'index.js')).href)}`);
    const file = join(home, 'bindings.mjs');
    writeFileSync(file, js);
    const bindings = (await import(pathToFileURL(file).href)) as {
      connect(auth: unknown, url?: string): { route(args: object): Promise<{ content: unknown }> };
    };
    const { mcp } = (await import(pathToFileURL(join(REPO_ROOT, 'dist', 'src', 'index.js')).href)) as { mcp: { headers(h: object): unknown; close(): Promise<void> } };
    const refusals = server.refusals;
    try {
      const result = await bindings.connect(mcp.headers({}), server.url).route({ region: 'ap', count: 1 });
      assert.deepEqual(result.content, [{ type: 'text', text: 'routed to ap' }]);
      assert.deepEqual(server.calls.at(-1), { 'mcp-param-region': 'ap', 'mcp-param-count': '1' });
      assert.equal(server.refusals, refusals);
    } finally {
      await mcp.close();
    }
  });

  it('a schema part with a "__proto__" property stays a property in the generated text', () => {
    const inputSchema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string","x-mcp-header":"P"}}}') as Record<string, unknown>;
    const text = generateBindings({ url: server.url, tools: [{ name: 'odd', inputSchema }], command: 'c' });
    const expression = /call\("odd", args, (JSON\.parse\(.*\))\)/.exec(text)?.[1];
    assert.ok(expression, text);
    const value = new Function(`return ${expression}`)() as { properties: object };
    assert.deepEqual(Object.keys(value.properties), ['__proto__']);
  });

  describe('subako mcp call', () => {
    it('sends the headers (the tool is listed first) and the server never refuses', async () => {
      const refusals = server.refusals;
      const run = await runCli(['mcp', 'call', '--url', server.url, 'route', '{"region":"eu","count":12}'], { SUBAKO_HOME: home });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, 'routed to eu\n');
      assert.deepEqual(server.calls.at(-1), { 'mcp-param-region': 'eu', 'mcp-param-count': '12' });
      assert.equal(server.refusals, refusals);
    });

    it('names the wrong argument and exits 2 without sending the call', async () => {
      const calls = server.calls.length;
      const run = await runCli(['mcp', 'call', '--url', server.url, 'route', '{"region":5}'], { SUBAKO_HOME: home });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /arguments for tool "route" do not match its input schema: .*\/region.*string/);
      const json = await runCli(['mcp', 'call', '--url', server.url, '--json', 'route', '{}'], { SUBAKO_HOME: home });
      assert.equal(json.code, 2, json.stderr);
      const error = (JSON.parse(json.stdout) as { error: { code: string; tool: string; rule: string } }).error;
      assert.equal(error.tool, 'route');
      assert.equal(error.rule, 'required');
      assert.equal(server.calls.length, calls);
    });

    // SEP-2243 says a null header argument is sent with its header left out, and allows x-mcp-header only on a
    // primitive type (string, integer, boolean), so null never matches such a schema: the call is refused
    // before sending, as every call with arguments its schema refuses (the suite's sep-2243-client-omit-null
    // expects it sent; we hold to validating first).
    it('a null argument for a header parameter is refused before sending, naming it', async () => {
      const calls = server.calls.length;
      const run = await runCli(['mcp', 'call', '--url', server.url, 'route', '{"region":null}'], { SUBAKO_HOME: home });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /arguments for tool "route" do not match its input schema: .*\/region.*string/);
      assert.equal(server.calls.length, calls);
    });

    it('an unknown tool exits 2 naming the tools there are', async () => {
      const run = await runCli(['mcp', 'call', '--url', server.url, 'nope', '{}'], { SUBAKO_HOME: home });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /the server has no tool "nope"; it offers: route/);
    });
  });
});
