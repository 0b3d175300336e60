import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { FunctionHost } from '../../src/function/host.js';
import { CrashReason } from '../../src/function/crash.js';
import { SUBAKO_VERSION } from '../../src/version.js';
import { GREET, probe, Scratch } from './guests.js';
import type { FunctionCallContext } from '../../src/function/types.js';

let host: FunctionHost;
let scratch: Scratch;
before(() => {
  host = new FunctionHost({ poolSize: 2, limits: { callTimeoutMs: 3000, memoryBytes: 64 << 20 } });
  scratch = new Scratch();
});
after(async () => {
  await host.close();
  scratch.cleanup();
});

const ctx = (extra: Partial<FunctionCallContext> = {}): FunctionCallContext => ({ tmpDir: scratch.dir('tmp'), ...extra });

async function callProbe(tool: string, args: Record<string, unknown> = {}, context = ctx(), assets: Record<string, string | Uint8Array> | null = null) {
  const loaded = await host.load(probe(assets ? scratch.files(assets) : null));
  return host.call(loaded, tool, args, context);
}

describe('a call', () => {
  test('the spec\'s greet example answers Hello, Ada! with its CallToolResult', async () => {
    const loaded = await host.load({ name: 'greet', moduleBytes: GREET, assetsDir: null });
    const outcome = await host.call(loaded, 'greet', { name: 'Ada' }, ctx());
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result, {
      content: [{ type: 'text', text: '{"message":"Hello, Ada!"}' }],
      structuredContent: { message: 'Hello, Ada!' },
      resultType: 'complete',
    });
    assert.deepEqual(outcome.model, [{ type: 'text', text: '{"message":"Hello, Ada!"}' }]);
    assert.equal(outcome.crash, null);
    assert.equal(outcome.stderr, 'greeted Ada\n');
  });

  test('the request carries _meta exactly as the page shows it, the name and the object arguments', async () => {
    const outcome = await callProbe('echo_request', { a: [1, { b: 'c' }] });
    const request = JSON.parse(outcome.result!.content[0].text as string);
    assert.equal(request.jsonrpc, '2.0');
    assert.equal(request.method, 'tools/call');
    assert.deepEqual(request.params, {
      name: 'echo_request',
      arguments: { a: [1, { b: 'c' }] },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'subako', version: SUBAKO_VERSION },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    });
  });

  test('every request has a fresh id, never reused', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i += 1) {
      const outcome = await callProbe('echo_request');
      ids.add(JSON.parse(outcome.result!.content[0].text as string).id);
    }
    assert.equal(ids.size, 5);
  });

  test('argv is the package name alone and there is no environment', async () => {
    const outcome = await callProbe('argv_env');
    assert.deepEqual(outcome.model, [{ type: 'text', text: 'argc=1 argv[0]=probe envc=0' }]);
  });

  test('a result with isError is a tool error the model reads', async () => {
    const outcome = await callProbe('raw', { result: { content: [{ type: 'text', text: 'bad input' }], isError: true } });
    assert.equal(outcome.status, 'tool_error');
    assert.deepEqual(outcome.model, [{ type: 'text', text: 'bad input' }]);
  });

  test('notifications (messages without an id) are ignored', async () => {
    const outcome = await callProbe('notify_first', { x: 1 });
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result!.content, [{ type: 'text', text: '{"x":1}' }]);
  });

  test('an absent resultType counts as complete; "complete" is accepted', async () => {
    const outcome = await callProbe('raw', { result: { content: [], resultType: 'complete' } });
    assert.equal(outcome.status, 'ok');
  });
});

describe('what breaks a call: each crash has its reason, and the model is told with stderr\'s tail', () => {
  const cases: [string, string, Record<string, unknown>][] = [
    [CrashReason.jsonrpcError, 'jsonrpc_error', {}],
    [CrashReason.resultType, 'raw', { result: { content: [], resultType: 'input_required' } }],
    [CrashReason.notJsonRpc, 'not_jsonrpc', {}],
    [CrashReason.unknownId, 'unknown_id', {}],
    [CrashReason.moduleRequest, 'module_request', {}],
    [CrashReason.exitedEarly, 'exited_early', {}],
    [CrashReason.exitStatus, 'exit_status', {}],
    [CrashReason.noExit, 'no_exit', {}],
    [CrashReason.trap, 'trap', {}],
    [CrashReason.outOfMemory, 'out_of_memory', {}],
    [CrashReason.timeout, 'timeout', {}],
    [CrashReason.stdoutLimit, 'stdout_limit', {}],
    [CrashReason.badResult, 'raw', { result: { content: 'not a list' } }],
  ];
  for (const [reason, tool, args] of cases) {
    test(`${reason}`, async () => {
      // The time limit is the call's own; a short one keeps the suite quick.
      const context = ctx(reason === CrashReason.timeout ? { limits: { callTimeoutMs: 800 } } : {});
      const outcome = await callProbe(tool, args, context);
      assert.equal(outcome.status, 'crash');
      assert.equal(outcome.crash?.reason, reason, outcome.crash?.message);
      assert.equal(outcome.result, null);
      assert.equal(outcome.model.length, 1);
      assert.match(outcome.model[0].text as string, new RegExp(`^The function crashed \\(${reason}\\)`));
    });
  }

  test('the model reads the last 4 KiB of stderr', async () => {
    const outcome = await callProbe('trap');
    assert.equal(outcome.crash?.stderr, 'about to trap\n');
    assert.match(outcome.model[0].text as string, /about to trap/);
  });

  test('a crashing guest does not disturb the next call on the same pool', async () => {
    await callProbe('timeout', {}, ctx({ limits: { callTimeoutMs: 500 } }));
    const outcome = await callProbe('echo', { ok: true });
    assert.equal(outcome.status, 'ok');
  });
});

describe('files', () => {
  test('a 4000×3000 PNG written to /volume/tmp and linked is shown to the model at 2000×1500', async () => {
    const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: { r: 0, g: 90, b: 200 } } }).png().toBuffer();
    const context = ctx();
    const outcome = await callProbe('copy_file', { from: '/package/big.png', to: '/volume/tmp/chart.png', link: 'volume:///tmp/chart.png' }, context, { 'big.png': big });
    assert.equal(outcome.status, 'ok', JSON.stringify(outcome.model));
    assert.ok(existsSync(join(context.tmpDir, 'chart.png')));
    const image = outcome.model.find((b) => b.type === 'image');
    assert.ok(image, JSON.stringify(outcome.model));
    const meta = await sharp(Buffer.from(image.data as string, 'base64')).metadata();
    assert.deepEqual([meta.width, meta.height], [2000, 1500]);
  });

  test('a guest reads its assets but cannot write them', async () => {
    const assets = { 'notes.txt': 'asset text' };
    const read = await callProbe('read_file', { path: '/package/notes.txt' }, ctx(), assets);
    assert.deepEqual(read.model, [{ type: 'text', text: 'asset text' }]);
    const write = await callProbe('write_file', { path: '/package/notes.txt', text: 'changed' }, ctx(), assets);
    assert.equal(write.status, 'tool_error');
    assert.match(write.model[0].text as string, /cannot write \/package\/notes.txt/);
  });

  test('a guest reads its skills but cannot write them', async () => {
    const skillsDir = scratch.files({ 'pdf/SKILL.md': '---\nname: pdf\n---\nHow to read PDFs.' });
    const read = await callProbe('read_file', { path: '/skills/pdf/SKILL.md' }, ctx({ skillsDir }));
    assert.match(read.model[0].text as string, /How to read PDFs/);
    const write = await callProbe('write_file', { path: '/skills/pdf/SKILL.md', text: 'x' }, ctx({ skillsDir }));
    assert.equal(write.status, 'tool_error');
    assert.equal(readFileSync(join(skillsDir, 'pdf', 'SKILL.md'), 'utf8'), '---\nname: pdf\n---\nHow to read PDFs.');
  });

  test('a guest cannot see another call\'s /volume', async () => {
    const first = ctx();
    const wrote = await callProbe('write_file', { path: '/volume/tmp/mine.txt', text: 'private' }, first);
    assert.equal(wrote.status, 'ok');
    assert.equal(readFileSync(join(first.tmpDir, 'mine.txt'), 'utf8'), 'private');
    const other = await callProbe('read_file', { path: '/volume/tmp/mine.txt' }, ctx());
    assert.equal(other.status, 'tool_error');
    assert.match(other.model[0].text as string, /cannot read/);
  });

  test('/volume/data is mounted only when the agent enables it', async () => {
    const without = await callProbe('write_file', { path: '/volume/data/x.txt', text: 'x' }, ctx());
    assert.equal(without.status, 'tool_error');
    const dataDir = scratch.dir('data');
    const withData = await callProbe('write_file', { path: '/volume/data/x.txt', text: 'kept' }, ctx({ dataDir }));
    assert.equal(withData.status, 'ok');
    assert.equal(readFileSync(join(dataDir, 'x.txt'), 'utf8'), 'kept');
  });
});
