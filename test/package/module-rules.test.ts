import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkFunctionModule, FUNCTION_MODULE_RULES, WASI_COMMAND_RULES } from '../../src/package/module-rules.js';
import { PREVIEW1_SIGNATURES } from '../../src/wasi/preview1.js';
import { SUBAKO_HTTP_SIGNATURES } from '../../src/sandbox/index.js';
import { checkModule } from '../../src/wasm/index.js';
import { wat } from '../helpers/wat.js';

const importLine = (module: string, name: string, sig: { params: readonly string[]; results: readonly string[] }): string =>
  `(import "${module}" "${name}" (func (param ${sig.params.join(' ')}) (result ${sig.results.join(' ')})))`;

describe('the ABI 1 module rules come from the preview 1 table', () => {
  test('a module importing every preview 1 function and both subako_http functions, exactly typed, is accepted', async () => {
    const imports = [
      ...Object.entries(PREVIEW1_SIGNATURES).map(([name, sig]) => importLine('wasi_snapshot_preview1', name, sig)),
      ...Object.entries(SUBAKO_HTTP_SIGNATURES).map(([name, sig]) => importLine('subako_http', name, sig)),
    ];
    const bytes = await wat(`(module ${imports.join('\n')} (memory (export "memory") 1) (func (export "_start")))`);
    const result = checkFunctionModule(bytes);
    assert.deepEqual(result.problems, []);
    assert.equal(result.info.imports.length, Object.keys(PREVIEW1_SIGNATURES).length + 2);
  });

  test('a preview 1 function with one parameter changed is refused with import.signature', async () => {
    const bytes = await wat(`(module (import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i32 i32) (result i32)))
      (memory (export "memory") 1) (func (export "_start")))`);
    assert.deepEqual(checkFunctionModule(bytes).problems.map((p) => p.code), ['import.signature']);
  });

  test('a name that only exists on Object.prototype is not a provided import', async () => {
    const bytes = await wat(`(module (import "wasi_snapshot_preview1" "toString" (func))
      (import "constructor" "x" (func)) (memory (export "memory") 1) (func (export "_start")))`);
    assert.deepEqual(checkFunctionModule(bytes).problems.map((p) => p.code), ['import.name', 'import.module']);
  });

  test('FUNCTION_MODULE_RULES require the exports; WASI_COMMAND_RULES check format and features only', async () => {
    assert.equal(FUNCTION_MODULE_RULES.requireFunctionExports, true);
    const bytes = await wat('(module (import "env" "f" (func)))');
    assert.deepEqual(checkModule(bytes, WASI_COMMAND_RULES).problems, []);
    assert.deepEqual(checkModule(bytes, FUNCTION_MODULE_RULES).problems.map((p) => p.code).sort(),
      ['export.missing', 'export.missing', 'import.module']);
  });
});
