/**
 * SandboxProcess: guests run in a supervised child process. A guest that takes its process down ends the
 * runs in it as `sandbox_crashed`; a new process serves the next run; runs still waiting in this process
 * are not lost; deadlines count the time a run waits.
 */
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SandboxProcess } from '../../src/sandbox/sandbox-process.js';
import { MODULE_LIMITS } from '../../src/wasm/index.js';
import { wat } from '../helpers/wat.js';
import { MIB, cGuest, limits, runToEnd, start, until } from './helpers.js';

let sandbox: SandboxProcess | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

/**
 * Four tables of ten million entries: V8 keeps tables on its heap, and instantiating this ended the server
 * (finding 2). The upload checks and the rewrite refuse it now; compiled here under loosened caps, it stands
 * for whatever could still take a sandbox process down.
 */
const TABLE_BOMB = `(module ${'(table 10000000 funcref) '.repeat(4)}(memory (export "memory") 1) (func (export "_start")))`;

describe('guests in a sandbox process', () => {
  test('the sandbox process holds at most heldModules compiled modules; one dropped is compiled again when it runs', async () => {
    sandbox = new SandboxProcess({ size: 1, heldModules: 2 });
    // Three modules of the same code, each with a custom section of its own: three distinct modules.
    const bytes = cGuest('echo-lines');
    const variant = (n: number) => Buffer.concat([bytes, Buffer.from([0, 3, 2]), Buffer.from(`m${n}`)]);
    const modules = await Promise.all([0, 1, 2].map((n) => sandbox!.compile(variant(n), { memoryBytes: 64 * MIB })));
    assert.ok(sandbox.modulesHeld <= 2, `held ${sandbox.modulesHeld} after compiling three`);
    // Each in turn, twice: every run is served whether its module was held or dropped and compiled again.
    for (let round = 0; round < 2; round++) {
      for (const [n, module] of modules.entries()) {
        const { result, stdout } = await runToEnd(sandbox, module, {}, `r${round} m${n}\n`);
        assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
        assert.equal(stdout, `1:r${round} m${n}\n`);
        assert.ok(sandbox.modulesHeld <= 2, `held ${sandbox.modulesHeld}`);
      }
    }
  });

  test('a released module goes once no run holds it; a run started before the release finishes', async () => {
    sandbox = new SandboxProcess({ size: 1 });
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    assert.equal(sandbox.modulesHeld, 1);
    // A run waiting for the rest of its stdin holds the module through the release.
    const running = start(sandbox, echo, { stdin: Buffer.from('first\n') });
    await until(() => running.stdoutSoFar().length > 0);
    sandbox.release(echo);
    assert.equal(sandbox.modulesHeld, 1, 'held by the run');
    running.handle.closeStdin();
    const { result } = await running.finished;
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    await until(() => sandbox!.modulesHeld === 0);
    assert.throws(() => sandbox!.run(echo, { args: [], env: [], preopens: [], limits: limits() }), /not compiled by this sandbox/);
  });

  test('a guest runs in a process of its own, not this one', async () => {
    sandbox = new SandboxProcess({ size: 1 });
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    const { result, stdout } = await runToEnd(sandbox, echo, {}, 'a\nb\n');
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    assert.equal(stdout, '1:a\n2:b\n');
    assert.equal(Buffer.from(result.stderrTail).toString(), 'read 2 lines\n', "stderr's tail comes back with the result");
    assert.ok(sandbox.pid !== undefined && sandbox.pid !== process.pid);
  });

  test('a guest that exhausts its V8 heap ends its sandbox process only: the run is sandbox_crashed, the next one is served', async () => {
    const crashes: string[] = [];
    sandbox = new SandboxProcess({ size: 2, execArgv: ['--max-old-space-size=64'], onCrash: (reason) => crashes.push(reason) });
    await assert.rejects(sandbox.compile(await wat(TABLE_BOMB), { memoryBytes: 64 * MIB }), (error: { code?: string }) => /^limit\./.test(error.code ?? ''));
    const loosened = { ...MODULE_LIMITS, tables: 100, tableElements: 10_000_000 };
    const bomb = await sandbox.compile(await wat(TABLE_BOMB), { memoryBytes: 64 * MIB, limits: loosened });
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    const firstPid = sandbox.pid;
    const blown = await runToEnd(sandbox, bomb);
    assert.equal(blown.result.outcome.kind, 'sandbox_crashed');
    assert.match((blown.result.outcome as { message: string }).message, /heap/i, 'the reason names what V8 said');
    assert.equal(crashes.length, 1);
    // This process is alive (we are running) and a new sandbox process serves the next run.
    const after = await runToEnd(sandbox, echo, {}, 'still here\n');
    assert.deepEqual(after.result.outcome, { kind: 'exit', code: 0 });
    assert.equal(after.stdout, '1:still here\n');
    assert.notEqual(sandbox.pid, firstPid);
  });

  test('a sandbox process killed under a run ends it as sandbox_crashed; runs still waiting here run on the next one', async () => {
    sandbox = new SandboxProcess({ size: 1 });
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    // One worker takes one run at a time, straight from this side: the other three wait here, never sent.
    const runs = Array.from({ length: 4 }, (_, i) => start(sandbox!, echo, { stdin: Buffer.from(`run ${i}\n`) }));
    await until(() => runs[0].stdoutSoFar() === '1:run 0\n');
    process.kill(sandbox.pid!, 'SIGKILL');
    const first = await runs[0].finished;
    assert.equal(first.result.outcome.kind, 'sandbox_crashed');
    assert.match((first.result.outcome as { message: string }).message, /SIGKILL/);
    for (const waiting of runs.slice(1)) waiting.handle.closeStdin();
    const rest = await Promise.all(runs.slice(1).map((run) => run.finished));
    rest.forEach((ended, i) => {
      assert.deepEqual(ended.result.outcome, { kind: 'exit', code: 0 }, 'a run the dead process never held runs on the next one');
      assert.equal(ended.stdout, `1:run ${i + 1}\n`);
    });
    assert.equal(sandbox.crashes, 1);
  });

  test('time spent waiting counts against the deadline: a run that waits past it ends as timeout, never started', async () => {
    sandbox = new SandboxProcess({ size: 1 });
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    const busy = [start(sandbox, echo), start(sandbox, echo)];
    await until(() => false, 50).catch(() => undefined);
    const late = start(sandbox, echo, { stdin: Buffer.from('late\n'), limits: limits({ timeoutMs: 200 }) });
    late.handle.closeStdin();
    const { result, stdout } = await late.finished;
    assert.deepEqual(result.outcome, { kind: 'timeout' });
    assert.equal(stdout, '');
    for (const run of busy) run.handle.closeStdin();
    for (const run of busy) assert.deepEqual((await run.finished).result.outcome, { kind: 'exit', code: 0 });
  });

  test('a kill ends the run at once, and the worker serves the next run', async () => {
    sandbox = new SandboxProcess({ size: 1 });
    const sleeper = await sandbox.compile(cGuest('sleep-forever'), { memoryBytes: 64 * MIB });
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    const asleep = start(sandbox, sleeper);
    asleep.handle.kill('enough');
    assert.deepEqual((await asleep.finished).result.outcome, { kind: 'killed', reason: 'enough' });
    const next = await runToEnd(sandbox, echo, {}, 'x\n');
    assert.equal(next.stdout, '1:x\n');
    assert.equal(sandbox.crashes, 0);
  });

  test('a module WebAssembly refuses is a compile error, and the sandbox goes on', async () => {
    sandbox = new SandboxProcess({ size: 1 });
    // Passes instrumenting (a valid header and sections) but not validation: a function body of the wrong type.
    const invalid = await wat('(module (memory (export "memory") 1) (func (export "_start")))');
    invalid[invalid.length - 2] = 0x41; // i32.const with no immediate: not valid code
    await assert.rejects(sandbox.compile(invalid, { memoryBytes: 64 * MIB }), (error: Error & { code?: string }) => error.code === 'sandbox.compile' || error.code === 'instrument.unsupported');
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    assert.equal((await runToEnd(sandbox, echo, {}, 'y\n')).stdout, '1:y\n');
  });
});
