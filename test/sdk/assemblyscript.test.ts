/**
 * The AssemblyScript SDK (sdk/assemblyscript, `subako-as`) through real guests built from it at test time
 * with the build recipe's own asc command line, run through FunctionHost: every content block, the error
 * results (never a crash), subako_http against a loopback HTTPS server, files on the volume, paging past
 * 16 tools, and JSON that keeps unicode, big numbers and nested `_meta` intact. The template
 * (templates/assemblyscript) is built the same way and passes its own test.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import sharp from 'sharp';
import { FunctionHost, type LoadedPackage } from '../../src/function/host.js';
import type { EgressGrant, FunctionCallContext } from '../../src/function/types.js';
import { HTTP_ERROR_KINDS } from '../../src/sandbox/index.js';
import { assemblyScriptRecipe, AS_OUTPUT } from '../../src/devkit/recipes/assemblyscript.js';
import type { SdkPaths } from '../../src/devkit/recipe.js';
import { REPO_ROOT, fixture } from '../helpers/paths.js';
import { testRoutes } from '../egress/helpers/routes.js';
import { startServer, type TestServer } from '../egress/helpers/servers.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { toolchainMissing } from '../helpers/toolchains.js';

const SDK: SdkPaths = {
  packageRoot: REPO_ROOT,
  sdkDir: join(REPO_ROOT, 'sdk', 'assemblyscript'),
  templateDir: join(REPO_ROOT, 'templates', 'assemblyscript'),
};
/** Why the guests cannot be built here (asc is a devDependency: `npm ci` brings it), or false. */
const NO_TOOLCHAIN = toolchainMissing(assemblyScriptRecipe, SDK);
const FILLERS = Array.from({ length: 20 }, (_, i) => `filler_${String(i).padStart(2, '0')}`);
const PROBE_TOOLS = ['text', 'json', 'echo_arguments', 'typed', 'checked', 'fail', 'image', 'save_image', 'mixed', 'files', 'fetch', 'error_kinds', 'reparse', ...FILLERS];

let scratch: string;
let host: FunctionHost;
let probe: LoadedPackage;
let probeModule: string;
let server: TestServer;
let png: Buffer;

/** Builds the project at `dir` exactly as `subako build` would: the recipe's commands, in the project. */
function build(dir: string): void {
  assert.deepEqual(assemblyScriptRecipe.missingTools(dir, SDK), []);
  for (const command of assemblyScriptRecipe.commands(dir, SDK)) {
    const run = spawnSync(command.program, command.args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...command.env } });
    assert.equal(run.status, 0, `asc failed:\n${run.stdout}\n${run.stderr}`);
  }
  assert.ok(existsSync(join(dir, AS_OUTPUT)), 'the build wrote module.wasm');
}

function context(extra: Partial<FunctionCallContext> = {}): FunctionCallContext {
  return { tmpDir: mkdtempSync(join(scratch, 'tmp-')), ...extra };
}

function egress(): EgressGrant {
  return { allow: [`127.0.0.1:${server.port}`], grants: [], privateDestinations: 'allow', credentials: [], ca: makeTestCa().ca };
}

// asc takes seconds of CPU per build, many more on a loaded machine: the builds get time of their own.
const BUILD_TIMEOUT_MS = 300_000;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'subako-as-sdk-'));
  if (NO_TOOLCHAIN) return; // every suite is skipped, saying why
  const project = join(scratch, 'probe');
  cpSync(fixture('as-sdk', 'probe'), project, { recursive: true });
  build(project);
  probeModule = join(project, AS_OUTPUT);
  host = new FunctionHost({ poolSize: 1 });
  probe = await host.load({ name: 'as-sdk-probe', version: '1.0.0', moduleBytes: readFileSync(probeModule), assetsDir: null });
  server = await startServer(testRoutes);
  png = await sharp({ create: { width: 24, height: 16, channels: 3, background: { r: 200, g: 10, b: 30 } } }).png().toBuffer();
}, { timeout: BUILD_TIMEOUT_MS });

after(async () => {
  await host?.close();
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs the module under `subako wasi` with raw protocol lines on stdin: what the guest itself answers. */
function rawRun(lines: string[]): { answers: any[]; stdout: string; status: number | null } {
  const run = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'wasi', probeModule], { input: lines.map((l) => `${l}\n`).join(''), encoding: 'utf8' });
  const stdout = run.stdout;
  return { answers: stdout.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l)), stdout, status: run.status };
}

function spawnAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const META = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"subako","version":"0.2.3"},"io.modelcontextprotocol/clientCapabilities":{"x":{"deep":[{"\\u00e9":"\\ud83d\\ude00"}]}}}';

describe('the protocol, as the SDK speaks it', { skip: NO_TOOLCHAIN }, () => {
  it('server/discover answers the revision and the tools capability, echoing the id', () => {
    const run = rawRun([`{"jsonrpc":"2.0","id":"discover-1","method":"server/discover","params":{${META}}}`]);
    assert.equal(run.status, 0);
    assert.deepEqual(run.answers, [{ jsonrpc: '2.0', id: 'discover-1', result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } } }]);
  });

  it('tools/list answers 16 tools a page and a nextCursor for the rest', () => {
    const run = rawRun([
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{${META}}}`,
      `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"16",${META}}}`,
      `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"32",${META}}}`,
    ]);
    const pages = run.answers.map((a) => a.result);
    assert.deepEqual(pages.map((p) => p.tools.length), [16, 16, 1]);
    assert.deepEqual(pages.map((p) => p.nextCursor), ['16', '32', undefined]);
    assert.deepEqual(pages.flatMap((p) => p.tools.map((t: { name: string }) => t.name)), PROBE_TOOLS);
    assert.deepEqual(pages[0].tools[0].inputSchema, { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
  });

  it('a notification gets no answer, ping answers {}, and an unknown method or cursor is a JSON-RPC error', () => {
    const run = rawRun([
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
      '{"jsonrpc":"2.0","id":7,"method":"ping"}',
      '{"jsonrpc":"2.0","id":8,"method":"resources/list"}',
      '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"x"}}',
      'not json at all',
    ]);
    assert.equal(run.status, 0, 'the guest exits 0 at the end of stdin');
    assert.deepEqual(run.answers.map((a) => a.id), [7, 8, 9]);
    assert.deepEqual(run.answers[0].result, {});
    assert.equal(run.answers[1].error.code, -32601);
    assert.equal(run.answers[2].error.code, -32602);
  });

  it('arguments reach the handler unchanged: unicode escapes, big numbers and nested _meta beside them', () => {
    const args = '{"big":12345678901234567890,"neg":-9007199254740993,"exp":1.5E+300,"tiny":-0.000001,"s":"Ad\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\n \\u0001 \\u2028","deep":{"_meta":{"a":[{"b":null}]}}}';
    const run = rawRun([`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo_arguments","arguments":${args},${META}}}`]);
    const text = run.answers[0].result.content[0].text as string;
    assert.ok(text.includes('"big":12345678901234567890'), text);
    assert.ok(text.includes('"neg":-9007199254740993'), text);
    assert.ok(text.includes('"exp":1.5E+300'), text);
    assert.deepEqual(JSON.parse(text), JSON.parse(args));
    assert.ok(!run.stdout.slice(0, -1).includes('\n'), 'one answer, one line: the newline in the text stays escaped');
  });

  it('JSON the SDK reads it writes back as the same value (generated values, and edge cases)', async () => {
    const texts = [
      ...fc.sample(fc.jsonValue({ maxDepth: 4 }), { numRuns: 150, seed: 14 }).map((v) => JSON.stringify(v)),
      ...fc.sample(fc.string({ unit: 'binary', maxLength: 30 }), { numRuns: 50, seed: 15 }).map((s) => JSON.stringify(s)),
      '"\\ud800 lone"', '[1e2, -0, 0.5e-3]', ' {"a" : [ true , false , null ] } ', '{"a":1,"a":2}',
    ];
    const outcome = await host.call(probe, 'reparse', { texts }, context());
    assert.equal(outcome.status, 'ok');
    const results = (outcome.result?.structuredContent as { results: { json?: string; error?: string }[] }).results;
    assert.equal(results.length, texts.length);
    results.forEach((r, i) => {
      assert.equal(r.error, undefined, `${texts[i]}: ${r.error}`);
      assert.deepEqual(JSON.parse(r.json!), JSON.parse(texts[i]), texts[i]);
    });
    assert.equal(results[texts.length - 4].json, '"\\ud800 lone"', 'a lone surrogate stays escaped, so the output is UTF-8');
  });

  it('numbers read as the nearest f64, as JavaScript reads them (generated doubles, and the hard cases)', () => {
    const texts = [
      ...fc.sample(fc.double({ noNaN: true, noDefaultInfinity: true }), { numRuns: 1500, seed: 3 }).map((n) => (Object.is(n, -0) ? '0' : String(n))),
      ...fc.sample(fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 25n }), fc.integer({ min: -340, max: 320 })), { numRuns: 500, seed: 4 }).map(([d, e]) => `${d}e${e}`),
      '9.170647750513991e+49', // AssemblyScript's parseFloat reads this as 9.17064775051399e+37
      '1e400', '1e-400', '2.4703282292062328e-324', '2.4703282292062327e-324', '1.7976931348623158e308', '1.7976931348623159e308',
      '9007199254740993', '9007199254740995', '0.1000000000000000055511151231257827021181583404541015625', '2.2250738585072011e-308',
      '1.00000000000000011102230246251565404236316680908203125', '1.00000000000000011102230246251565404236316680908203126',
      `0.${'0'.repeat(300)}1`, `1${'0'.repeat(400)}e-400`, `1${'9'.repeat(900)}`, `0.${'3'.repeat(1000)}`,
    ];
    const lines = texts.map((t, i) => `{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"typed","arguments":{"s":"","n":${t},"i":1,"b":true,"o":{},"a":[],"tags":[]}}}`);
    const run = rawRun(lines);
    assert.equal(run.answers.length, texts.length);
    run.answers.forEach((answer, i) => {
      const want = Number(texts[i]);
      // JSON has no infinity: a number past the f64 range is written back as null.
      assert.equal(answer.result.structuredContent.n, Number.isFinite(want) ? want : null, texts[i].slice(0, 60));
    });
  });

  it('JSON that is not JSON is an error with a position, never a crash', async () => {
    const bad = ['{"a":', '[1,]', '01', '"\\x"', '{"a" 1}', 'tru', '"unterminated', '1.', '-', '[' .repeat(600)];
    const outcome = await host.call(probe, 'reparse', { texts: bad }, context());
    assert.equal(outcome.status, 'ok');
    const results = (outcome.result?.structuredContent as { results: { error?: string }[] }).results;
    for (const [i, r] of results.entries()) assert.match(r.error ?? '', / at \d+$/, bad[i].slice(0, 20));
  });
});

describe('discovery and calls through FunctionHost', { skip: NO_TOOLCHAIN }, () => {
  it('discovery follows the pages and accepts every tool', async () => {
    const discovery = await host.discover(probe);
    assert.deepEqual(discovery.problems, []);
    assert.deepEqual(discovery.tools?.map((t) => t.name), PROBE_TOOLS);
  });

  it('Result.text is a text block', async () => {
    const outcome = await host.call(probe, 'text', { text: 'héllo 😀' }, context());
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result, { content: [{ type: 'text', text: 'héllo 😀' }] });
  });

  it('Result.json is structured content, and the same JSON as text for the model', async () => {
    const value = { a: [1, 2.5, 'x'], b: { c: null, d: true } };
    const outcome = await host.call(probe, 'json', { value }, context());
    assert.deepEqual(outcome.result?.structuredContent, value);
    assert.deepEqual(JSON.parse(outcome.model[0].text as string), value);
    const wrapped = await host.call(probe, 'json', { value: [1, 2] }, context());
    assert.deepEqual(wrapped.result?.structuredContent, { result: [1, 2] });
  });

  it('Result.image is an inline image the model sees', async () => {
    const outcome = await host.call(probe, 'image', { png: png.toString('base64') }, context());
    assert.equal(outcome.status, 'ok');
    assert.equal(outcome.result?.content[1].type, 'image');
    assert.deepEqual(Buffer.from(outcome.result?.content[1].data as string, 'base64'), png);
    assert.equal(outcome.model[1].type, 'image');
    assert.equal(outcome.model[1].mimeType, 'image/png');
  });

  it('a file written to /volume/tmp and returned with Result.link is shown to the model as the image', async () => {
    const ctx = context();
    const outcome = await host.call(probe, 'save_image', { png: png.toString('base64'), path: '/volume/tmp/charts/a chart.png' }, ctx);
    assert.equal(outcome.status, 'ok', JSON.stringify(outcome.model));
    assert.deepEqual(outcome.result?.content, [{ type: 'resource_link', uri: 'volume:///tmp/charts/a%20chart.png', name: 'a chart.png', mimeType: 'image/png' }]);
    assert.deepEqual(readFileSync(join(ctx.tmpDir, 'charts', 'a chart.png')), png);
    assert.equal(outcome.model[0].type, 'image');
    const shown = await sharp(Buffer.from(outcome.model[0].data as string, 'base64')).metadata();
    assert.deepEqual([shown.width, shown.height], [24, 16]);
  });

  it('one result can hold text, an image and a link, with structured content', async () => {
    const outcome = await host.call(probe, 'mixed', { png: png.toString('base64') }, context());
    assert.deepEqual(outcome.result?.content.map((b) => b.type), ['text', 'image', 'resource_link']);
    assert.deepEqual(outcome.result?.structuredContent, { blocks: 3 });
    assert.deepEqual(outcome.model.map((b) => b.type), ['text', 'image', 'image']);
  });

  it('Result.error is a tool error the model reads', async () => {
    const outcome = await host.call(probe, 'fail', { message: 'the order is gone' }, context());
    assert.equal(outcome.status, 'tool_error');
    assert.deepEqual(outcome.result, { content: [{ type: 'text', text: 'the order is gone' }], isError: true });
  });
});

describe('typed arguments', { skip: NO_TOOLCHAIN }, () => {
  const full = { s: 'x', n: 1.5, i: 12345678901234, b: false, o: { k: [1] }, a: [], tags: ['a', 'b'] };

  it('each getter reads its kind, and optional ones fall back to their default', async () => {
    const outcome = await host.call(probe, 'typed', full, context());
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result?.structuredContent, { ...full, os: 'default', oi: 7, on: 0.5, ob: true });
  });

  const cases: [string, Record<string, unknown>, string][] = [
    ['a missing argument', { ...full, s: undefined }, 'missing required argument "s" (a string)'],
    ['a string where a number goes', { ...full, n: '1.5' }, 'argument "n" must be a number, not a string'],
    ['a fraction where an integer goes', { ...full, i: 2.5 }, 'argument "i" must be an integer, not a fraction or an out-of-range number'],
    ['null where a boolean goes', { ...full, b: null }, 'argument "b" must be a boolean, not null'],
    ['an array where an object goes', { ...full, o: [] }, 'argument "o" must be an object, not an array'],
    ['a mistyped optional argument', { ...full, oi: 'seven' }, 'argument "oi" must be an integer, not a string'],
    ['a mistyped array item', { ...full, tags: ['a', 3] }, 'argument "tags[1]" must be a string, not a number'],
  ];
  for (const [what, args, message] of cases) {
    it(`${what} is a tool error that names it`, async () => {
      const outcome = await host.call(probe, 'typed', JSON.parse(JSON.stringify(args)), context());
      assert.equal(outcome.status, 'tool_error');
      assert.deepEqual(outcome.result, { content: [{ type: 'text', text: message }], isError: true });
    });
  }

  it("an author's own check (args.fail) and an unknown tool are tool errors too", async () => {
    const negative = await host.call(probe, 'checked', { count: -1 }, context());
    assert.equal(negative.status, 'tool_error');
    assert.equal(negative.model[0].text, 'count must not be negative');
    assert.equal((await host.call(probe, 'checked', { count: 3 }, context())).model[0].text, 'count 3');
    const unknown = await host.call(probe, 'no_such_tool', {}, context());
    assert.equal(unknown.status, 'tool_error');
    assert.equal(unknown.model[0].text, 'no tool named "no_such_tool" in this package');
  });
});

describe('files', { skip: NO_TOOLCHAIN }, () => {
  it('write, read, exists and remove work by absolute path; bad paths are messages', async () => {
    const assets = mkdtempSync(join(scratch, 'assets-'));
    writeFileSync(join(assets, 'asset.txt'), 'an asset');
    const withAssets = await host.load({ name: 'as-sdk-probe', version: '1.0.0', moduleBytes: readFileSync(probeModule), assetsDir: assets });
    const outcome = await host.call(withAssets, 'files', { path: '/volume/tmp/a/b/notes.txt', text: 'héllo 😀' }, context());
    assert.equal(outcome.status, 'ok', JSON.stringify(outcome.model));
    assert.deepEqual(outcome.result?.structuredContent, {
      written: true, writeMessage: '', read: true, text: 'héllo 😀', existsBefore: true, removed: true, existsAfter: false,
      missingOk: false, missingErrno: 44, missingMessage: 'cannot read /volume/tmp/a/b/notes.txt: NOENT',
      relativeMessage: 'cannot write notes.txt: use an absolute path such as /volume/tmp/notes.txt',
      unmountedMessage: 'cannot write /elsewhere/notes.txt: no mounted directory holds it (use /volume/tmp, /volume/data, /package or /skills)',
      uri: 'volume:///tmp/a%20b/%C3%BC.png',
      asset: 'an asset',
    });
  });
});

describe('subako_http', { skip: NO_TOOLCHAIN }, () => {
  it('a GET reaches the loopback HTTPS server with its headers, and the answer is typed', async () => {
    const outcome = await host.call(probe, 'fetch', { url: server.url('127.0.0.1', '/echo') }, context({ egress: egress() }));
    assert.equal(outcome.status, 'ok', JSON.stringify(outcome.model));
    const answer = outcome.result?.structuredContent as any;
    assert.equal(answer.status, 200);
    assert.equal(answer.contentType, 'application/json');
    assert.equal(answer.json.method, 'GET');
    assert.equal(answer.json.headers['x-probe'], 'as-sdk');
    assert.equal(answer.json.headers.accept, 'text/plain');
  });

  it('a POST sends its text body', async () => {
    const outcome = await host.call(probe, 'fetch', { url: server.url('127.0.0.1', '/echo'), method: 'POST', body: 'héllo' }, context({ egress: egress() }));
    const answer = outcome.result?.structuredContent as any;
    assert.equal(answer.json.method, 'POST');
    assert.equal(answer.json.body, 'héllo');
  });

  it('a JSON body and a file body from the volume are sent as the ABI says', async () => {
    const json = await host.call(probe, 'fetch', { url: server.url('127.0.0.1', '/echo'), method: 'PUT', bodyJson: { order: 1042, note: 'é' } }, context({ egress: egress() }));
    const sent = (json.result?.structuredContent as any).json;
    assert.equal(sent.method, 'PUT');
    assert.deepEqual(JSON.parse(sent.body), { order: 1042, note: 'é' });
    assert.equal(sent.headers['content-type'], 'application/json');
    const ctx = context({ egress: egress() });
    writeFileSync(join(ctx.tmpDir, 'in.txt'), 'from the volume');
    const file = await host.call(probe, 'fetch', { url: server.url('127.0.0.1', '/echo'), method: 'POST', bodyFile: '/volume/tmp/in.txt' }, ctx);
    assert.equal((file.result?.structuredContent as any).json.body, 'from the volume');
  });

  it('followRedirects false answers the redirect itself; by default it is followed', async () => {
    const outcome = await host.call(probe, 'fetch', { url: server.url('127.0.0.1', '/redirect?to=/quiet'), followRedirects: false }, context({ egress: egress() }));
    const answer = outcome.result?.structuredContent as any;
    assert.equal(answer.status, 302);
    assert.equal(answer.text, 'moved');
    const followed = await host.call(probe, 'fetch', { url: server.url('127.0.0.1', '/redirect?to=/quiet') }, context({ egress: egress() }));
    assert.deepEqual([(followed.result?.structuredContent as any).status, (followed.result?.structuredContent as any).text], [200, 'ok']);
  });

  it('saveTo writes the body to the volume and answers its path and size', async () => {
    const ctx = context({ egress: egress() });
    const outcome = await host.call(probe, 'fetch', { url: server.url('127.0.0.1', '/bytes?n=300000'), saveTo: '/volume/tmp/dl/blob.bin' }, ctx);
    const answer = outcome.result?.structuredContent as any;
    assert.equal(answer.savedTo, '/volume/tmp/dl/blob.bin');
    assert.equal(answer.savedBytes, 300000);
    assert.equal(statSync(join(ctx.tmpDir, 'dl', 'blob.bin')).size, 300000);
  });

  const failures: [string, () => Record<string, unknown>, () => FunctionCallContext, string][] = [
    ['a host not in the allowlist', () => ({ url: server.url('127.0.0.2', '/echo') }), () => context({ egress: egress() }), 'host_not_allowed'],
    ['a run with no network at all', () => ({ url: server.url('127.0.0.1', '/echo') }), () => context(), 'host_not_allowed'],
    ['a method the ABI does not offer', () => ({ url: server.url('127.0.0.1', '/echo'), method: 'TRACE' }), () => context({ egress: egress() }), 'invalid_request'],
    ['a connection that breaks', () => ({ url: server.url('127.0.0.1', '/broken') }), () => context({ egress: egress() }), 'connection'],
    ['a request past its timeoutMs', () => ({ url: server.url('127.0.0.1', '/hang'), timeoutMs: 300 }), () => context({ egress: egress() }), 'timeout'],
  ];
  for (const [what, args, ctx, kind] of failures) {
    it(`${what} answers the typed error kind ${kind}, as a tool error`, async () => {
      const outcome = await host.call(probe, 'fetch', args(), ctx());
      assert.equal(outcome.status, 'tool_error', JSON.stringify(outcome.model));
      const answer = outcome.result?.structuredContent as any;
      assert.equal(answer.kind, kind);
      assert.equal(answer.enumName, kind, 'the kind maps to its HttpErrorKind member');
      assert.equal(answer.enum, HTTP_ERROR_KINDS.indexOf(kind as (typeof HTTP_ERROR_KINDS)[number]) + 1);
    });
  }

  it('`subako call --allow` on the package directory reaches the server, as a person would try it', async () => {
    const caFile = join(scratch, 'ca.pem');
    writeFileSync(caFile, makeTestCa().ca);
    const project = join(probeModule, '..');
    const args = JSON.stringify({ url: server.url('127.0.0.1', '/echo') });
    // Not spawnSync: the server answers from this process's event loop.
    const run = await spawnAsync([join(REPO_ROOT, 'bin', 'subako.js'), 'call', project, 'fetch', args, '--json', '--allow', `127.0.0.1:${server.port}`, '--allow-private-destinations'], { NODE_EXTRA_CA_CERTS: caFile });
    assert.equal(run.status, 0, run.stderr);
    const outcome = JSON.parse(run.stdout);
    assert.equal(outcome.status, 'ok', run.stdout);
    assert.equal(outcome.result.structuredContent.json.headers['x-probe'], 'as-sdk');
  });

  it('the SDK knows exactly the error kinds the host answers', async () => {
    const outcome = await host.call(probe, 'error_kinds', {}, context());
    assert.deepEqual((outcome.result?.structuredContent as any).kinds, [...HTTP_ERROR_KINDS]);
  });
});

describe('the template', { skip: NO_TOOLCHAIN }, () => {
  it('templates/assemblyscript builds with the recipe and passes its own test', { timeout: BUILD_TIMEOUT_MS }, () => {
    const project = join(scratch, 'from-template');
    cpSync(SDK.templateDir, project, { recursive: true });
    const fill = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) fill(path);
        else writeFileSync(path, readFileSync(path, 'utf8').replaceAll('{{name}}', 'hello-as').replaceAll('{{description}}', 'Says hello.').replaceAll('{{sdk_dir}}', SDK.sdkDir));
      }
    };
    fill(project);
    renameSync(join(project, '_gitignore'), join(project, '.gitignore'));
    assert.ok(!readFileSync(join(project, 'assembly', 'index.ts'), 'utf8').includes('{{'), 'every placeholder is filled');
    build(project);
    // The project's own runner, not a subtest of this one (NODE_TEST_CONTEXT would make it report to us).
    const { NODE_TEST_CONTEXT: _ours, ...env } = process.env;
    const run = spawnSync(process.execPath, ['--test', 'test/'], { cwd: project, encoding: 'utf8', env });
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /# pass 3/);
  });
});
