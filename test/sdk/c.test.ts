/**
 * The C SDK (sdk/c/subako.h), by real guests built from it at test time with the C recipe's own clang
 * flags (test/sdk/guests/*.c and templates/c), run through FunctionHost and the `subako` command: every
 * content block, the error paths that are tool errors and never crashes, paging past 16 tools, `_meta`,
 * subako_http against a loopback HTTPS server with an allowlist, and files under /volume. Without clang and
 * wasi-libc the builds skip, saying what to install; the recipe's pure rules are tested either way.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, cpSync, existsSync, openSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WASI } from 'node:wasi';
import fc from 'fast-check';
import sharp from 'sharp';
import { FunctionHost, type LoadedPackage } from '../../src/function/index.js';
import type { EgressGrant, FunctionCallOutcome } from '../../src/function/types.js';
import { C_INSTALL, cRecipe, cSources, clangArgs } from '../../src/devkit/recipes/c.js';
import type { SdkPaths } from '../../src/devkit/recipe.js';
import { HTTP_ABI_MISUSE, HTTP_ERROR_KINDS } from '../../src/sandbox/index.js';
import { toolchainMissing } from '../helpers/toolchains.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { wat } from '../helpers/wat.js';
import { testRoutes } from '../egress/helpers/routes.js';
import { startServer, type TestServer } from '../egress/helpers/servers.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';

const SDK: SdkPaths = {
  packageRoot: REPO_ROOT,
  sdkDir: join(REPO_ROOT, 'sdk', 'c'),
  templateDir: join(REPO_ROOT, 'templates', 'c'),
};
/** Why the guests cannot be built here, or false. */
const NO_TOOLCHAIN = toolchainMissing(cRecipe, SDK);
const GUESTS = join(REPO_ROOT, 'test', 'sdk', 'guests');
const SUBAKO = join(REPO_ROOT, 'bin', 'subako.js');
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

let scratch: string;
let host: FunctionHost;
let server: TestServer;
let png: Buffer;
let kitchen: LoadedPackage;
let many: LoadedPackage;
let most: LoadedPackage;
let manyWasm: string;

/** Compiles C sources with the recipe's flags into `<dir>/module.wasm`; returns the module's path. */
function build(dir: string, sources: string[], extra: string[] = []): string {
  mkdirSync(dir, { recursive: true });
  const run = spawnSync('clang', [...clangArgs(sources, SDK.sdkDir), '-Wall', '-Wextra', '-Werror', ...extra], { cwd: dir, encoding: 'utf8' });
  assert.equal(run.status, 0, `clang failed:\n${run.stderr}`);
  return join(dir, 'module.wasm');
}

async function loadBuilt(name: string, wasm: string, assetsDir: string | null = null): Promise<LoadedPackage> {
  return host.load({ name, version: '1.0.0', moduleBytes: readFileSync(wasm), assetsDir });
}

/** Runs `subako` as a real process. */
function subako(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [SUBAKO, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, input });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The answer lines of a raw run of a module (`subako wasi`), one request per line. */
function rawRun(wasm: string, requests: unknown[]): unknown[] {
  const input = requests.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
  const run = subako(['wasi', wasm], {}, input);
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trim().split('\n').map((line) => JSON.parse(line) as unknown);
}

const volume = (): string => mkdtempSync(join(scratch, 'volume-'));

function call(pkg: LoadedPackage, tool: string, args: Record<string, unknown>, egress?: EgressGrant, tmpDir = volume()): Promise<FunctionCallOutcome> {
  return host.call(pkg, tool, args, { tmpDir, egress });
}

/** An outcome that completed (ok or tool error) and never crashed. */
function completed(outcome: FunctionCallOutcome, status: 'ok' | 'tool_error'): NonNullable<FunctionCallOutcome['result']> {
  assert.equal(outcome.crash, null, `crashed: ${JSON.stringify(outcome.crash)}`);
  assert.equal(outcome.status, status, JSON.stringify(outcome.result));
  assert.ok(outcome.result);
  return outcome.result;
}

const allowLoopback = (): EgressGrant => ({
  allow: [`localhost:${server.port}`],
  grants: [],
  credentials: [],
  privateDestinations: 'allow',
  ca: makeTestCa().ca,
});

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'subako-csdk-'));
  if (NO_TOOLCHAIN) return; // every suite that needs the builds is skipped, saying why
  host = new FunctionHost({ poolSize: 2, limits: { callTimeoutMs: 20_000 } });
  png = await sharp({ create: { width: 4, height: 3, channels: 3, background: '#c03020' } }).png().toBuffer();
  const assets = join(scratch, 'kitchen-assets');
  mkdirSync(assets);
  writeFileSync(join(assets, 'dot.png'), png);
  kitchen = await loadBuilt('kitchen', build(join(scratch, 'kitchen'), [join(GUESTS, 'kitchen.c')]), assets);
  manyWasm = build(join(scratch, 'many'), [join(GUESTS, 'many.c')]);
  many = await loadBuilt('many', manyWasm);
  most = await loadBuilt('most', build(join(scratch, 'most'), [join(GUESTS, 'many.c')], ['-DTOOL_COUNT=64']));
  server = await startServer((req, res, arrival) => {
    if (req.url === '/json') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ hello: 'world', n: [1.5, -2e-7, 'x'] }));
      return;
    }
    return testRoutes(req, res, arrival);
  });
});

after(async () => {
  await host?.close();
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('discovery: server/discover and tools/list from the tool table', { skip: NO_TOOLCHAIN }, () => {
  it('every tool is listed in table order, with its schemas as written and {"type":"object"} when none is', async () => {
    const discovery = await host.discover(kitchen);
    assert.deepEqual(discovery.problems, []);
    const tools = discovery.tools!;
    assert.deepEqual(tools.map((t) => t.name), ['two_texts', 'typed', 'echo', 'image', 'chart', 'fail', 'fetch', 'post', 'download', 'progress', 'kinds', 'roundtrip']);
    const echo = tools.find((t) => t.name === 'echo')!;
    assert.deepEqual(echo.inputSchema, { type: 'object', properties: { s: { type: 'string' } }, required: ['s'] });
    assert.deepEqual(echo.outputSchema, { type: 'object', properties: { s: { type: 'string' }, bytes: { type: 'integer' } } });
    assert.deepEqual(tools.find((t) => t.name === 'two_texts')!.inputSchema, { type: 'object' });
    const progress = tools.find((t) => t.name === 'progress')!;
    assert.equal(progress.title, 'Progress reporter');
    assert.deepEqual(progress.annotations, { readOnlyHint: true, openWorldHint: false });
  });

  it('tools/list pages 16 tools at a time: 40 tools arrive whole and in order', async () => {
    const discovery = await host.discover(many);
    assert.deepEqual(discovery.problems, []);
    assert.deepEqual(discovery.tools!.map((t) => t.name), Array.from({ length: 40 }, (_, i) => `tool_${String(i).padStart(2, '0')}`));
  });

  it('each page holds 16 tools and a nextCursor until the last, which has none', () => {
    const answers = rawRun(manyWasm, [
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: '16', _meta: META } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: '32', _meta: META } },
    ]) as { id: number; result: { tools: { name: string }[]; nextCursor?: string; resultType: string } }[];
    assert.deepEqual(answers.map((a) => a.result.tools.length), [16, 16, 8]);
    assert.deepEqual(answers.map((a) => a.result.nextCursor), ['16', '32', undefined]);
    assert.equal(answers[2].result.tools[0].name, 'tool_32');
    assert.ok(answers.every((a) => a.result.resultType === 'complete'));
  });

  it('64 tools, the most a package may offer, fit within the 16 pages discovery reads', async () => {
    const discovery = await host.discover(most);
    assert.deepEqual(discovery.problems, []);
    assert.equal(discovery.tools!.length, 64);
  });

  it('a schema in the table that is not JSON stops discovery with a line naming the tool and the fix', async () => {
    const dir = join(scratch, 'bad-schema');
    mkdirSync(dir);
    writeFileSync(join(dir, 'bad.c'), [
      '#define SUBAKO_IMPLEMENTATION',
      '#include "subako.h"',
      'static void noop(subako_call *call) { subako_text(call, "never"); }',
      'static const subako_tool TOOLS[] = {{.name = "bad", .handler = noop, .input_schema = "{\\"type\\": \\"object\\""}};',
      'int main(void) { return subako_serve(TOOLS, SUBAKO_COUNT(TOOLS)); }',
    ].join('\n'));
    const discovery = await host.discover(await loadBuilt('bad-schema', build(dir, [join(dir, 'bad.c')])));
    assert.equal(discovery.ok, false);
    assert.equal(discovery.problems.length, 1);
    assert.match(discovery.problems[0].code, /^discovery\.crash\./);
    assert.match(discovery.problems[0].message, /tool "bad": input_schema is not a JSON object \(a missing ',' or '\}' at byte 17\); fix it in the tool table/);
  });

  it('a cursor this server never gave is invalid params (-32602), not a wrong page', () => {
    const [answer] = rawRun(manyWasm, [{ jsonrpc: '2.0', id: 'c', method: 'tools/list', params: { cursor: '99', _meta: META } }]) as { error: { code: number } }[];
    assert.equal(answer.error.code, -32602);
  });
});

describe('the line loop and _meta', { skip: NO_TOOLCHAIN }, () => {
  it('notifications and responses get no answer; every request gets one answer line with its own id', () => {
    const answers = rawRun(manyWasm, [
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: {} },
      { jsonrpc: '2.0', id: 'resp-1', result: {} },
      { jsonrpc: '2.0', id: 'd-1', method: 'server/discover', params: { _meta: META } },
      { jsonrpc: '2.0', id: 7, method: 'no/such', params: { _meta: META } },
    ]) as { id: unknown; result?: unknown; error?: { code: number } }[];
    assert.deepEqual(answers.map((a) => a.id), ['d-1', 7]);
    assert.deepEqual(answers[0].result, { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete' });
    assert.equal(answers[1].error!.code, -32601);
  });

  it('a request whose _meta names another protocol revision gets UnsupportedProtocolVersion with the supported list', () => {
    const [answer] = rawRun(manyWasm, [{
      jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name: 'tool_00', arguments: {}, _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2025-06-18' } },
    }]) as { error: { code: number; data: unknown } }[];
    assert.equal(answer.error.code, -32022);
    assert.deepEqual(answer.error.data, { supported: ['2026-07-28'], requested: '2025-06-18' });
  });

  it('a line that is not JSON is a parse error (-32700) and a note on stderr, not a hang', () => {
    const run = subako(['wasi', manyWasm], {}, 'not json\n');
    assert.equal(run.status, 0);
    assert.equal((JSON.parse(run.stdout) as { error: { code: number } }).error.code, -32700);
    assert.match(run.stderr, /not JSON/);
  });

  it('progress goes to the caller when _meta carries a progressToken, and only then', async () => {
    const updates: [number, number | undefined, string | undefined][] = [];
    const outcome = await host.call(kitchen, 'progress', {}, { tmpDir: volume(), progress: (done, total, message) => updates.push([done, total, message]) });
    assert.deepEqual(completed(outcome, 'ok').content, [{ type: 'text', text: 'with a token' }]);
    assert.ok(updates.length >= 1, 'at least the last update is relayed');
    assert.deepEqual(updates.at(-1), [3, 3, 'done']);
    const without = await call(kitchen, 'progress', {});
    assert.deepEqual(completed(without, 'ok').content, [{ type: 'text', text: 'without a token' }]);
  });
});

describe('content blocks', { skip: NO_TOOLCHAIN }, () => {
  it('text blocks arrive in the order the handler added them', async () => {
    const result = completed(await call(kitchen, 'two_texts', {}), 'ok');
    assert.deepEqual(result.content, [{ type: 'text', text: 'first' }, { type: 'text', text: 'second: 2' }]);
    assert.equal(result.isError, undefined);
  });

  it('structured content is answered as structuredContent and, with no text of its own, as its JSON text', async () => {
    const args = { s: 'hi', n: 2.5, i: -3, b: true, list: [1, 2, 3], obj: { a: [null, false], 'k"ey': 'v' } };
    const result = completed(await call(kitchen, 'typed', args), 'ok');
    const expected = { s: 'hi', s_bytes: 2, n: 2.5, i: -3, b: true, list_count: 3, obj_json: JSON.stringify(args.obj), opt: 'fallback', count: 7 };
    assert.deepEqual(result.structuredContent, expected);
    assert.deepEqual(result.content, [{ type: 'text', text: JSON.stringify(expected) }]);
  });

  it('strings survive the reader and the writer byte for byte: escapes, \\u0000, surrogate pairs, non-ASCII', async () => {
    const s = 'caf\u00e9 \u{1F600} "q" \\ \n\t\u0000\u0001 end/';
    const result = completed(await call(kitchen, 'echo', { s }), 'ok');
    assert.deepEqual(result.structuredContent, { s, bytes: Buffer.byteLength(s) });
    assert.deepEqual(result.content, [{ type: 'text', text: 'echoed' }]);
  });

  it('any JSON value comes back the same, read and re-written, and rebuilt with the builders', async () => {
    await fc.assert(fc.asyncProperty(fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 6 }), async (value) => {
      const sent = JSON.parse(JSON.stringify(value)) as unknown;
      const result = completed(await call(kitchen, 'roundtrip', { v: sent }), 'ok');
      assert.deepEqual(result.structuredContent, { same: sent, rebuilt: sent });
    }), { numRuns: 60 });
  });

  it('an image block carries the bytes base64-encoded, and the model sees the image', async () => {
    const outcome = await call(kitchen, 'image', {});
    const result = completed(outcome, 'ok');
    assert.deepEqual(result.content, [{ type: 'image', mimeType: 'image/png', data: png.toString('base64') }]);
    assert.equal(outcome.model[0].type, 'image');
  });

  it('a file written under /volume/tmp (folders made) comes back as a resource_link the model sees as the image', async () => {
    const tmp = volume();
    const outcome = await call(kitchen, 'chart', {}, undefined, tmp);
    const result = completed(outcome, 'ok');
    assert.deepEqual(result.content, [{ type: 'resource_link', uri: 'volume:///tmp/charts/dot%20chart.png', name: 'dot chart.png', mimeType: 'image/png' }]);
    assert.ok(readFileSync(join(tmp, 'charts', 'dot chart.png')).equals(png));
    assert.equal(outcome.model.length, 1);
    assert.equal(outcome.model[0].type, 'image');
  });

  it('a path outside /volume gives no link: the tool says so as a tool error', async () => {
    const result = completed(await call(kitchen, 'chart', { file: '/tmp-not-volume.png' }), 'tool_error');
    assert.match(String(result.content[0].text), /cannot write \/tmp-not-volume\.png|not under \/volume/);
  });

  it('subako_error is a tool error the model reads', async () => {
    const result = completed(await call(kitchen, 'fail', {}), 'tool_error');
    assert.deepEqual(result.content, [{ type: 'text', text: 'the thing went wrong' }]);
    assert.equal(result.isError, true);
  });
});

describe('errors that are tool errors, never crashes', { skip: NO_TOOLCHAIN }, () => {
  const valid = { s: 'x', n: 1, i: 1, b: false, list: [], obj: {} };
  const problemOf = async (args: Record<string, unknown>): Promise<unknown[]> => completed(await call(kitchen, 'typed', args), 'tool_error').content;

  it('a missing argument is named, and whatever the handler built after it is dropped', async () => {
    assert.deepEqual(await problemOf({}), [{ type: 'text', text: 'argument "s" is missing: expected a string' }]);
    const { list: _, ...noList } = valid;
    assert.deepEqual(await problemOf(noList), [{ type: 'text', text: 'argument "list" is missing: expected an array' }]);
  });

  it('a mistyped argument is named with what was expected and what came', async () => {
    assert.deepEqual(await problemOf({ ...valid, s: 5 }), [{ type: 'text', text: 'argument "s" must be a string, not an integer' }]);
    assert.deepEqual(await problemOf({ ...valid, n: 'one' }), [{ type: 'text', text: 'argument "n" must be a number, not a string' }]);
    assert.deepEqual(await problemOf({ ...valid, i: 1.5 }), [{ type: 'text', text: 'argument "i" must be an integer, not 1.5' }]);
    assert.deepEqual(await problemOf({ ...valid, b: null }), [{ type: 'text', text: 'argument "b" must be a boolean, not null' }]);
    assert.deepEqual(await problemOf({ ...valid, obj: [] }), [{ type: 'text', text: 'argument "obj" must be an object, not an array' }]);
  });

  it('an optional argument of the wrong type is named too; absent, its fallback is used', async () => {
    assert.deepEqual(await problemOf({ ...valid, count: 'many' }), [{ type: 'text', text: 'argument "count" must be an integer, not a string' }]);
    const ok = completed(await call(kitchen, 'typed', { ...valid, opt: 'given', count: 2 }), 'ok');
    assert.equal((ok.structuredContent as { opt: string }).opt, 'given');
    assert.equal((ok.structuredContent as { count: number }).count, 2);
  });

  it('arguments nested past the reader\'s 128 levels are a tool error saying so, never a crash or an overflow', async () => {
    const nest = (levels: number): unknown => Array.from({ length: levels }).reduce<unknown>((inner) => ({ k: [inner] }), 'core');
    const deep = completed(await call(kitchen, 'typed', { ...valid, obj: nest(2000) }), 'tool_error');
    assert.deepEqual(deep.content, [{ type: 'text', text: 'the arguments nest deeper than 128 levels, more than this tool reads' }]);
    const within = completed(await call(kitchen, 'typed', { ...valid, obj: nest(60) }), 'ok');
    assert.equal((within.structuredContent as { obj_json: string }).obj_json, JSON.stringify(nest(60)));
  });

  it('an unknown tool is a tool error listing the tools there are', async () => {
    const result = completed(await call(kitchen, 'no_such_tool', {}), 'tool_error');
    assert.deepEqual(result.content, [{
      type: 'text',
      text: 'unknown tool "no_such_tool"; this package offers: two_texts, typed, echo, image, chart, fail, fetch, post, download, progress, kinds, roundtrip',
    }]);
  });
});

describe('subako_http', { skip: NO_TOOLCHAIN }, () => {
  it('a GET to an allowed loopback HTTPS host: status, lowercase headers, the JSON body, our headers sent', async () => {
    const before = server.arrivals.length;
    const result = completed(await call(kitchen, 'fetch', { url: server.url('localhost', '/json') }, allowLoopback()), 'ok');
    assert.deepEqual(result.structuredContent, { status: 200, content_type: 'application/json', body: { hello: 'world', n: [1.5, -2e-7, 'x'] } });
    const arrival = server.arrivals[before];
    assert.equal(arrival.method, 'GET');
    assert.equal(arrival.headers.accept, 'application/json');
    assert.equal(arrival.headers['x-probe'], 'kitchen');
  });

  it('a POST with a JSON body built by the writer arrives as that JSON, typed application/json', async () => {
    const result = completed(await call(kitchen, 'post', { url: server.url('localhost', '/echo') }, allowLoopback()), 'ok');
    const echo = (result.structuredContent as { status: number; echo: { method: string; headers: Record<string, string>; body: string } });
    assert.equal(echo.status, 200);
    assert.equal(echo.echo.method, 'POST');
    assert.match(echo.echo.headers['content-type'], /^application\/json/);
    assert.deepEqual(JSON.parse(echo.echo.body), { order: 1042, note: 'caf\u00e9 "quoted"\n' });
  });

  it('a body saved to a volume file: its path and size come back, the bytes are in the volume', async () => {
    const tmp = volume();
    const result = completed(await call(kitchen, 'download', { url: server.url('localhost', '/bytes?n=300000'), file: '/volume/tmp/dl/blob.bin' }, allowLoopback(), tmp), 'ok');
    assert.deepEqual(result.structuredContent, { path: '/volume/tmp/dl/blob.bin', bytes: 300000 });
    assert.equal(statSync(join(tmp, 'dl', 'blob.bin')).size, 300000);
  });

  it('the error kinds reach the tool by name: host_not_allowed, forbidden_destination, not_text', async () => {
    const url = server.url('localhost', '/json');
    const text = (outcome: FunctionCallOutcome): string => String(completed(outcome, "tool_error").content[0].text);
    const before = server.arrivals.length;
    assert.match(text(await call(kitchen, 'fetch', { url })), /^host_not_allowed: /);
    assert.match(text(await call(kitchen, 'fetch', { url }, { ...allowLoopback(), privateDestinations: 'deny' })), /^forbidden_destination: /);
    assert.equal(server.arrivals.length, before, 'nothing refused reached the server');
    assert.match(text(await call(kitchen, 'fetch', { url: server.url('localhost', '/binary') }, allowLoopback())), /^not_text: /);
  });
});

describe('subako_http: the error kinds and the stub', { skip: NO_TOOLCHAIN }, () => {
  it('the SDK names every error kind the host answers, in the ABI\'s order, between "ok" and "other"', async () => {
    const result = completed(await call(kitchen, 'kinds', {}), 'ok');
    assert.deepEqual(result.structuredContent, { kinds: ['ok', ...HTTP_ERROR_KINDS, 'other'] });
  });

  it('subako_http_stub.wat links into another WASI runtime (node:wasi): every request fails as abi, the rest runs', async () => {
    const stub = new WebAssembly.Instance(new WebAssembly.Module(await wat(readFileSync(join(SDK.sdkDir, 'subako_http_stub.wat'), 'utf8'))));
    const { request, read_response: readResponse } = stub.exports as Record<string, (ptr: number, len: number) => number>;
    assert.equal(request(0, 0), HTTP_ABI_MISUSE.outOfRange);
    assert.equal(readResponse(0, 0), HTTP_ABI_MISUSE.nothingHeld);

    const dir = mkdtempSync(join(scratch, 'stub-'));
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'fetch', arguments: { url: 'https://example.com/' }, _meta: META } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'two_texts', arguments: {}, _meta: META } },
    ];
    writeFileSync(join(dir, 'in.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const stdin = openSync(join(dir, 'in.jsonl'), 'r');
    const stdout = openSync(join(dir, 'out.jsonl'), 'w');
    try {
      const wasi = new WASI({ version: 'preview1', args: ['kitchen'], env: {}, stdin, stdout, returnOnExit: true });
      const module = new WebAssembly.Module(readFileSync(join(scratch, 'kitchen', 'module.wasm')));
      const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi.wasiImport, subako_http: stub.exports });
      assert.equal(wasi.start(instance), 0);
    } finally {
      closeSync(stdin);
      closeSync(stdout);
    }
    const answers = readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: number; result: { content: unknown[]; isError?: boolean } });
    assert.deepEqual(answers[0].result.content, [{ type: 'text', text: 'abi: subako_http.request returned -1' }]);
    assert.equal(answers[0].result.isError, true);
    assert.deepEqual(answers[1].result.content, [{ type: 'text', text: 'first' }, { type: 'text', text: 'second: 2' }]);
  });
});

describe('the C template', { skip: NO_TOOLCHAIN }, () => {
  let project: string;

  before(() => {
    project = join(scratch, 'hello-c');
    cpSync(SDK.templateDir, project, { recursive: true });
    const values: Record<string, string> = { name: 'hello-c', description: 'Says hello, in C.', sdk_dir: SDK.sdkDir };
    const fill = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) fill(path);
        else writeFileSync(path, readFileSync(path, 'utf8').replace(/\{\{(name|description|sdk_dir)\}\}/g, (_, key: string) => values[key]));
      }
    };
    fill(project);
    renameSync(join(project, '_gitignore'), join(project, '.gitignore'));
    for (const command of cRecipe.commands(project, SDK)) {
      const run = spawnSync(command.program, command.args, { cwd: project, encoding: 'utf8', env: { ...process.env, ...command.env } });
      assert.equal(run.status, 0, `${command.program} failed:\n${run.stderr}`);
    }
  });

  it('has the files init copies, and at most about 40 lines of the author\'s code', () => {
    for (const file of ['subako-package.json', 'src/main.c', 'README.md', '.gitignore', 'test.sh', 'compile_flags.txt']) {
      assert.ok(existsSync(join(project, file)), file);
    }
    assert.ok(statSync(join(project, 'test.sh')).mode & 0o100, 'test.sh is executable');
    const lines = readFileSync(join(project, 'src', 'main.c'), 'utf8').split('\n').filter((l) => l.trim() !== '');
    assert.ok(lines.length <= 40, `${lines.length} lines`);
  });

  it('builds with the recipe and passes `subako check`', () => {
    const run = subako(['check', project]);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /hello-c/);
    assert.match(run.stdout, /greet/);
  });

  it('`subako call` answers structured content, and a missing or mistyped argument as a tool error naming it', () => {
    const ok = subako(['call', project, 'greet', '{"name":"Ada","excited":true}', '--json']);
    assert.equal(ok.status, 0, ok.stderr);
    const outcome = JSON.parse(ok.stdout) as FunctionCallOutcome;
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result!.structuredContent, { message: 'Hello, Ada!' });
    const missing = subako(['call', project, 'greet', '{}']);
    assert.equal(missing.status, 1, 'a tool error exits 1 (cli/call-exit.ts)');
    assert.equal(missing.stdout, 'tool error:\nargument "name" is missing: expected a string\n');
    const mistyped = subako(['call', project, 'greet', '{"name":"Ada","excited":"yes"}']);
    assert.equal(mistyped.stdout, 'tool error:\nargument "excited" must be a boolean, not a string\n');
    const empty = subako(['call', project, 'greet', '{"name":""}']);
    assert.equal(empty.stdout, 'tool error:\nname must not be empty\n');
  });
});

describe('sdk/c/README.md', { skip: NO_TOOLCHAIN }, () => {
  it('its example builds as pasted, adds, and names a missing argument', async () => {
    const readme = readFileSync(join(SDK.sdkDir, 'README.md'), 'utf8');
    const example = /```c\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(example, 'the README has a C example');
    const dir = join(scratch, 'readme-example');
    mkdirSync(dir);
    writeFileSync(join(dir, 'add.c'), example);
    const loaded = await loadBuilt('readme-example', build(dir, [join(dir, 'add.c')]));
    assert.deepEqual(completed(await call(loaded, 'add', { a: 2, b: 0.5 }), 'ok').structuredContent, { sum: 2.5 });
    assert.deepEqual(completed(await call(loaded, 'add', { a: 2 }), 'tool_error').content, [{ type: 'text', text: 'argument "b" is missing: expected a number' }]);
  });
});

describe('the C recipe', () => {
  it('detects .c sources in src/ or at the top, and nothing else', () => {
    assert.equal(cRecipe.detect(['README.md', 'src/main.c', 'subako-package.json']), true);
    assert.equal(cRecipe.detect(['tool.c', 'subako-package.json']), true);
    assert.equal(cRecipe.detect(['Cargo.toml', 'src/lib.rs']), false);
    assert.equal(cRecipe.detect(['vendor/x/y.c']), false);
  });

  it('compiles the files in src/ (sorted), else those at the top, with the SDK on the include path', () => {
    assert.deepEqual(cSources(['src/b.c', 'a.c', 'src/a.c', 'src/x/deep.c', 'src/a.h']), ['src/a.c', 'src/b.c']);
    assert.deepEqual(cSources(['z.c', 'a.c', 'notes.txt']), ['a.c', 'z.c']);
    assert.deepEqual(clangArgs(['src/a.c'], '/sdk/c'), ['--target=wasm32-wasi', '-O2', '-s', '-I/sdk/c', '-o', 'module.wasm', 'src/a.c']);
  });

  it('builds a project of several files: one defines SUBAKO_IMPLEMENTATION, the others include the header alone', { skip: NO_TOOLCHAIN }, async () => {
    const dir = join(scratch, 'two-files');
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src', 'main.c'), [
      '#define SUBAKO_IMPLEMENTATION',
      '#include "subako.h"',
      'void shout(subako_call *call);',
      'static const subako_tool TOOLS[] = {{.name = "shout", .description = "Upper case.", .handler = shout}};',
      'int main(void) { return subako_serve(TOOLS, SUBAKO_COUNT(TOOLS)); }',
    ].join('\n'));
    writeFileSync(join(dir, 'src', 'shout.c'), [
      '#include <ctype.h>',
      '#include "subako.h"',
      'void shout(subako_call *call) {',
      '  const char *text = subako_arg_string(call, "text");',
      '  if (!subako_args_ok(call)) return;',
      '  char *loud = subako_format("%s", text);',
      '  for (char *p = loud; *p; p++) *p = (char)toupper((unsigned char)*p);',
      '  subako_text(call, loud);',
      '}',
    ].join('\n'));
    for (const command of cRecipe.commands(dir, SDK)) {
      assert.deepEqual(command.args.slice(-2), ['src/main.c', 'src/shout.c']);
      const run = spawnSync(command.program, command.args, { cwd: dir, encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
    }
    const loaded = await loadBuilt('two-files', join(dir, 'module.wasm'));
    assert.deepEqual(completed(await call(loaded, 'shout', { text: 'hey' }), 'ok').content, [{ type: 'text', text: 'HEY' }]);
  });

  it('finds every tool on this machine', { skip: NO_TOOLCHAIN }, () => {
    assert.deepEqual(cRecipe.missingTools(scratch, SDK), []);
  });

  it('without them, names each with the one Debian line that installs them', () => {
    const saved = process.env.PATH;
    process.env.PATH = join(scratch, 'empty-path');
    try {
      const missing = cRecipe.missingTools(scratch, { ...SDK, sdkDir: join(scratch, 'no-sdk') });
      assert.deepEqual(missing.map((m) => m.tool.split(' ')[0]), ['clang', 'wasm-ld', 'subako.h']);
      assert.deepEqual(missing.slice(0, 2).map((m) => m.install), [C_INSTALL, C_INSTALL]);
    } finally {
      process.env.PATH = saved;
    }
  });
});
