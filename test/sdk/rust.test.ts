/**
 * The Rust SDK (sdk/rust) through real guests built from it at test time with the Rust recipe's own
 * commands (the toolchain it finds on PATH: Debian's cargo with wasm32-wasi here): one guest with a tool per SDK feature
 * (test/fixtures/rust/sdk-guest) and the template `subako init --template rust` copies. Both builds share
 * one cargo target folder (each project's target/ is a link to it), so serde and serde_json compile once,
 * and only once across runs of the suite.
 *
 * The guests run through FunctionHost as a session's calls do (every content block, the error paths that
 * stay results, subako_http against a loopback HTTPS server, files under /volume), and through a bare
 * sandbox for the protocol itself (paging, notifications, refusals). Without a Rust toolchain for WASI they
 * skip, saying what to install; how the toolchain is found on PATH is tested either way.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { WASI } from 'node:wasi';
import sharp from 'sharp';
import { FunctionHost, type EgressGrant, type FunctionCallContext, type FunctionCallOutcome, type LoadedPackage } from '../../src/function/index.js';
import { HTTP_ERROR_KINDS, SandboxPool, type ModuleHandle } from '../../src/sandbox/index.js';
import { rustCommands, rustRecipe, RUST_INSTALL } from '../../src/devkit/recipes/rust.js';
import { findRustToolchain, RUST_WASM_TARGETS } from '../../src/devkit/recipes/rust-toolchain.js';
import { allOnPath } from '../../src/devkit/recipes/on-path.js';
import { checkoutSdk, toolchainMissing } from '../helpers/toolchains.js';
import { REPO_ROOT, fixture } from '../helpers/paths.js';
import { startServer, type Route, type TestServer } from '../egress/helpers/servers.js';
import { testRoutes } from '../egress/helpers/routes.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { wat } from '../helpers/wat.js';

const MIB = 1024 * 1024;
const SDK_DIR = join(REPO_ROOT, 'sdk', 'rust');
const TEMPLATE_DIR = join(REPO_ROOT, 'templates', 'rust');
/** Why the guests cannot be built here, or false. */
const NO_TOOLCHAIN = toolchainMissing(rustRecipe, checkoutSdk('rust'));
/** Kept between runs on purpose: cargo's own fingerprints decide what to rebuild, so a later run compiles only the guests. */
const SHARED_TARGET = join(tmpdir(), `subako-rust-sdk-target-${process.getuid?.() ?? 0}`);
const PROTOCOL_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(program: string, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd: options.cwd, env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Fills a template's placeholders the way `subako init` does (the values here need no escaping). */
function fill(dir: string, values: Record<string, string>): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) fill(path, values);
    else writeFileSync(path, readFileSync(path, 'utf8').replace(/\{\{(name|description|sdk_dir)\}\}/g, (_, key: string) => values[key]));
  }
}

/** Runs the recipe's commands in `dir` (its target/ linked to the shared one); the built module's bytes. */
async function buildWithRecipe(dir: string): Promise<{ bytes: Buffer; ms: number }> {
  symlinkSync(SHARED_TARGET, join(dir, 'target'));
  const started = performance.now();
  const search = findRustToolchain();
  assert.ok('toolchain' in search, 'the toolchain missingTools found');
  for (const command of rustCommands(dir, search.toolchain)) {
    const ran = await run(command.program, command.args, { cwd: dir, env: command.env });
    assert.equal(ran.code, 0, `${command.program} ${command.args[0]} failed:\n${ran.stderr}`);
  }
  return { bytes: readFileSync(join(dir, 'module.wasm')), ms: performance.now() - started };
}

let scratch: string;
let guestDir: string;
let templateDir: string;
let guestBytes: Buffer;
let templateBytes: Buffer;
const buildMs: Record<string, number> = {};
let host: FunctionHost;
let guest: LoadedPackage;
let server: TestServer;
let pngFromServer: Buffer;
let calls = 0;

before(async () => {
  if (NO_TOOLCHAIN) return; // every suite that needs the builds is skipped, saying why
  mkdirSync(SHARED_TARGET, { recursive: true });
  scratch = mkdtempSync(join(tmpdir(), 'subako-rust-sdk-'));

  guestDir = join(scratch, 'guest');
  cpSync(fixture('rust', 'sdk-guest'), guestDir, { recursive: true });
  // The template's cargo config is the one place that says where Debian's crates are.
  cpSync(join(TEMPLATE_DIR, '.cargo'), join(guestDir, '.cargo'), { recursive: true });
  fill(guestDir, { sdk_dir: SDK_DIR });
  // One build at a time: both write target/<target>/release/module.wasm, which each copies out at once.
  const builtGuest = await buildWithRecipe(guestDir);
  guestBytes = builtGuest.bytes;
  buildMs.guest = builtGuest.ms;

  // A package name may start with a digit; a crate name may not: the template's Cargo.toml must cope.
  templateDir = join(scratch, '3d-rust-template');
  cpSync(TEMPLATE_DIR, templateDir, { recursive: true });
  fill(templateDir, { name: '3d-rust-template', description: 'The Rust template, built by the SDK test.', sdk_dir: SDK_DIR });
  const builtTemplate = await buildWithRecipe(templateDir);
  templateBytes = builtTemplate.bytes;
  buildMs.template = builtTemplate.ms;

  host = new FunctionHost({ poolSize: 1 });
  guest = await host.load({ name: 'sdk-guest', version: '0.1.0', moduleBytes: guestBytes, assetsDir: null });

  pngFromServer = await sharp({ create: { width: 30, height: 20, channels: 3, background: { r: 9, g: 90, b: 200 } } }).png().toBuffer();
  const route: Route = (req, res, arrival) => {
    if (req.url === '/image.png') {
      res.setHeader('content-type', 'image/png');
      res.end(pngFromServer);
      return;
    }
    return testRoutes(req, res, arrival);
  };
  server = await startServer(route);
});

after(async () => {
  await host?.close();
  await server?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** A fresh volume per call: /volume/tmp (and /volume/data when asked) as new host folders. */
function volume(options: { data?: boolean } = {}): { tmpDir: string; dataDir?: string } {
  calls += 1;
  const tmpDir = join(scratch, `volume-${calls}`, 'tmp');
  mkdirSync(tmpDir, { recursive: true });
  if (!options.data) return { tmpDir };
  const dataDir = join(scratch, `volume-${calls}`, 'data');
  mkdirSync(dataDir, { recursive: true });
  return { tmpDir, dataDir };
}

const loopbackEgress = (): EgressGrant => ({
  allow: [`localhost:${server.port}`],
  grants: [],
  credentials: [],
  privateDestinations: 'allow',
  ca: makeTestCa().ca,
});

function call(tool: string, args: Record<string, unknown>, ctx: Partial<FunctionCallContext> = {}): Promise<FunctionCallOutcome> {
  return host.call(guest, tool, args, { ...volume(), ...ctx });
}

/** The text of the first block, which every result here has. */
const firstText = (outcome: FunctionCallOutcome): string => (outcome.result?.content[0] as unknown as { text: string }).text;

/** Runs the guest in a bare sandbox with these stdin lines; its answers, parsed, and its exit. */
async function converse(lines: string[]): Promise<{ answers: any[]; stdout: string; code: number | null; stderr: string }> {
  const pool = new SandboxPool({ size: 1 });
  try {
    const module: ModuleHandle = await pool.compile(guestBytes, { memoryBytes: 64 * MIB });
    let stdout = '';
    let stderr = '';
    const handle = pool.run(module, {
      args: ['sdk-guest'],
      env: [],
      preopens: [],
      limits: { timeoutMs: 20_000, memoryBytes: 64 * MIB, stdoutBytes: MIB, stderrTailBytes: 4096, writeBudgetBytes: MIB },
      stdin: Buffer.from(lines.map((line) => `${line}\n`).join('')),
      onStdout: (chunk) => (stdout += Buffer.from(chunk).toString('utf8')),
      onStderr: (chunk) => (stderr += Buffer.from(chunk).toString('utf8')),
    });
    handle.closeStdin();
    const result = await handle.result;
    const answers = stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line));
    return { answers, stdout, stderr, code: result.outcome.kind === 'exit' ? result.outcome.code : null };
  } finally {
    await pool.close();
  }
}

const request = (id: string | number, method: string, params: Record<string, unknown> = {}): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: PROTOCOL_META } });

/** The WASI targets rustc's own sysroot has a standard library for (looked at here, not through the recipe). */
function wasiTargetsOf(rustc: string): string[] {
  const sysroot = spawnSync(rustc, ['--print', 'sysroot'], { encoding: 'utf8' }).stdout.trim();
  return RUST_WASM_TARGETS.filter((target) => {
    try {
      return readdirSync(join(sysroot, 'lib', 'rustlib', target, 'lib')).some((name) => name.startsWith('libstd-'));
    } catch {
      return false; // no such folder: not installed
    }
  });
}

describe('finding the Rust toolchain on PATH', () => {
  const rustcs = allOnPath('rustc', process.env.PATH);
  const able = rustcs.find((rustc) => wasiTargetsOf(rustc).length > 0);
  const unable = able ? rustcs.slice(0, rustcs.indexOf(able)) : rustcs;
  const emptyFolder = (t: { after(fn: () => void): void }): string => {
    const dir = mkdtempSync(join(tmpdir(), 'subako-no-rust-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };

  test('the toolchain is the first rustc on PATH with a WASI standard library, and the cargo beside it', { skip: able ? false : 'no rustc on this PATH has a WASI standard library' }, () => {
    const search = findRustToolchain();
    assert.ok('toolchain' in search, JSON.stringify(search));
    assert.equal(search.toolchain.rustc, able);
    assert.equal(search.toolchain.cargo, join(dirname(able!), 'cargo'));
    assert.ok(wasiTargetsOf(able!).includes(search.toolchain.target), `${able} has ${search.toolchain.target}`);
  });

  test("a rustc on PATH without one is passed over: rustup's, first, gives way to Debian's", { skip: able && unable.length > 0 ? false : 'this PATH has no rustc without a WASI standard library ahead of one with it' }, (t) => {
    const search = findRustToolchain({ PATH: [dirname(unable[0]), dirname(able!)].join(delimiter) });
    assert.ok('toolchain' in search, JSON.stringify(search));
    assert.equal(search.toolchain.rustc, join(dirname(able!), 'rustc'));
    // Alone on PATH it is no toolchain, and the build says which rustc lacks what, with the line that installs it.
    const saved = process.env.PATH;
    process.env.PATH = [dirname(unable[0]), emptyFolder(t)].join(delimiter);
    try {
      const missing = rustRecipe.missingTools(TEMPLATE_DIR, checkoutSdk('rust')).filter((m) => !m.tool.startsWith('the serde'));
      assert.deepEqual(missing, [{ tool: `a WASI standard library for rustc (wasm32-wasip1 or wasm32-wasi; ${join(dirname(unable[0]), 'rustc')} has none)`, install: RUST_INSTALL }]);
      assert.deepEqual(rustRecipe.commands(TEMPLATE_DIR, checkoutSdk('rust')), []);
    } finally {
      process.env.PATH = saved;
    }
  });

  test('without rustc and cargo on PATH, the build names both, with the one line that installs them', (t) => {
    const saved = process.env.PATH;
    process.env.PATH = emptyFolder(t);
    try {
      const missing = rustRecipe.missingTools(TEMPLATE_DIR, checkoutSdk('rust'));
      assert.deepEqual(missing.slice(0, 2), [{ tool: 'cargo', install: RUST_INSTALL }, { tool: 'rustc', install: RUST_INSTALL }]);
      assert.deepEqual(rustRecipe.commands(TEMPLATE_DIR, checkoutSdk('rust')), []);
    } finally {
      process.env.PATH = saved;
    }
  });

  test('RUSTC names the rustc (cargo beside it), CARGO the cargo, whatever PATH holds', { skip: able ? false : 'no rustc on this PATH has a WASI standard library' }, (t) => {
    const nothing = emptyFolder(t);
    const named = findRustToolchain({ PATH: nothing, RUSTC: able });
    assert.ok('toolchain' in named, JSON.stringify(named));
    assert.deepEqual([named.toolchain.rustc, named.toolchain.cargo], [able, join(dirname(able!), 'cargo')]);
    assert.deepEqual(findRustToolchain({ PATH: nothing, RUSTC: able, CARGO: join(nothing, 'cargo') }), { missing: { cargo: true, rustc: [] } });
    if (unable.length > 0) {
      assert.deepEqual(findRustToolchain({ PATH: process.env.PATH, RUSTC: unable[0] }), { missing: { cargo: false, rustc: [unable[0]] } });
    }
  });
});

describe('building with the Rust recipe', () => {
  test('a folder with a Cargo.toml is a Rust project, and nothing else is', () => {
    assert.equal(rustRecipe.detect(['Cargo.toml', 'src/main.rs']), true);
    assert.equal(rustRecipe.detect(['src/main.c', 'subako-package.json']), false);
    assert.equal(rustRecipe.detect(['sub/Cargo.toml']), false);
  });

  test('an installation without the SDK crate is told so, with what to install', { skip: NO_TOOLCHAIN }, () => {
    const missing = rustRecipe.missingTools(scratch, { packageRoot: scratch, sdkDir: join(scratch, 'no-sdk'), templateDir: TEMPLATE_DIR });
    assert.deepEqual(missing.map((m) => m.tool), [`the subako crate (not in ${join(scratch, 'no-sdk')})`]);
  });

  test('a project whose binary is not named module is told, in one line, how to name it', async (t) => {
    const empty = mkdtempSync(join(tmpdir(), 'subako-no-module-'));
    t.after(() => rmSync(empty, { recursive: true, force: true }));
    const copy = rustCommands(empty, { cargo: 'cargo', rustc: 'rustc', target: 'wasm32-wasi', linker: true })[1];
    const ran = await run(copy.program, copy.args, { cwd: empty });
    assert.equal(ran.code, 1);
    assert.equal(ran.stderr.trim().split('\n').length, 1);
    assert.match(ran.stderr, /name the binary "module" in Cargo\.toml/);
    assert.equal(existsSync(join(empty, 'module.wasm')), false);
  });

  test('the commands build a module for the guest and the template, and copy it to module.wasm', { skip: NO_TOOLCHAIN }, (t) => {
    t.diagnostic(`builds with a shared target folder: guest ${Math.round(buildMs.guest)} ms (${guestBytes.length} bytes), template ${Math.round(buildMs.template)} ms (${templateBytes.length} bytes)`);
    for (const bytes of [guestBytes, templateBytes]) assert.deepEqual([...bytes.subarray(0, 8)], [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
    assert.ok(existsSync(join(templateDir, 'module.wasm')));
    // The profile keeps it small: lto, opt-level "s", stripped.
    assert.ok(templateBytes.length < 400_000, `the template's module is ${templateBytes.length} bytes`);
  });
});

describe('discovery: server/discover, then tools/list page by page', { skip: NO_TOOLCHAIN }, () => {
  test('every tool is discovered, in order, across two pages', async () => {
    const discovery = await host.discover(guest);
    assert.deepEqual(discovery.problems, []);
    const names = discovery.tools!.map((tool) => tool.name);
    assert.equal(names.length, 23);
    assert.deepEqual(names.slice(0, 3), ['text', 'structured', 'not_an_object']);
    assert.deepEqual(names.slice(-4), ['filler_0', 'filler_1', 'filler_2', 'filler_3']);
    const structured = discovery.tools!.find((tool) => tool.name === 'structured')!;
    assert.deepEqual(structured.inputSchema, { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] });
    assert.equal((structured.outputSchema as { type: string }).type, 'object');
  });

  test('a page holds 16 tools and a nextCursor; the last page has none; a cursor it never gave is refused', async () => {
    const { answers, code } = await converse([
      request('d', 'server/discover'),
      request('p1', 'tools/list'),
      request('p2', 'tools/list', { cursor: '16' }),
      request('bad', 'tools/list', { cursor: 'page-two' }),
    ]);
    assert.equal(code, 0);
    assert.deepEqual(answers[0], { jsonrpc: '2.0', id: 'd', result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete' } });
    assert.equal(answers[1].result.tools.length, 16);
    assert.equal(answers[1].result.nextCursor, '16');
    assert.equal(answers[2].result.tools.length, 7);
    assert.equal(answers[2].result.nextCursor, undefined);
    assert.equal(answers[3].id, 'bad');
    assert.equal(answers[3].error.code, -32602);
  });

  test('notifications, blank lines and lines that are not JSON get no answer; ids are echoed as given', async () => {
    const { answers, code, stderr } = await converse([
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
      '',
      'this is not json',
      JSON.stringify({ jsonrpc: '2.0', id: 7, result: {} }),
      request(42, 'tools/call', { name: 'text', arguments: { text: 'after the noise' } }),
    ]);
    assert.equal(code, 0);
    assert.equal(answers.length, 1);
    assert.equal(answers[0].id, 42);
    assert.deepEqual(answers[0].result.content, [{ type: 'text', text: 'after the noise' }]);
    assert.match(stderr, /not JSON/);
  });

  test('another protocol revision and an unknown method are JSON-RPC errors, as the protocol says', async () => {
    const { answers } = await converse([
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { ...PROTOCOL_META, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } } }),
      request(2, 'resources/list'),
    ]);
    assert.equal(answers[0].error.code, -32022);
    assert.deepEqual(answers[0].error.data, { supported: ['2026-07-28'], requested: '2025-11-25' });
    assert.equal(answers[1].error.code, -32601);
  });

  test('a tools/call without a name, or with arguments that are not an object, is a result with isError', async () => {
    const { answers } = await converse([
      request(1, 'tools/call', { arguments: {} }),
      request(2, 'tools/call', { name: 'text', arguments: 'text' }),
    ]);
    assert.equal(answers[0].result.isError, true);
    assert.match(answers[0].result.content[0].text, /name/);
    assert.equal(answers[1].result.isError, true);
    assert.equal(answers[1].result.content[0].text, 'arguments must be a JSON object, not a string');
  });
});

describe('content blocks', { skip: NO_TOOLCHAIN }, () => {
  test('text, with a log line on stderr that does not touch the protocol', async () => {
    const outcome = await call('text', { text: 'hello' });
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result?.content, [{ type: 'text', text: 'hello' }]);
    assert.match(outcome.stderr, /text: 5 bytes/);
  });

  test('structured content: an object as structuredContent and as the JSON text the model reads', async () => {
    const outcome = await call('structured', { name: 'Ada ✓' });
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result?.structuredContent, { name: 'Ada ✓', length: 5 });
    assert.deepEqual(JSON.parse(firstText(outcome)), { name: 'Ada ✓', length: 5 });
  });

  test('JSON that is not an object is text only (structuredContent is always an object)', async () => {
    const outcome = await call('not_an_object', {});
    assert.equal(outcome.result?.structuredContent, undefined);
    assert.equal(firstText(outcome), '[1,2,3]');
  });

  test('an inline image is shown to the model as that image', async () => {
    const outcome = await call('image', { width: 7, height: 5 });
    assert.equal(outcome.status, 'ok');
    const block = outcome.model[0] as { type: string; mimeType: string; data: string };
    assert.equal(block.type, 'image');
    assert.equal(block.mimeType, 'image/png');
    const meta = await sharp(Buffer.from(block.data, 'base64')).metadata();
    assert.deepEqual([meta.width, meta.height], [7, 5]);
  });

  test('a file written to /volume/tmp and linked is a resource_link the model sees as the image', async () => {
    const mounts = volume();
    const outcome = await host.call(guest, 'chart', { width: 20, height: 10, path: '/volume/tmp/my charts/a b.png' }, mounts);
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result?.content[1], { type: 'resource_link', uri: 'volume:///tmp/my%20charts/a%20b.png', name: 'a b.png', mimeType: 'image/png' });
    assert.ok(existsSync(join(mounts.tmpDir, 'my charts', 'a b.png')));
    const shown = outcome.model[1] as { type: string; data: string };
    assert.equal(shown.type, 'image');
    const meta = await sharp(Buffer.from(shown.data, 'base64')).metadata();
    assert.deepEqual([meta.width, meta.height], [20, 10]);
  });

  test('a link to any other URI is a resource_link named by its last segment', async () => {
    const outcome = await call('link', { uri: 'https://example.com/reports/q3.pdf' });
    assert.deepEqual(outcome.result?.content, [{ type: 'resource_link', uri: 'https://example.com/reports/q3.pdf', name: 'q3.pdf' }]);
    assert.match(JSON.stringify(outcome.model), /q3\.pdf/);
  });

  test('one result can carry text, an image, a link and structured content', async () => {
    const outcome = await call('mixed', {});
    assert.deepEqual(outcome.result?.content.map((block) => block.type), ['text', 'image', 'resource_link']);
    assert.deepEqual(outcome.result?.structuredContent, { blocks: 3 });
  });
});

describe('errors that stay results (isError, never a crash)', { skip: NO_TOOLCHAIN }, () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ['a missing argument names it', 'text', {}, 'argument "text" is missing: expected a string'],
    ['a mistyped argument names it and what came', 'text', { text: 12 }, 'argument "text" must be a string, not a number'],
    ['a fraction is not an integer', 'fail', { n: 2.5 }, 'argument "n" must be an integer, not a number with a fraction'],
    ['an Err from the handler is the message', 'fail', { n: -1 }, 'n must be 0 or more, got -1'],
    ['an error result built by hand', 'error_result', { why: 'testing' }, 'refused: testing'],
    ['an unknown tool names the tools there are', 'no_such_tool', {}, 'unknown tool "no_such_tool"; this package has: text, structured,'],
    ['a typed read through serde names the argument', 'typed', { s: 'a', i: 1, x: 1, b: true, a: [], o: {}, ids: ['x'] }, 'argument "ids" is not valid: invalid type: string "x", expected u32'],
    ['an optional argument is still checked when given', 'typed', { s: 'a', i: 1, x: 1, b: true, a: [], o: {}, ids: [], small: 300 }, 'argument "small" is not valid'],
    ['the arguments as a whole are checked too', 'parse', { a: 1, b: 'two' }, 'the arguments are not valid: invalid type: string "two", expected u32'],
    ['a file that is not there names its path', 'read_file', { path: '/volume/tmp/nope.txt' }, 'could not read /volume/tmp/nope.txt: '],
    ['a handler check on a value', 'image', { width: 0 }, 'width and height must be 1 to 512, got 0x3'],
    ['HTTP without network access names the kind', 'http_get', { url: 'https://example.com/' }, 'HTTP request failed (host_not_allowed): '],
  ];
  for (const [name, tool, args, expected] of cases) {
    test(name, async () => {
      const outcome = await call(tool, args);
      assert.equal(outcome.status, 'tool_error', JSON.stringify(outcome.crash));
      assert.equal(outcome.result?.isError, true);
      assert.ok(firstText(outcome).startsWith(expected), `${firstText(outcome)} should start with ${expected}`);
    });
  }

  test('every typed read answers when the arguments are right', async () => {
    const outcome = await call('typed', { s: 'a', i: 3.0, x: 1.5, b: false, a: [1, 2], o: { k: 1 }, ids: [4, 5], note: null, small: 7 });
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result?.structuredContent, { s: 'a', i: 3, x: 1.5, b: false, a: 2, o: ['k'], ids: [4, 5], note: null, small: 7 });
  });

  test('a panic is the one failure that is not a result: a crash, with the panic message from stderr', async () => {
    const outcome = await call('panic', {});
    assert.equal(outcome.status, 'crash');
    assert.equal(outcome.crash?.reason, 'trap');
    assert.match(outcome.crash!.stderr, /the guest gave up on purpose/);
  });
});

describe('subako_http against a loopback HTTPS server', { skip: NO_TOOLCHAIN }, () => {
  test('a GET answers status, headers and the inline body, and the call logs it', async () => {
    const outcome = await call('http_get', { url: server.url('localhost', '/echo?q=1') }, { egress: loopbackEgress() });
    assert.equal(outcome.status, 'ok', firstText(outcome));
    const answer = outcome.result?.structuredContent as { status: number; content_type: string; body: string; success: boolean };
    assert.equal(answer.status, 200);
    assert.equal(answer.content_type, 'application/json');
    assert.equal(answer.success, true);
    assert.deepEqual([JSON.parse(answer.body).method, JSON.parse(answer.body).path], ['GET', '/echo?q=1']);
    assert.deepEqual(outcome.egress.map((entry) => [entry.method, entry.status]), [['GET', 200]]);
  });

  test('a POST with a JSON body and a header arrives as sent; the answer parses as JSON', async () => {
    const outcome = await call('http_request', { method: 'post', url: server.url('localhost', '/echo'), headers: { 'X-Order': '1042' }, json: { order: 1042 } }, { egress: loopbackEgress() });
    const answer = outcome.result?.structuredContent as { status: number; parsed: { method: string; headers: Record<string, string>; body: string } };
    assert.equal(answer.status, 200);
    assert.equal(answer.parsed.method, 'POST');
    assert.equal(answer.parsed.headers['x-order'], '1042');
    assert.equal(answer.parsed.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(answer.parsed.body), { order: 1042 });
  });

  test('a text body goes as text/plain', async () => {
    const outcome = await call('http_request', { method: 'PUT', url: server.url('localhost', '/echo'), text: 'plain words' }, { egress: loopbackEgress() });
    const parsed = (outcome.result?.structuredContent as { parsed: { method: string; headers: Record<string, string>; body: string } }).parsed;
    assert.equal(parsed.method, 'PUT');
    assert.match(parsed.headers['content-type'], /^text\/plain/);
    assert.equal(parsed.body, 'plain words');
  });

  test('a body saved to a volume file is answered as its path and size', async () => {
    const mounts = volume();
    const outcome = await host.call(guest, 'http_request', { url: server.url('localhost', '/bytes?n=300000'), save_to: '/volume/tmp/dl/blob.bin' }, { ...mounts, egress: loopbackEgress() });
    assert.deepEqual((outcome.result?.structuredContent as { body: unknown }).body, { file: '/volume/tmp/dl/blob.bin', bytes: 300000 });
    assert.equal(readFileSync(join(mounts.tmpDir, 'dl', 'blob.bin')).length, 300000);
  });

  test('a volume file sent as the body arrives whole', async () => {
    const mounts = volume();
    await host.call(guest, 'write_file', { path: '/volume/tmp/up/payload.txt', contents: 'from the volume' }, mounts);
    const outcome = await host.call(guest, 'http_request', { method: 'POST', url: server.url('localhost', '/echo'), file_body: '/volume/tmp/up/payload.txt' }, { ...mounts, egress: loopbackEgress() });
    assert.equal((outcome.result?.structuredContent as { parsed: { body: string } }).parsed.body, 'from the volume');
  });

  test('an image downloaded to the volume and linked is shown to the model', async () => {
    const outcome = await call('http_image', { url: server.url('localhost', '/image.png') }, { egress: loopbackEgress() });
    assert.equal(outcome.status, 'ok', firstText(outcome));
    assert.equal((outcome.result?.content[0] as unknown as { uri: string }).uri, 'volume:///tmp/downloads/remote%20image.png');
    const shown = outcome.model[0] as { type: string; data: string };
    assert.equal(shown.type, 'image');
    assert.deepEqual(Buffer.from(shown.data, 'base64'), pngFromServer);
  });

  test('a redirect not followed is an answer with its status', async () => {
    const outcome = await call('http_request', { url: server.url('localhost', '/redirect?to=/quiet&status=302'), follow_redirects: false }, { egress: loopbackEgress() });
    assert.equal((outcome.result?.structuredContent as { status: number }).status, 302);
  });

  test("the SDK knows every error kind in the host's own list, and keeps one it does not know by name", async () => {
    const kinds = [...HTTP_ERROR_KINDS, 'from_the_future'];
    const answers = kinds.map((kind) => JSON.stringify({ error: { kind, message: `a ${kind}` } }));
    const outcome = await call('read_answers', { answers });
    const read = (outcome.result?.structuredContent as { read: { kind: string; known: boolean; message: string }[] }).read;
    assert.deepEqual(read, kinds.map((kind) => ({ kind, known: kind !== 'from_the_future', message: `a ${kind}` })));
  });

  const kinds: [string, Record<string, unknown>, string, Partial<EgressGrant>][] = [
    ['a host outside the allowlist', { url: 'https://other.test/' }, 'host_not_allowed', {}],
    ['loopback without private destinations', { url: '' }, 'forbidden_destination', { privateDestinations: 'deny' }],
    ['a request past its timeout', { url: '/hang', timeout_ms: 300 }, 'timeout', {}],
    ['an inline body that is not UTF-8', { url: '/binary' }, 'not_text', {}],
    ['a method the ABI does not have', { url: '/quiet', method: 'TRACE' }, 'invalid_request', {}],
    ['an output path outside the volume', { url: '/quiet', save_to: '/package/out.bin' }, 'bad_path', {}],
  ];
  for (const [name, args, kind, grant] of kinds) {
    test(`the typed error kind: ${name} is ${kind}`, async () => {
      const url = (args.url as string).startsWith('https://') ? args.url : server.url('localhost', (args.url as string) || '/quiet');
      const outcome = await call('http_request', { ...args, url }, { egress: { ...loopbackEgress(), ...grant } });
      assert.equal(outcome.status, 'tool_error');
      assert.deepEqual(outcome.result?.structuredContent, { kind, known_kind: true, timeout: kind === 'timeout' });
      assert.ok(firstText(outcome).startsWith(`${kind}: `), firstText(outcome));
    });
  }
});

describe('progress', { skip: NO_TOOLCHAIN }, () => {
  test('a caller that asks for progress is told each step, the last one before the result', async () => {
    const updates: [number, number | undefined, string | undefined][] = [];
    const outcome = await call('steps', { steps: 3 }, { progress: (done, total, message) => updates.push([done, total, message]) });
    assert.equal(outcome.status, 'ok');
    assert.ok(updates.length >= 1);
    assert.deepEqual(updates.at(-1), [3, 3, 'step 3']);
    assert.deepEqual(updates.map(([done]) => done), [...updates.map(([done]) => done)].sort((a, b) => a - b));
  });

  test('a request without a progressToken gets no notifications, only its answer', async () => {
    const { answers, code } = await converse([request(1, 'tools/call', { name: 'steps', arguments: { steps: 3 } })]);
    assert.equal(code, 0);
    assert.deepEqual(answers.map((answer) => answer.id), [1]);
  });

  test('with a progressToken, the notifications carry it and precede the answer', async () => {
    const line = JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'tools/call', params: { name: 'steps', arguments: { steps: 2 }, _meta: { progressToken: 'tok-1', ...PROTOCOL_META } } });
    const { answers } = await converse([line]);
    assert.deepEqual(answers, [
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok-1', progress: 1, total: 2, message: 'step 1' } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok-1', progress: 2, total: 2, message: 'step 2' } },
      { jsonrpc: '2.0', id: 'p', result: { content: [{ type: 'text', text: '2 steps done' }], resultType: 'complete' } },
    ]);
  });
});

describe('files under /volume and /package', { skip: NO_TOOLCHAIN }, () => {
  test('a file written to /volume/data is read back, listed, and lands in the session folder', async () => {
    const mounts = volume({ data: true });
    const outcome = await host.call(guest, 'write_file', { path: '/volume/data/notes/to day.txt', contents: 'kept ✓' }, mounts);
    assert.equal(outcome.status, 'ok', firstText(outcome));
    assert.deepEqual(outcome.result?.structuredContent, { read_back: 'kept ✓', listing: ['to day.txt'], uri: 'volume:///data/notes/to%20day.txt' });
    assert.equal(readFileSync(join(mounts.dataDir!, 'notes', 'to day.txt'), 'utf8'), 'kept ✓');
  });

  test("the package's assets are read at /package", async () => {
    const assets = join(scratch, 'assets');
    mkdirSync(assets, { recursive: true });
    writeFileSync(join(assets, 'hello.txt'), 'an asset');
    const withAssets = await host.load({ name: 'sdk-guest', version: '0.1.0', moduleBytes: guestBytes, assetsDir: assets });
    const outcome = await host.call(withAssets, 'read_file', { path: '/package/hello.txt' }, volume());
    assert.equal(firstText(outcome), 'an asset');
  });

  test('/volume/data is not there unless the agent enables it: the error names the path', async () => {
    const outcome = await call('write_file', { path: '/volume/data/x.txt', contents: 'x' });
    assert.equal(outcome.status, 'tool_error');
    assert.match(firstText(outcome), /^could not (create the folder of|write) \/volume\/data\/x\.txt: /);
  });
});

describe('the template subako init --template rust copies', { skip: NO_TOOLCHAIN }, () => {
  let template: LoadedPackage;
  before(async () => {
    template = await host.load({ name: '3d-rust-template', version: '0.1.0', moduleBytes: templateBytes, assetsDir: null });
  });

  test('subako check accepts the built project and lists greet', async () => {
    const ran = await run(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'check', templateDir], { cwd: templateDir });
    assert.equal(ran.code, 0, ran.stderr + ran.stdout);
    assert.match(ran.stdout, /greet/);
  });

  test('greet checks its arguments and answers structured content', async () => {
    const ok = await host.call(template, 'greet', { name: 'Ada', excited: true }, volume());
    assert.deepEqual(ok.result?.structuredContent, { message: 'Hello, Ada!' });
    const plain = await host.call(template, 'greet', { name: 'Ada' }, volume());
    assert.deepEqual(plain.result?.structuredContent, { message: 'Hello, Ada.' });
    for (const [args, expected] of [
      [{}, 'argument "name" is missing'],
      [{ name: 'Ada', excited: 'yes' }, 'argument "excited" must be a boolean'],
      [{ name: '' }, 'name must not be empty'],
    ] as const) {
      const outcome = await host.call(template, 'greet', args, volume());
      assert.equal(outcome.status, 'tool_error');
      assert.ok(firstText(outcome).startsWith(expected), firstText(outcome));
    }
  });

  test("the example tool is at most about 40 lines of the author's code", () => {
    const lines = readFileSync(join(TEMPLATE_DIR, 'src', 'main.rs'), 'utf8').split('\n').filter((line) => line.trim() !== '');
    assert.ok(lines.length <= 40, `${lines.length} lines`);
  });
});

describe("the template's tests/subako_http_stub.wat, for WASI runtimes other than subako", { skip: NO_TOOLCHAIN }, () => {
  test('linked in as subako_http, it lets a module that uses HTTP load and answer: its requests fail as abi errors', async () => {
    const stub = new WebAssembly.Instance(new WebAssembly.Module(await wat(readFileSync(join(TEMPLATE_DIR, 'tests', 'subako_http_stub.wat'), 'utf8'))));
    const dir = mkdtempSync(join(scratch, 'stub-'));
    writeFileSync(join(dir, 'in'), `${request(1, 'tools/call', { name: 'http_get', arguments: { url: 'https://example.com/' } })}\n${request(2, 'tools/call', { name: 'text', arguments: { text: 'still here' } })}\n`);
    const stdin = openSync(join(dir, 'in'), 'r');
    const stdout = openSync(join(dir, 'out'), 'w');
    try {
      const wasi = new WASI({ version: 'preview1', args: ['sdk-guest'], env: {}, stdin, stdout, returnOnExit: true });
      const instance = await WebAssembly.instantiate(new WebAssembly.Module(new Uint8Array(guestBytes)), {
        wasi_snapshot_preview1: wasi.wasiImport as WebAssembly.ModuleImports,
        subako_http: stub.exports as WebAssembly.ModuleImports,
      });
      assert.equal(wasi.start(instance), 0);
    } finally {
      closeSync(stdin);
      closeSync(stdout);
    }
    const answers = readFileSync(join(dir, 'out'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(answers[0].result.isError, true);
    assert.equal(answers[0].result.content[0].text, 'HTTP request failed (abi): subako_http.request returned -1');
    assert.deepEqual(answers[1].result.content, [{ type: 'text', text: 'still here' }]);
  });
});
