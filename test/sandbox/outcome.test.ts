import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ProcExit } from '../../src/wasi/types.js';
import { classifyEnd, classifyInstantiateFailure, StdoutLimitReached } from '../../src/sandbox/outcome.js';
import { ByteTail } from '../../src/sandbox/stderr-tail.js';
import {
  createControlBlock,
  resetWriteBudget,
  tryConsumeWriteBudget,
  writeBudgetUsed,
} from '../../src/sandbox/control-block.js';

const facts = { stdoutLimitHit: false, growFailed: false, memoryBytes: 64 * 1024 * 1024 };

describe('how a guest\'s end becomes an outcome', () => {
  test('returning or proc_exit gives the exit code', () => {
    assert.deepEqual(classifyEnd({ returned: 0 }, facts), { kind: 'exit', code: 0 });
    assert.deepEqual(classifyEnd({ threw: new ProcExit(3) }, facts), { kind: 'exit', code: 3 });
  });

  test('a guest that handled a refused memory.grow and exited keeps its own status, zero or not', () => {
    const grew = { ...facts, growFailed: true };
    assert.deepEqual(classifyEnd({ returned: 0 }, grew), { kind: 'exit', code: 0 });
    assert.deepEqual(classifyEnd({ returned: 1 }, grew), { kind: 'exit', code: 1 });
    assert.deepEqual(classifyEnd({ threw: new ProcExit(42) }, grew), { kind: 'exit', code: 42 });
  });

  test('a trap reports its message, or out_of_memory when a grow was refused before it', () => {
    const trap = new WebAssembly.RuntimeError('unreachable');
    assert.deepEqual(classifyEnd({ threw: trap }, facts), { kind: 'trap', message: 'unreachable' });
    const oom = classifyEnd({ threw: trap }, { ...facts, growFailed: true });
    assert.equal(oom.kind, 'out_of_memory');
    assert.match((oom as { message: string }).message, /64 MiB/);
    assert.deepEqual(classifyEnd({ threw: new RangeError('Maximum call stack size exceeded') }, facts), {
      kind: 'trap',
      message: 'call stack exhausted',
    });
  });

  test('passing the stdout cap wins over however the guest ended', () => {
    assert.deepEqual(classifyEnd({ threw: new StdoutLimitReached() }, facts), { kind: 'stdout_limit' });
    assert.deepEqual(classifyEnd({ returned: 0 }, { ...facts, stdoutLimitHit: true }), { kind: 'stdout_limit' });
  });

  test('an instance that cannot get its memory is out_of_memory; a link failure is reported as such', () => {
    const memory = classifyInstantiateFailure(new RangeError('WebAssembly.Instance(): Out of memory: Cannot allocate Wasm memory for new instance'), facts.memoryBytes);
    assert.equal(memory.kind, 'out_of_memory');
    const link = classifyInstantiateFailure(new WebAssembly.LinkError('Import #0 "env" "f": function import requires a callable'), facts.memoryBytes);
    assert.equal(link.kind, 'trap');
    assert.match((link as { message: string }).message, /cannot be linked/);
  });
});

describe('the stderr tail', () => {
  test('keeps exactly the last N bytes across chunks of any size', () => {
    const tail = new ByteTail(5);
    assert.deepEqual([...tail.bytes()], []);
    tail.push(Buffer.from('ab'));
    assert.equal(Buffer.from(tail.bytes()).toString(), 'ab');
    tail.push(Buffer.from('cdef'));
    assert.equal(Buffer.from(tail.bytes()).toString(), 'bcdef');
    tail.push(Buffer.from('0123456789'));
    assert.equal(Buffer.from(tail.bytes()).toString(), '56789');
    for (const ch of 'xyz') tail.push(Buffer.from(ch));
    assert.equal(Buffer.from(tail.bytes()).toString(), '89xyz');
  });

  test('a zero-byte tail keeps nothing', () => {
    const tail = new ByteTail(0);
    tail.push(Buffer.from('abc'));
    assert.equal(tail.bytes().length, 0);
  });
});

describe('the shared write budget', () => {
  test('takes bytes until the limit and never past it', () => {
    const block = createControlBlock();
    resetWriteBudget(block, 100);
    assert.equal(tryConsumeWriteBudget(block, 60), true);
    assert.equal(tryConsumeWriteBudget(block, 41), false);
    assert.equal(writeBudgetUsed(block), 60);
    assert.equal(tryConsumeWriteBudget(block, 40), true);
    assert.equal(tryConsumeWriteBudget(block, 1), false);
    assert.equal(tryConsumeWriteBudget(block, -1), false);
    resetWriteBudget(block, 10);
    assert.equal(writeBudgetUsed(block), 0);
  });

  test('counts past 4 GiB without wrapping', () => {
    const block = createControlBlock();
    resetWriteBudget(block, 8 * 1024 ** 3);
    assert.equal(tryConsumeWriteBudget(block, 5 * 1024 ** 3), true);
    assert.equal(writeBudgetUsed(block), 5 * 1024 ** 3);
  });
});
