/**
 * Finding 2 of issue 11: tables were neither counted nor capped. A 294-byte module with 40 tables of
 * 10,000,000 elements passed every check and ended the process at instantiation ("Reached heap limit");
 * a module growing its tables at call time killed the server in one call. Now the upload refuses the
 * first (`limit.tables`, `limit.table-elements`), the rewrite before compiling gives every table a maximum
 * at the cap, and `table.grow` past it returns -1: the guest sees the failure and the host keeps serving.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkFunctionModule } from '../../src/package/module-rules.js';
import { checkPackage } from '../../src/package/check-package.js';
import { packBundle } from '../../src/package/index.js';
import { FunctionHost } from '../../src/function/host.js';
import { MODULE_LIMITS, ModuleLimitError } from '../../src/wasm/index.js';
import { wat } from '../helpers/wat.js';
import { mcpGuest, WORK_TOOL } from '../helpers/wat-mcp-guest.js';
import { GREET, Scratch } from '../function/guests.js';
import { startInProcess, tempDir, type InProcess } from '../server/helpers/harness.js';

const { tables: TABLES, tableElements: ELEMENTS } = MODULE_LIMITS;

/** The module of the finding: 40 tables of 10,000,000 funcref slots, and nothing else to speak of. */
function tableBombWat(tables = 40, elements = 10_000_000): string {
  const declared = Array.from({ length: tables }, () => `(table ${elements} funcref)`).join(' ');
  return `(module (memory (export "memory") 1) ${declared} (func (export "_start")))`;
}

/**
 * A guest within the caps (as many tables as allowed, each starting empty, with no maximum) whose
 * call grows every table in a loop, 10,000 slots at a time, until `table.grow` fails; then it asks for
 * 2^32-1 more slots at once. It answers "<sizes> <last grow result> <huge grow result>".
 */
function tableGrowerParts(): Parameters<typeof mcpGuest>[0] {
  const tables = Array.from({ length: TABLES }, (_, i) => `(table $t${i} 0 funcref)`).join('\n  ');
  const growEach = Array.from({ length: TABLES }, (_, i) => `
    (block $full${i}
      (loop $grow${i}
        (local.set $last (table.grow $t${i} (ref.null func) (i32.const 10000)))
        (br_if $full${i} (i32.eq (local.get $last) (i32.const -1)))
        (br $grow${i})))
    (call $emitNum (table.size $t${i})) (call $emitChar (i32.const 32))`).join('');
  return {
    fields: tables,
    work: `(local $last i32)
    ${growEach}
    (call $emitNum (local.get $last)) (call $emitChar (i32.const 32))
    (call $emitNum (table.grow $t0 (ref.null func) (i32.const -1)))`,
  };
}

const expectedAnswer = `${Array.from({ length: TABLES }, () => ELEMENTS).join(' ')} -1 -1`;

const textOf = (content: unknown): string => {
  const blocks = content as Array<{ type: string; text?: string }>;
  return blocks.filter((b) => b.type === 'text').map((b) => b.text).join('');
};

describe('the 40 x 10,000,000-table module is refused at upload', () => {
  test('checking it reports limit.tables, naming the count found and the cap', async () => {
    const bytes = await wat(tableBombWat());
    assert.ok(bytes.length < 400, `the bomb is ${bytes.length} bytes`);
    const check = checkFunctionModule(bytes);
    assert.equal(check.ok, false);
    const problem = check.problems.find((p) => p.code === 'limit.tables');
    assert.ok(problem, JSON.stringify(check.problems));
    assert.match(problem.message, /has 40 tables, imported and defined; the cap is 10\. /);
  });

  test('one table of 10,000,000 elements is limit.table-elements, with the cap and what to do', async () => {
    const check = checkFunctionModule(await wat(tableBombWat(1)));
    assert.deepEqual(check.problems.map((p) => p.code), ['limit.table-elements']);
    assert.match(check.problems[0].message, /table 0 starts with 10,000,000 elements; the cap is 100,000\. Declare a smaller initial size/);
  });

  test('as many tables as the cap, each at the element cap, are accepted', async () => {
    assert.deepEqual(checkFunctionModule(await wat(tableBombWat(TABLES, ELEMENTS))).problems, []);
  });

  test('checkPackage refuses a package directory holding it', async () => {
    const dir = tempDir('subako-bomb-');
    writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'bomb', description: 'Tables.' }));
    writeFileSync(join(dir, 'module.wasm'), await wat(tableBombWat()));
    const check = await checkPackage(dir);
    assert.equal(check.ok, false);
    assert.deepEqual(check.problems.map((p) => p.code), ['limit.tables']);
  });

  test('loading it unchecked is refused before anything is instantiated (ModuleLimitError)', async () => {
    const host = new FunctionHost({ poolSize: 1 });
    try {
      const source = { name: 'bomb', version: '1.0.0', moduleBytes: await wat(tableBombWat()), assetsDir: null };
      await assert.rejects(host.load(source), (error: unknown) => {
        assert.ok(error instanceof ModuleLimitError);
        assert.equal(error.code, 'limit.tables');
        assert.equal(error.found, 40);
        return true;
      });
    } finally {
      await host.close();
    }
  });
});

describe('a module that grows its tables at call time fails to grow, and the host keeps serving', () => {
  const scratch = new Scratch();
  let host: FunctionHost;
  before(() => { host = new FunctionHost({ poolSize: 1 }); });
  after(async () => { await host.close(); scratch.cleanup(); });

  test('every table stops at the cap: table.grow returns -1 there, and for 2^32-1 slots at once', async () => {
    const bytes = await mcpGuest(tableGrowerParts());
    assert.deepEqual(checkFunctionModule(bytes).problems, []);
    const loaded = await host.load({ name: 'grower', version: '1.0.0', moduleBytes: bytes, assetsDir: null });
    const discovery = await host.discover(loaded);
    assert.deepEqual(discovery.problems, []);
    const rssBefore = process.memoryUsage().rss;
    for (let call = 0; call < 3; call++) {
      const outcome = await host.call(loaded, WORK_TOOL, {}, { tmpDir: scratch.dir('tmp') });
      assert.equal(outcome.status, 'ok', JSON.stringify(outcome.crash));
      assert.equal(textOf(outcome.result?.content), expectedAnswer);
    }
    // Uncapped, each table would have grown to V8's 10,000,000 slots (about 50 bytes each): gigabytes.
    const grownMiB = (process.memoryUsage().rss - rssBefore) / (1024 * 1024);
    assert.ok(grownMiB < 512, `the process grew by ${grownMiB.toFixed(0)} MiB`);
  });

  test('the same host then serves another package', async () => {
    const greet = await host.load({ name: 'greet', version: '1.0.0', moduleBytes: GREET, assetsDir: null });
    const outcome = await host.call(greet, 'greet', { name: 'Ada' }, { tmpDir: scratch.dir('tmp') });
    assert.equal(outcome.status, 'ok');
    assert.match(textOf(outcome.result?.content), /Ada/);
  });
});

describe('through the server', () => {
  let s: InProcess;
  before(async () => { s = await startInProcess(); });
  after(async () => { await s.close(); });

  async function bundleOf(name: string, bytes: Uint8Array): Promise<Buffer> {
    const dir = tempDir('subako-pkg-');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name, description: 'A hostile tenant.', version: '1.0.0' }));
    writeFileSync(join(dir, 'module.wasm'), bytes);
    return packBundle(dir);
  }

  test('uploading the 40-table module answers 422 limit.tables', async () => {
    const upload = await s.call('POST', '/v1/packages', await bundleOf('bomb', await wat(tableBombWat())));
    assert.equal(upload.status, 422, JSON.stringify(upload.body));
    assert.equal(upload.body.error.code, 'limit.tables');
  });

  test('a session calling the table grower gets -1 each time, and the server answers the next calls', async () => {
    const upload = await s.call('POST', '/v1/packages', await bundleOf('grower', await mcpGuest(tableGrowerParts())));
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    const agent = await s.call('POST', '/v1/agents', { name: 'tenant', tools: [{ package: 'grower' }, { package: 'greet' }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    for (let call = 0; call < 2; call++) {
      const grown = await s.call('POST', `/v1/sessions/${session.body.id}/calls`, { tool: WORK_TOOL, arguments: {} });
      assert.equal(grown.status, 200, JSON.stringify(grown.body));
      assert.equal(grown.body.call.outcome, 'ok');
      assert.equal(textOf(grown.body.result.content), expectedAnswer);
    }
    const greeted = await s.call('POST', `/v1/sessions/${session.body.id}/calls`, { tool: 'greet', arguments: { name: 'Ada' } });
    assert.equal(greeted.status, 200, JSON.stringify(greeted.body));
    assert.match(textOf(greeted.body.result.content), /Ada/);
    assert.equal((await fetch(`${s.url}/v1/health`)).status, 200);
  });
});
