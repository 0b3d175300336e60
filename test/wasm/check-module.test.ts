import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkModule, FORMAT_ONLY_RULES, type ModuleCheck } from '../../src/wasm/index.js';
import { FUNCTION_MODULE_RULES } from '../../src/package/module-rules.js';
import { wat } from '../helpers/wat.js';
import { builtFixture, FUNC, I32, moduleOf, packageWith, section, vec, watFixture } from './module-builder.js';

const check = (bytes: Uint8Array): ModuleCheck => checkModule(bytes, FUNCTION_MODULE_RULES);
const codes = (result: ModuleCheck): string[] => result.problems.map((p) => p.code).sort();
const problem = (result: ModuleCheck, code: string): string => {
  const found = result.problems.find((p) => p.code === code);
  assert.ok(found, `expected a ${code} problem, got ${JSON.stringify(result.problems)}`);
  return found.message;
};

async function refusedFor(fixtureName: string, code: string): Promise<string> {
  const result = check(await watFixture(fixtureName));
  assert.equal(result.ok, false);
  assert.deepEqual([...new Set(codes(result))], [code], JSON.stringify(result.problems));
  return problem(result, code);
}

describe('what is accepted', () => {
  test('a WASI command exporting _start and memory, importing preview 1 and subako_http, is accepted', async () => {
    const result = check(await watFixture('valid-function'));
    assert.deepEqual(result.problems, []);
    assert.equal(result.ok, true);
    assert.equal(result.info.kind, 'module');
    assert.deepEqual(result.info.exports.map((e) => e.name).sort(), ['_start', 'memory']);
    assert.equal(result.info.imports.length, 5);
    assert.deepEqual(result.info.memory, { min: 1, max: null, shared: false, is64: false, imported: false });
  });

  test('bulk memory, reference types, multi-value, sign extension, sat float-to-int, SIMD128 and mutable globals are allowed', async () => {
    const bytes = await watFixture('allowed-features');
    assert.equal(WebAssembly.validate(bytes), true);
    assert.deepEqual(check(bytes).problems, []);
  });

  test('a C module from clang and wasi-libc is accepted', async () => {
    for (const name of ['wasi-command.wasm', 'http-client.wasm']) {
      const result = check(await builtFixture('c', 'toolchain', name));
      assert.deepEqual(result.problems, [], name);
    }
  });

  test('the C module importing subako_http really imports both functions', async () => {
    const result = check(await builtFixture('c', 'toolchain', 'http-client.wasm'));
    const http = result.info.imports.filter((i) => i.module === 'subako_http').map((i) => i.name).sort();
    assert.deepEqual(http, ['read_response', 'request']);
  });

  test('an AssemblyScript module built with the WASI shim is accepted', async () => {
    const result = check(await builtFixture('as', 'wasi-command.wasm'));
    assert.deepEqual(result.problems, []);
    assert.ok(result.info.imports.every((i) => i.module === 'wasi_snapshot_preview1'));
  });
});

describe('format: not WebAssembly, a component, or malformed', () => {
  test('bytes that are not WebAssembly are format.not-wasm, with a hint at what they are', () => {
    const cases: Array<[Uint8Array, RegExp]> = [
      [new Uint8Array(), /empty/],
      [new TextEncoder().encode('(module (func))'), /WebAssembly text/],
      [new TextEncoder().encode(';; a comment\n  (; block ;) (module)'), /WebAssembly text/],
      [new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), /ELF/],
      [new TextEncoder().encode('{"abi": 1}'), /JSON/],
      [new Uint8Array([1, 2, 3]), /magic/],
    ];
    for (const [bytes, hint] of cases) {
      const result = check(bytes);
      assert.deepEqual(codes(result), ['format.not-wasm']);
      assert.match(problem(result, 'format.not-wasm'), hint);
      assert.equal(result.info.kind, 'unknown');
    }
  });

  test('a component (layer 1) is format.component and the message says to build a core module', () => {
    const component = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]);
    const result = check(component);
    assert.deepEqual(codes(result), ['format.component']);
    assert.match(problem(result, 'format.component'), /wasm32-wasip1/);
    assert.equal(result.info.kind, 'component');
  });

  test('a header that is cut short, or names another version, is format.malformed', () => {
    assert.deepEqual(codes(check(new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01]))), ['format.malformed']);
    assert.match(problem(check(new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x02, 0, 0, 0])), 'format.malformed'), /version 2/);
  });

  test('a truncated module is format.malformed and the message says where', async () => {
    const bytes = await watFixture('valid-function');
    const result = check(bytes.subarray(0, bytes.length - 3));
    assert.equal(result.ok, false);
    assert.deepEqual([...new Set(codes(result))], ['format.malformed']);
    assert.match(problem(result, 'format.malformed'), /byte offset 0x[0-9a-f]+.*truncated/);
  });

  test('an unknown opcode, misordered sections and a missing body are each format.malformed', () => {
    const unknownOpcode = packageWith({ start: [0x17] });
    assert.match(problem(check(unknownOpcode), 'format.malformed'), /unknown opcode 0x17/);
    const typeAfterFunction = moduleOf(section(3, vec([])), section(1, vec([])));
    assert.match(problem(check(typeAfterFunction), 'format.malformed'), /type section is repeated or out of order/);
    const noBody = moduleOf(section(1, vec([[FUNC, 0, 0]])), section(3, vec([[0]])));
    assert.match(problem(check(noBody), 'format.malformed'), /declares 1 functions but has 0 function bodies/);
  });

  test('a module our decoder reads but the engine finds ill-typed is format.malformed', () => {
    const illTyped = packageWith({ start: [0x41, 0x01] }); // leaves an i32 on the stack of a () -> () function
    const result = check(illTyped);
    assert.deepEqual(codes(result), ['format.malformed']);
    assert.match(problem(result, 'format.malformed'), /not valid WebAssembly/);
  });

  test('a malformed export section does not also claim that the exports are missing', () => {
    const badExports = moduleOf(section(1, vec([[FUNC, 0, 0]])), section(3, vec([[0]])), section(7, [0x05, 0x01]),
      section(10, vec([[2, 0, 0x0b]])));
    assert.ok(!codes(check(badExports)).includes('export.missing'));
  });
});

describe('exports: _start () -> () and memory', () => {
  test('no _start is export.missing', async () => {
    assert.match(await refusedFor('export-missing-start', 'export.missing'), /"_start"/);
  });
  test('no exported memory is export.missing', async () => {
    assert.match(await refusedFor('export-missing-memory', 'export.missing'), /"memory"/);
  });
  test('_start with parameters or results is export.type and names both signatures', async () => {
    const message = await refusedFor('export-start-signature', 'export.type');
    assert.match(message, /\(i32\) -> \(i32\)/);
    assert.match(message, /\(\) -> \(\)/);
  });
  test('_start that is not a function is export.type', async () => {
    assert.match(await refusedFor('export-start-not-function', 'export.type'), /is a global/);
  });
  test('"memory" that is not a memory is export.type', async () => {
    assert.match(await refusedFor('export-memory-not-memory', 'export.type'), /"memory" is a table/);
  });
});

describe('imports: only preview 1 and subako_http, with exact signatures, only functions', () => {
  test('an import from another module is import.module and lists the modules provided', async () => {
    const message = await refusedFor('import-module', 'import.module');
    assert.match(message, /"env"/);
    assert.match(message, /"wasi_snapshot_preview1", "subako_http"/);
  });
  test('a function a provided module does not have is import.name, with a suggestion', async () => {
    const result = check(await watFixture('import-name'));
    assert.deepEqual(codes(result), ['import.name', 'import.name']);
    assert.ok(result.problems.some((p) => /"fd_wrte".*Did you mean "fd_write"/.test(p.message)));
    assert.ok(result.problems.some((p) => /"fetch".*"request", "read_response"/.test(p.message)));
  });
  test('a provided function with another signature is import.signature, naming the expected one', async () => {
    const result = check(await watFixture('import-signature'));
    assert.deepEqual(codes(result), ['import.signature', 'import.signature']);
    assert.ok(result.problems.some((p) => p.message.includes('(i32, i64, i32, i32) -> (i32)') && p.message.includes('(i32, i32, i32, i32) -> (i32)')));
    assert.ok(result.problems.some((p) => p.message.includes('(i32, i32) -> ()') && p.message.includes('(i32, i32) -> (i32)')));
  });
  test('an imported memory, table or global is import.kind', async () => {
    const result = check(await watFixture('import-kind'));
    assert.deepEqual(codes(result), ['import.kind', 'import.kind', 'import.kind']);
    assert.match(result.problems.map((p) => p.message).join('\n'), /is a memory[\s\S]*is a table[\s\S]*is a global/);
  });
});

describe('features: WebAssembly 2.0 without threads, exceptions, tail calls, memory64, multi-memory, relaxed SIMD, GC', () => {
  test('shared memory, try/catch and return_call are refused although WebAssembly.validate accepts them on Node 20', async () => {
    const cases: Array<[string, string]> = [
      ['feature-threads-shared-memory', 'feature.threads'],
      ['feature-exceptions-try-catch', 'feature.exceptions'],
      ['feature-tail-call', 'feature.tail-call'],
    ];
    for (const [name, code] of cases) {
      const bytes = await watFixture(name);
      assert.equal(WebAssembly.validate(bytes), true, `${name}: V8 on this Node accepts it`);
      const result = check(bytes);
      assert.equal(result.ok, false);
      assert.deepEqual(codes(result), [code], name);
    }
  });

  test('a shared memory is feature.threads and the message says how to build instead', async () => {
    assert.match(await refusedFor('feature-threads-shared-memory', 'feature.threads'), /shared memory[\s\S]*single-threaded/);
  });
  test('atomic instructions on an unshared memory are feature.threads', async () => {
    assert.match(await refusedFor('feature-threads-atomics', 'feature.threads'), /atomic 0x1e in function 0[\s\S]*1 more place/);
  });
  test('try/catch/throw is feature.exceptions', async () => {
    assert.match(await refusedFor('feature-exceptions-try-catch', 'feature.exceptions'), /exception handling/);
  });
  test('a tag section and an exported tag, with no instruction, are feature.exceptions', async () => {
    assert.match(await refusedFor('feature-exceptions-tag', 'feature.exceptions'), /tag section/);
  });
  test('try_table and exnref (hand-encoded) are feature.exceptions', () => {
    const tryTable = packageWith({ start: [0x1f, 0x40, 0x00, 0x0b] });
    assert.deepEqual(codes(check(tryTable)), ['feature.exceptions']);
    const exnrefParam = packageWith({ types: [[FUNC, 1, 0x69, 0]] });
    assert.deepEqual(codes(check(exnrefParam)), ['feature.exceptions']);
  });
  test('return_call and return_call_indirect are feature.tail-call', async () => {
    assert.match(await refusedFor('feature-tail-call', 'feature.tail-call'), /return_call_indirect in function 1[\s\S]*1 more place/);
  });
  test('a 64-bit memory is feature.memory64', async () => {
    assert.match(await refusedFor('feature-memory64', 'feature.memory64'), /64-bit memory/);
  });
  test('a second memory is feature.multi-memory', async () => {
    assert.match(await refusedFor('feature-multi-memory', 'feature.multi-memory'), /multiple memories/);
  });
  test('relaxed SIMD is feature.relaxed-simd while plain SIMD is not', async () => {
    assert.match(await refusedFor('feature-relaxed-simd', 'feature.relaxed-simd'), /f32x4\.relaxed_madd/);
  });
  test('arithmetic in a constant expression is feature.extended-const', async () => {
    assert.match(await refusedFor('feature-extended-const', 'feature.extended-const'), /initializer of global 1/);
  });

  describe('GC and typed function references (hand-encoded: wabt cannot write them)', () => {
    test('a struct type is feature.gc even when nothing uses it', () => {
      const struct = packageWith({ types: [[0x5f, 1, I32, 1]] });
      assert.match(problem(check(struct), 'feature.gc'), /struct type in type 1/);
      assert.deepEqual(codes(check(struct)), ['feature.gc']);
    });
    test('an array type, a recursive group and a subtype are feature.gc', () => {
      for (const type of [[0x5e, I32, 0], [0x4e, 1, FUNC, 0, 0], [0x50, 0, FUNC, 0, 0]]) {
        assert.deepEqual(codes(check(packageWith({ types: [type] }))), ['feature.gc'], JSON.stringify(type));
      }
    });
    test('a typed function reference in a signature is feature.gc', () => {
      const typedRef = packageWith({ types: [[FUNC, 1, 0x63, 0x00, 0]] }); // (param (ref null 0))
      assert.match(problem(check(typedRef), 'feature.gc'), /typed reference/);
    });
    test('call_ref and ref.as_non_null are feature.gc', () => {
      const callRef = packageWith({ start: [0xd2, 0x00, 0xd3, 0x14, 0x00] });
      assert.match(problem(check(callRef), 'feature.gc'), /ref\.as_non_null in function 0[\s\S]*1 more place/);
    });
    test('a 0xFB instruction is feature.gc, and decoding goes on past it to find a tail call too', () => {
      const bytes = packageWith({ start: [0x41, 0x01, 0xfb, 0x1c, 0x1a, 0x12, 0x00] }); // ref.i31, drop, return_call 0
      assert.deepEqual(codes(check(bytes)), ['feature.gc', 'feature.tail-call']);
    });
    test('a GC heap type in ref.null is feature.gc', () => {
      assert.deepEqual(codes(check(packageWith({ start: [0xd0, 0x6e, 0x1a] }))), ['feature.gc']); // ref.null any
    });
  });
});

describe('every problem at once', () => {
  test('a module breaking several rules gets one problem for each', async () => {
    const result = check(await watFixture('many-problems'));
    assert.deepEqual(codes(result), [
      'export.missing', 'export.missing', 'feature.tail-call', 'feature.threads', 'import.module', 'import.name',
    ]);
  });
});

describe('format and feature checks only (subako wasi)', () => {
  test('a module with other imports and no _start passes the format-only rules', async () => {
    const bytes = await wat('(module (import "env" "f" (func)) (func (export "main")))');
    assert.deepEqual(checkModule(bytes, FORMAT_ONLY_RULES).problems, []);
    assert.deepEqual(codes(check(bytes)), ['export.missing', 'export.missing', 'import.module']);
  });
  test('features are still refused under the format-only rules', async () => {
    const result = checkModule(await watFixture('feature-threads-shared-memory'), FORMAT_ONLY_RULES);
    assert.deepEqual(codes(result), ['feature.threads']);
  });
});
