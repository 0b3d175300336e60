/**
 * docs/abi.md stays the contract the code implements: every crash reason, `subako_http` error kind, misuse
 * code, method and problem code the code defines is named there (taken from each room's own face, so a name
 * added to the code without a line in the page fails here), no table names one the code does not define,
 * its JSON examples are what the checks accept, and its "testing locally" command prints what it shows.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from '../helpers/paths.js';
import { wat } from '../helpers/wat.js';
import { CrashReason, TOOL_RULES, PROTOCOL_VERSION, checkDiscoverResult, checkTools } from '../../src/function/index.js';
import { HTTP_ERROR_KINDS, HTTP_ABI_MISUSE, SUBAKO_HTTP_MODULE, SUBAKO_HTTP_SIGNATURES } from '../../src/sandbox/index.js';
import {
  HTTP_METHODS, MAX_INLINE_BODY_BYTES, MAX_REDIRECTS, MAX_REQUEST_BYTES, MAX_TIMEOUT_MS, parseHttpRequest,
} from '../../src/egress/index.js';
import { FEATURE_CODES, LIMIT_CODES } from '../../src/wasm/index.js';
import {
  MANIFEST_PROBLEMS, PACKAGE_PROBLEMS, MAX_MODULE_BYTES, MAX_DESCRIPTION_LENGTH, MAX_VERSION_LENGTH, PACKAGE_ENTRIES,
} from '../../src/package/index.js';
import { DEFAULT_CALL_LIMITS } from '../../src/config.js';

const DOC = readFileSync(join(REPO_ROOT, 'docs', 'abi.md'), 'utf8');

/** The text under a heading, up to the next heading of the same or a higher level. */
function section(heading: string): string {
  const lines = DOC.split('\n');
  const start = lines.findIndex((line) => line.replace(/^#+ /, '') === heading && /^#+ /.test(line));
  assert.ok(start >= 0, `docs/abi.md has a heading "${heading}"`);
  const level = lines[start].indexOf(' ');
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** The code in backticks that opens each body row of the table whose header row is `header`. */
function tableCodes(text: string, header: string): string[] {
  const lines = text.split('\n');
  const at = lines.indexOf(header);
  assert.ok(at >= 0, `the page has a table headed "${header}"`);
  const table: string[] = [];
  for (const line of lines.slice(at)) {
    if (!line.startsWith('|')) break;
    table.push(line);
  }
  assert.ok(table.length > 2, `the table headed "${header}" has rows`);
  return table.slice(2).map((row) => /^\| `([^`]+)` \|/.exec(row)?.[1] ?? `(no code in: ${row.slice(0, 40)})`);
}

const named = (code: string): boolean => DOC.includes(`\`${code}\``);

/** Fenced blocks of one language in a text, in order. */
function blocks(text: string, lang: string): string[] {
  return [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
}

describe('docs/abi.md names what the code defines', () => {
  test('the crash table has one row per crash reason the code defines, and no other', () => {
    const rows = tableCodes(section('What breaks a call'), '| reason | when |');
    assert.deepEqual([...rows].sort(), Object.values(CrashReason).sort());
  });

  test('the error-kind table has one row per subako_http error kind the code defines, and no other', () => {
    const rows = tableCodes(section('The answer'), '| kind | when |');
    assert.deepEqual([...rows].sort(), [...HTTP_ERROR_KINDS].sort());
  });

  test('the README lists every crash reason, and only those', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const list = /reported to the model with its reason and the last 4 KiB of\nstderr: ([^(]+)\(/.exec(readme);
    assert.ok(list, 'the README lists the crash reasons');
    const listed = [...list[1].matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    assert.deepEqual(listed.sort(), Object.values(CrashReason).sort());
  });

  test('every misuse return of the imports is named with its number', () => {
    const text = section('HTTP: `subako_http`');
    for (const code of Object.values(HTTP_ABI_MISUSE)) assert.match(text, new RegExp(`\`${code}\`, `), `misuse ${code}`);
    for (const name of Object.keys(SUBAKO_HTTP_SIGNATURES)) assert.ok(text.includes(`\`${name}(ptr: i32, len: i32) -> i32\``), name);
    assert.ok(text.includes(`The module \`${SUBAKO_HTTP_MODULE}\``));
  });

  test('every request method is named, and the numbers of the request are the code\'s', () => {
    const methodRow = section('The request').split('\n').find((line) => line.startsWith('| `method` |'));
    assert.ok(methodRow);
    for (const method of HTTP_METHODS) assert.ok(methodRow.includes(`\`${method}\``), method);
    assert.equal(MAX_REQUEST_BYTES, 8 * 1024 * 1024);
    assert.ok(section('The request').includes('at most 8 MiB'));
    assert.ok(section('The request').includes(`at most ${MAX_TIMEOUT_MS.toLocaleString('en-US')}`));
    assert.ok(section('The request').includes(`up to ${MAX_REDIRECTS} hops`));
    assert.equal(MAX_INLINE_BODY_BYTES, 256 * 1024);
    assert.ok(section('The answer').includes('256 KiB'));
  });

  test('every refused feature, module limit, manifest and package problem code is named', () => {
    for (const code of [...Object.values(FEATURE_CODES), ...Object.values(LIMIT_CODES), ...Object.values(MANIFEST_PROBLEMS), ...Object.values(PACKAGE_PROBLEMS)]) {
      assert.ok(named(code), `${code} is named in docs/abi.md`);
    }
  });

  test('the call\'s limits and the tool rules are the numbers the page gives', () => {
    assert.equal(DEFAULT_CALL_LIMITS.exitGraceMs, 1000);
    assert.ok(section('A call, from start to end').includes('within **one second**'));
    assert.equal(DEFAULT_CALL_LIMITS.discoveryTimeoutMs, 10_000);
    assert.ok(section('Discovery: what a package offers').includes('**10 seconds**'));
    assert.equal(DEFAULT_CALL_LIMITS.stdoutBytes, 1024 * 1024);
    assert.equal(DEFAULT_CALL_LIMITS.stderrTailBytes, 4 * 1024);
    assert.ok(section('What breaks a call').includes('more than 1 MiB to stdout'));
    assert.ok(section('What breaks a call').includes('last 4 KiB of stderr'));
    assert.equal(DEFAULT_CALL_LIMITS.writeBudgetBytes, 1024 ** 3);
    assert.ok(section('Files').includes('1 GiB across all files'));
    const rules = section('Discovery: what a package offers');
    assert.ok(rules.includes(`${TOOL_RULES.minTools} to ${TOOL_RULES.maxTools} tools`));
    assert.ok(rules.includes(`At most **${TOOL_RULES.maxPages} pages**`));
    assert.ok(rules.includes(`at most ${TOOL_RULES.maxDescriptionChars.toLocaleString('en-US')} characters`));
    assert.equal(TOOL_RULES.namePattern.source, '^[a-z0-9_-]{1,64}$');
    assert.ok(DOC.includes(`\`${TOOL_RULES.namePattern.source}\``));
    assert.ok(DOC.includes(`"${PROTOCOL_VERSION}"`));
  });

  test('the package table gives the manifest\'s and the module\'s limits, and the entries a bundle holds', () => {
    const text = section('A package');
    assert.equal(MAX_MODULE_BYTES, 64 * 1024 * 1024);
    assert.ok(text.includes('| `module.wasm` | the module, at most 64 MiB |'));
    assert.ok(text.includes(`at most ${MAX_DESCRIPTION_LENGTH.toLocaleString('en-US')} characters`));
    assert.ok(text.includes(`at most ${MAX_VERSION_LENGTH} characters`));
    for (const entry of PACKAGE_ENTRIES) assert.ok(text.includes(`| \`${entry === 'assets' ? 'assets/' : entry}\` |`), entry);
  });
});

describe('docs/abi.md\'s examples are what the code accepts', () => {
  test('every JSON example parses, one value per line or per block', () => {
    for (const block of blocks(DOC, 'json')) {
      const lines = block.trim().split('\n');
      const oneValue = lines[0] === '{' || lines[0].startsWith('{') && !lines[0].endsWith('}');
      if (oneValue) JSON.parse(block);
      else for (const line of lines) JSON.parse(line);
    }
  });

  test('the server/discover and tools/list answers pass discovery\'s checks', () => {
    const [discover, list] = blocks(section('Discovery: what a package offers'), 'json').map((b) => JSON.parse(b));
    assert.deepEqual(checkDiscoverResult(discover.result), []);
    assert.deepEqual(checkTools(list.result.tools).problems, []);
  });

  test('the request example is a request subako_http accepts, with every field the page lists', () => {
    const [example] = blocks(section('The request'), 'json');
    const request = parseHttpRequest(new TextEncoder().encode(example));
    assert.equal(request.method, 'POST');
    assert.equal(request.timeoutMs, 5000);
    const fields = [...section('The request').matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    assert.deepEqual(fields.sort(), Object.keys(JSON.parse(example)).sort());
  });

  test('the stub module exports both imports, answering the misuse codes the page gives', async () => {
    const [stub] = blocks(DOC, 'wat');
    const { instance } = await WebAssembly.instantiate(await wat(stub));
    const exports = instance.exports as Record<string, (ptr: number, len: number) => number>;
    assert.deepEqual(Object.keys(exports).sort(), Object.keys(SUBAKO_HTTP_SIGNATURES).sort());
    assert.equal(exports.request(0, 0), HTTP_ABI_MISUSE.outOfRange);
    assert.equal(exports.read_response(0, 0), HTTP_ABI_MISUSE.nothingHeld);
  });

  test('the stub the page shows is the one the C SDK ships', async () => {
    const [stub] = blocks(DOC, 'wat');
    assert.ok(DOC.includes('`sdk/c/subako_http_stub.wat`'));
    const shipped = readFileSync(join(REPO_ROOT, 'sdk', 'c', 'subako_http_stub.wat'), 'utf8');
    assert.deepEqual(await wat(shipped), await wat(stub));
  });

  test('the request by hand, run as written, prints the answer line the page shows', () => {
    const text = section('Testing locally');
    const [command] = blocks(text, 'bash');
    const [expected] = blocks(text, 'json');
    const subako = `${process.execPath} ${join(REPO_ROOT, 'bin', 'subako.js')}`;
    const run = spawnSync('bash', ['-euo', 'pipefail', '-c', command.replaceAll('npx subako', subako)], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, expected);
  });
});
