/**
 * The bridge and `subako_http`: the guest blocks in `request` while the main thread awaits the
 * run's `http` handler; the reply is held until `read_response` copies it.
 */
import { ENTRY_COST_BYTES } from '../../src/wasi/index.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wat } from '../helpers/wat.js';
import { SandboxPool } from '../../src/sandbox/pool.js';
import { SandboxProcess } from '../../src/sandbox/sandbox-process.js';
import { SubakoError } from '../../src/errors.js';
import { HTTP_ABI_MISUSE, SUBAKO_HTTP_SIGNATURES } from '../../src/sandbox/index.js';
import { makeSubakoHttpImports } from '../../src/sandbox/subako-http.js';
import type { BridgeHandler, ModuleHandle, RunContext, Sandbox } from '../../src/sandbox/types.js';
import { MIB, cGuest, delay, limits, runToEnd, start, until } from './helpers.js';

const REQUEST = '{"url":"https://example.com/"}';

/** The imports, memory and request bytes both HTTP guests below start with. */
const HTTP_GUEST_PRELUDE = `
  (import "subako_http" "request" (func $request (param i32 i32) (result i32)))
  (import "subako_http" "read_response" (func $read (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) ${JSON.stringify(REQUEST)})`;

/** Sends REQUEST, copies the answer to 1024 and writes it to stdout. */
const HTTP_ECHO = `(module${HTTP_GUEST_PRELUDE}
  (func (export "_start") (local $n i32)
    (local.set $n (call $request (i32.const 0) (i32.const ${REQUEST.length})))
    (drop (call $read (i32.const 1024) (local.get $n)))
    (i32.store (i32.const 8192) (i32.const 1024))
    (i32.store (i32.const 8196) (local.get $n))
    (drop (call $fd_write (i32.const 1) (i32.const 8192) (i32.const 1) (i32.const 8200)))))`;

/** Every misuse of the ABI, in order; the seven return values are written to stdout as i32s. */
const HTTP_MISUSE = `(module${HTTP_GUEST_PRELUDE}
  (func (export "_start") (local $n i32)
    (i32.store (i32.const 4096) (call $read (i32.const 1024) (i32.const 10)))
    (i32.store (i32.const 4100) (call $request (i32.const 65530) (i32.const 100)))
    (local.set $n (call $request (i32.const 0) (i32.const ${REQUEST.length})))
    (i32.store (i32.const 4104) (local.get $n))
    (i32.store (i32.const 4108) (call $read (i32.const 1024) (i32.add (local.get $n) (i32.const 1))))
    (i32.store (i32.const 4112) (call $read (i32.const 65535) (local.get $n)))
    (i32.store (i32.const 4116) (call $read (i32.const 1024) (local.get $n)))
    (i32.store (i32.const 4120) (call $read (i32.const 1024) (local.get $n)))
    (i32.store (i32.const 8192) (i32.const 4096))
    (i32.store (i32.const 8196) (i32.const 28))
    (drop (call $fd_write (i32.const 1) (i32.const 8192) (i32.const 1) (i32.const 8200)))))`;

const bytes = (s: string) => new TextEncoder().encode(s);

// The same rules hold where guests run in this process's threads and where they run in a sandbox process
// (there the handler runs in this process and the guest in the child, the budget drawn across the boundary).
const SANDBOXES: [string, () => Sandbox][] = [
  ['worker threads of this process', () => new SandboxPool({ size: 2 })],
  ['a sandbox process', () => new SandboxProcess({ size: 2 })],
];

for (const [where, makeSandbox] of SANDBOXES) describe(`the bridge and subako_http, guests in ${where}`, () => {
  let pool: Sandbox;
  let echo: ModuleHandle;

  before(async () => {
    pool = makeSandbox();
    echo = await pool.compile(await wat(HTTP_ECHO), { memoryBytes: 64 * MIB });
  });
  after(() => pool.close());

  test('request hands the bytes to the http handler and the guest reads its reply', async () => {
    const seen: string[] = [];
    const handler: BridgeHandler = async (payload) => {
      seen.push(new TextDecoder().decode(payload));
      await delay(30); // async work on the main thread while the guest blocks
      return bytes('{"ok":{"status":200,"headers":{},"body":{"type":"inline","text":"hi"}}}');
    };
    const { result, stdout } = await runToEnd(pool, echo, { bridge: { http: handler } });
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    assert.deepEqual(seen, [REQUEST]);
    assert.equal(stdout, '{"ok":{"status":200,"headers":{},"body":{"type":"inline","text":"hi"}}}');
  });

  test('a run without an http handler answers that it has no network access', async () => {
    const { stdout } = await runToEnd(pool, echo);
    assert.deepEqual(JSON.parse(stdout), {
      error: { kind: 'host_not_allowed', message: 'this run has no network access' },
    });
  });

  test('a handler that rejects is a connection error, whose message never leaks a foreign error', async () => {
    const leaky = await runToEnd(pool, echo, {
      bridge: { http: async () => { throw new Error('token sk-secret refused'); } },
    });
    const answer = JSON.parse(leaky.stdout);
    assert.equal(answer.error.kind, 'connection');
    assert.doesNotMatch(answer.error.message, /sk-secret/);
    const ours = await runToEnd(pool, echo, {
      bridge: { http: async () => { throw new SubakoError('connection', 'example.com did not answer'); } },
    });
    assert.deepEqual(JSON.parse(ours.stdout), { error: { kind: 'connection', message: 'example.com did not answer' } });
  });

  test('misuses answer -1 (range outside memory), -2 (nothing held), -3 (length mismatch)', async () => {
    const misuse = await pool.compile(await wat(HTTP_MISUSE), { memoryBytes: 64 * MIB });
    const reply = bytes('{"ok":{"status":204,"headers":{}}}');
    const chunks: Buffer[] = [];
    const { result } = await runToEnd(pool, misuse, {
      bridge: { http: async () => reply },
      onStdout: (chunk) => chunks.push(Buffer.from(chunk)),
    });
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    const out = Buffer.concat(chunks);
    const codes = Array.from({ length: 7 }, (_, i) => out.readInt32LE(i * 4));
    assert.deepEqual(codes, [-2, -1, reply.length, -3, -1, 0, -2]);
    const { outOfRange, nothingHeld, lengthMismatch } = HTTP_ABI_MISUSE;
    assert.deepEqual(codes, [nothingHeld, outOfRange, reply.length, lengthMismatch, outOfRange, 0, nothingHeld],
      'the ABI table the glue returns from numbers the misuses as the page does');
  });

  test('the glue implements exactly the imports of the ABI table the module checks accept', () => {
    const glue = makeSubakoHttpImports(() => undefined, () => ({ missing: true }));
    assert.deepEqual(Object.keys(glue).sort(), Object.keys(SUBAKO_HTTP_SIGNATURES).sort());
  });

  test('a module that does not import subako_http runs without it', async () => {
    const plain = await pool.compile(await wat('(module (memory (export "memory") 1) (func (export "_start")))'), {
      memoryBytes: 64 * MIB,
    });
    assert.equal(plain.importsHttp, false);
    assert.equal(echo.importsHttp, true);
    assert.deepEqual((await runToEnd(pool, plain)).result.outcome, { kind: 'exit', code: 0 });
  });

  test('handlers and the guest draw on one write budget', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'subako-bridge-'));
    try {
      const guest = await pool.compile(cGuest('http-then-write'), { memoryBytes: 64 * MIB });
      const run = (budget: number, handlerTakes: number) =>
        runToEnd(pool, guest, {
          preopens: [{ guestPath: '/data', hostPath: dir, readOnly: false }],
          limits: limits({ writeBudgetBytes: budget }),
          bridge: {
            http: async (_payload, ctx: RunContext) => {
              const took = ctx.writeBudget.tryConsume(handlerTakes);
              return bytes(JSON.stringify({ took, used: ctx.writeBudget.used() }));
            },
          },
        });
      // The guest's new file costs ENTRY_COST_BYTES before its 64 bytes.
      const roomy = await run(ENTRY_COST_BYTES + 200, 100);
      assert.match(roomy.stdout, /answer\(0\): \{"took":true,"used":100\}\nwrite: ok\n/);
      assert.equal(roomy.result.writtenBytes, 100 + ENTRY_COST_BYTES + 64);
      const tight = await run(120, 100); // out.txt exists now: no entry to pay for, only its bytes
      assert.match(tight.stdout, /answer\(0\): \{"took":true,"used":100\}\n/);
      assert.doesNotMatch(tight.stdout, /write: ok/);
      assert.equal(tight.result.writtenBytes, 100);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a guest blocked in a bridge call is stopped at its deadline; its handler sees the run end', async () => {
    let signal: AbortSignal | undefined;
    let remaining = -1;
    const { finished } = start(pool, echo, {
      limits: limits({ timeoutMs: 300 }),
      bridge: {
        http: (_payload, ctx) => {
          signal = ctx.signal;
          remaining = ctx.remainingMs();
          return new Promise(() => undefined); // never answers
        },
      },
    });
    await until(() => signal !== undefined);
    assert.ok(remaining > 0 && remaining <= 300);
    assert.equal(signal!.aborted, false);
    const { result } = await finished;
    assert.deepEqual(result.outcome, { kind: 'timeout' });
    assert.equal(signal!.aborted, true);
  });
});
