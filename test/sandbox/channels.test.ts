/**
 * The blocking channels: stdin fed by the main thread while the guest waits in fd_read (at no CPU
 * cost), stdout streamed back as it is written, and runs queued on a busy pool.
 */
import { ENTRY_COST_BYTES } from '../../src/wasi/index.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPool } from '../../src/sandbox/pool.js';
import type { CompiledModule } from '../../src/sandbox/types.js';
import { MIB, cGuest, delay, limits, runToEnd, start, until } from './helpers.js';

describe('stdin, stdout and the queue', () => {
  let pool: SandboxPool;
  let echo: CompiledModule;

  before(async () => {
    pool = new SandboxPool({ size: 2 });
    echo = await pool.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
  });
  after(() => pool.close());

  test('stdin fed in pieces is read across lines, and each answer streams back before stdin closes', async () => {
    const run = start(pool, echo);
    run.handle.writeStdin(Buffer.from('hel'));
    await delay(20);
    run.handle.writeStdin(Buffer.from('lo\nwor'));
    await until(() => run.stdoutSoFar() === '1:hello\n');
    run.handle.writeStdin(Buffer.from('ld\n\nlast line without newline'));
    await until(() => run.stdoutSoFar() === '1:hello\n2:world\n3:\n');
    run.handle.closeStdin();
    const { result, stdout, stderr } = await run.finished;
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    assert.equal(stdout, '1:hello\n2:world\n3:\n4:last line without newline');
    assert.equal(stderr, 'read 4 lines\n');
    assert.equal(result.stdoutBytes, Buffer.byteLength(stdout));
  });

  test('stdin given with the request is there when the guest starts; writes after closeStdin are ignored', async () => {
    const run = start(pool, echo, { stdin: Buffer.from('first\n') });
    run.handle.writeStdin(Buffer.from('second\n'));
    run.handle.closeStdin();
    run.handle.writeStdin(Buffer.from('ignored\n'));
    const { stdout } = await run.finished;
    assert.equal(stdout, '1:first\n2:second\n');
  });

  test('a large stdin arrives whole, in one chunk or many', async () => {
    const line = 'y'.repeat(999) + '\n';
    const big = line.repeat(3000);
    const { result, stdout } = await runToEnd(pool, echo, { limits: limits({ stdoutBytes: 8 * MIB }) }, big);
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    const expected = Array.from({ length: 3000 }, (_, i) => `${i + 1}:${line}`).join('');
    assert.equal(stdout, expected);
  });

  test('a guest blocked on stdin costs no CPU while it waits', async () => {
    const run = start(pool, echo);
    run.handle.writeStdin(Buffer.from('wake\n'));
    await until(() => run.stdoutSoFar() === '1:wake\n');
    await delay(50); // the guest is back in fd_read, waiting for its next line
    const cpuBefore = process.cpuUsage();
    const wallBefore = process.hrtime.bigint();
    await delay(2000);
    const cpu = process.cpuUsage(cpuBefore);
    const wallMicros = Number(process.hrtime.bigint() - wallBefore) / 1000;
    run.handle.closeStdin();
    const { result } = await run.finished;
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    const share = (cpu.user + cpu.system) / wallMicros;
    assert.ok(share < 0.05, `the waiting guest used ${(share * 100).toFixed(1)}% of a core`);
  });

  test('more runs than workers on a 2-worker pool all complete, each with its own output', async () => {
    const runs = Array.from({ length: 7 }, (_, i) => runToEnd(pool, echo, {}, `run ${i}\nsecond ${i}\n`));
    const done = await Promise.all(runs);
    done.forEach(({ result, stdout }, i) => {
      assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
      assert.equal(stdout, `1:run ${i}\n2:second ${i}\n`);
    });
  });

  test('args, environment and preopened directories reach the guest; file writes count against the budget', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'subako-sandbox-'));
    try {
      writeFileSync(join(dir, 'data.txt'), 'hello from the host\n');
      const command = await pool.compile(cGuest('command'), { memoryBytes: 64 * MIB });
      const { result, stdout } = await runToEnd(
        pool,
        command,
        {
          args: ['command.wasm', '3', 'two words'],
          env: ['GREETING=hi there'],
          preopens: [{ guestPath: '/data', hostPath: dir, readOnly: false }],
        },
        'piped in\n',
      );
      assert.deepEqual(result.outcome, { kind: 'exit', code: 3 });
      assert.equal(
        stdout,
        'arg[0]=command.wasm\narg[1]=3\narg[2]=two words\nGREETING=hi there\n' +
          'data.txt=hello from the host\npiped in\n',
      );
      assert.equal(readFileSync(join(dir, 'out.txt'), 'utf8'), 'written by the guest\n');
      assert.equal(result.writtenBytes, ENTRY_COST_BYTES + 'written by the guest\n'.length, 'the new file is charged as an entry too');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
