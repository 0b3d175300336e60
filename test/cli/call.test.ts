import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, copyFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, fixture } from '../helpers/paths.js';

const GREET_DIR = join(REPO_ROOT, 'examples', 'packages', 'greet');
const PROBE = fixture('c', 'mcp', 'abi_probe.wasm');
const scratch = mkdtempSync(join(tmpdir(), 'subako-cli-call-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function subako(...args: string[]) {
  const run = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('subako call', () => {
  test('--json prints exactly status, result, model, crash, durationMs and egress; greet gives Hello, Ada!', () => {
    const run = subako('call', GREET_DIR, 'greet', '{"name":"Ada"}', '--json');
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.deepEqual(Object.keys(out), ['status', 'result', 'model', 'crash', 'durationMs', 'egress']);
    assert.equal(out.status, 'ok');
    assert.deepEqual(out.result, { content: [{ type: 'text', text: '{"message":"Hello, Ada!"}' }], structuredContent: { message: 'Hello, Ada!' }, resultType: 'complete' });
    assert.equal(out.crash, null);
    assert.deepEqual(out.egress, []);
    assert.equal(typeof out.durationMs, 'number');
  });

  test('by default it prints what the model sees', () => {
    const run = subako('call', GREET_DIR, 'greet', '{"name":"Ada"}');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, '{"message":"Hello, Ada!"}\n');
  });

  test('a tool error exits 1, as subako mcp call does (cli/call-exit.ts)', () => {
    const run = subako('call', GREET_DIR, 'greet', '{"name":""}', '--json');
    assert.equal(run.code, 1);
    assert.equal(JSON.parse(run.stdout).status, 'tool_error');
  });

  test('a crash exits 1 with its reason and stderr', () => {
    const run = subako('call', PROBE, 'trap', '--json');
    assert.equal(run.code, 1);
    const out = JSON.parse(run.stdout);
    assert.equal(out.status, 'crash');
    assert.deepEqual(out.crash, { reason: 'trap', message: out.crash.message, stderr: 'about to trap\n' });
    assert.equal(out.result, null);
  });

  test('invalid <arguments-json> is a usage error naming the JSON problem: exit 2', () => {
    const run = subako('call', GREET_DIR, 'greet', '{"name":');
    assert.equal(run.code, 2);
    assert.match(run.stderr, /<arguments-json> is not valid JSON/);
    const array = subako('call', GREET_DIR, 'greet', '[1]');
    assert.equal(array.code, 2);
    assert.match(array.stderr, /must be a JSON object, not an array/);
  });

  test('a tool the package does not offer is a usage error', () => {
    const run = subako('call', GREET_DIR, 'nope');
    assert.equal(run.code, 2);
    assert.match(run.stderr, /has no tool "nope"; it offers: greet/);
  });

  test('a refused package exits 3 (the call could not be made) with its problems', () => {
    const dir = join(scratch, 'bad-pkg');
    mkdirSync(dir);
    writeFileSync(join(dir, 'subako-package.json'), '{"abi": 2, "name": "bad", "description": "x"}');
    copyFileSync(join(GREET_DIR, 'module.wasm'), join(dir, 'module.wasm'));
    const run = subako('call', dir, 'greet');
    assert.equal(run.code, 3);
    assert.match(run.stderr, /manifest\.abi/);
  });

  test('--volume keeps the files a call wrote; --data mounts /volume/data', () => {
    const volume = join(scratch, 'vol');
    const run = subako('call', PROBE, 'write_file', '{"path":"/volume/data/kept.txt","text":"hi"}', '--volume', volume, '--data', '--json');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).status, 'ok');
    assert.ok(existsSync(join(volume, 'data', 'kept.txt')));
  });
});

describe('subako tools', () => {
  test('prints the discovered tools as a JSON array', () => {
    const run = subako('tools', GREET_DIR);
    assert.equal(run.code, 0, run.stderr);
    const tools = JSON.parse(run.stdout);
    assert.deepEqual(tools.map((t: { name: string }) => t.name), ['greet']);
    assert.equal(tools[0].inputSchema.type, 'object');
  });

  test('exits 1 with the problems when discovery refuses the package', () => {
    const dir = join(scratch, 'no-tools');
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(dir, 'subako-package.json'), '{"abi": 1, "name": "no-tools", "description": "x"}');
    copyFileSync(PROBE, join(dir, 'module.wasm'));
    writeFileSync(join(dir, 'assets', 'tools.json'), '{"tools":[]}');
    const run = subako('tools', dir);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /tools\.count/);
  });
});
