/**
 * Finding 7: one call made 200,000 directories (786 MB, 200k inodes) in 10 s with nothing charged, and no
 * volume had a quota across calls. Now every entry a run creates costs ENTRY_COST_BYTES of its write budget
 * and a run creates at most MAX_ENTRIES_PER_RUN; a session's /volume/tmp and an agent's /volume/data hold at
 * most their quota across calls, enforced with EDQUOT.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxProcess } from '../../src/sandbox/sandbox-process.js';
import { ENTRY_COST_BYTES, MAX_ENTRIES_PER_RUN } from '../../src/wasi/index.js';
import { packBundle } from '../../src/package/index.js';
import { wat } from '../helpers/wat.js';
import { MIB, limits, runToEnd } from '../sandbox/helpers.js';
import { probePackageDir, startInProcess, type InProcess } from '../server/helpers/harness.js';

const EDQUOT = 19; // WASI's errno for a full quota

/** Makes directories 00000000, 00000001, … in its first preopen until one fails; prints the count and the errno. */
const MKDIR_FLOOD = `(module
  (import "wasi_snapshot_preview1" "path_create_directory" (func $mkdir (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "0123456789abcdef")
  (func $name (param $n i32) (local $i i32)
    (loop $next
      (i32.store8 (i32.add (i32.const 100) (local.get $i))
        (i32.load8_u (i32.and (i32.shr_u (local.get $n) (i32.sub (i32.const 28) (i32.mul (local.get $i) (i32.const 4)))) (i32.const 15))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $next (i32.lt_u (local.get $i) (i32.const 8)))))
  (func (export "_start") (local $n i32) (local $err i32)
    (block $stop (loop $again
      (call $name (local.get $n))
      (local.set $err (call $mkdir (i32.const 3) (i32.const 100) (i32.const 8)))
      (br_if $stop (local.get $err))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $again)))
    (i32.store (i32.const 200) (local.get $n))
    (i32.store (i32.const 204) (local.get $err))
    (i32.store (i32.const 300) (i32.const 200))
    (i32.store (i32.const 304) (i32.const 8))
    (drop (call $fd_write (i32.const 1) (i32.const 300) (i32.const 1) (i32.const 400)))))`;

describe('directory floods', () => {
  let sandbox: SandboxProcess;
  let dir: string;
  before(() => {
    sandbox = new SandboxProcess({ size: 1 });
    dir = mkdtempSync(join(tmpdir(), 'subako-flood-'));
  });
  after(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function flood(into: string, writeBudgetBytes: number) {
    const guest = await sandbox.compile(await wat(MKDIR_FLOOD), { memoryBytes: 64 * MIB });
    const chunks: Buffer[] = [];
    const { result } = await runToEnd(sandbox, guest, {
      preopens: [{ guestPath: '/volume/tmp', hostPath: into, readOnly: false }],
      limits: limits({ writeBudgetBytes, timeoutMs: 60_000 }),
      onStdout: (chunk) => chunks.push(Buffer.from(chunk)),
    });
    const out = Buffer.concat(chunks);
    return { result, made: out.readInt32LE(0), errno: out.readInt32LE(4) };
  }

  test('each directory costs a fixed part of the write budget: a 40 KiB budget makes 10, then EDQUOT', async () => {
    const into = mkdtempSync(join(dir, 'small-'));
    const { result, made, errno } = await flood(into, 10 * ENTRY_COST_BYTES);
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    assert.equal(made, 10);
    assert.equal(errno, EDQUOT);
    assert.equal(result.writtenBytes, 10 * ENTRY_COST_BYTES);
    assert.equal(readdirSync(into).length, 10);
  });

  test('with the whole 1 GiB budget a run stops at the entry cap, not at 200,000 directories', async () => {
    const into = mkdtempSync(join(dir, 'large-'));
    const { result, made, errno } = await flood(into, 1024 * MIB);
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    assert.equal(made, MAX_ENTRIES_PER_RUN);
    assert.equal(errno, EDQUOT);
    assert.equal(readdirSync(into).length, MAX_ENTRIES_PER_RUN);
    assert.equal(result.writtenBytes, MAX_ENTRIES_PER_RUN * ENTRY_COST_BYTES, 'every directory was charged');
  });
});

describe('volume quotas across calls, through the server', () => {
  let s: InProcess;
  let sessionId: string;
  const text = (res: { body: any }): string => res.body.result.content.map((b: { text?: string }) => b.text ?? '').join('');
  const write = (path: string, bytes: number) =>
    s.call('POST', `/v1/sessions/${sessionId}/calls`, { tool: 'write_file', arguments: { path, text: 'q'.repeat(bytes) } });

  before(async () => {
    // Room for two files of 20 KiB and their entries (24 KiB each), not three.
    s = await startInProcess({ limits: { callTimeoutMs: 10_000, sessionVolumeBytes: 56 * 1024 } });
    assert.equal((await s.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const agent = await s.call('POST', '/v1/agents', { name: 'quota', tools: [{ package: 'probe' }] });
    sessionId = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id;
  });
  after(async () => { await s.close(); });

  // The probe's write_file ignores a failed fputs (stdio reports it only to a caller that checks), so what
  // the quota let through is read off the disk.
  const onDisk = (name: string) => statSync(join(s.dataDir, 'volumes', 'sessions', sessionId, 'tmp', name)).size;

  test("a session's /volume/tmp holds its quota across calls; the write past it gets EDQUOT", async () => {
    assert.match(text(await write('/volume/tmp/a.txt', 20 * 1024)), /^wrote /);
    assert.match(text(await write('/volume/tmp/b.txt', 20 * 1024)), /^wrote /);
    await write('/volume/tmp/c.txt', 20 * 1024);
    assert.equal(onDisk('a.txt'), 20 * 1024);
    assert.equal(onDisk('b.txt'), 20 * 1024);
    assert.equal(onDisk('c.txt'), 0, 'the third call had 8 KiB of the quota left: its file was made, its 20 KiB refused');
  });

  test('calls racing on one volume cannot together take more than is left', async () => {
    const agent = await s.call('POST', '/v1/agents', { name: 'quota-race', tools: [{ package: 'probe' }] });
    sessionId = (await s.call('POST', `/v1/agents/${agent.body.id}/sessions`, {})).body.id;
    await Promise.all([1, 2, 3, 4].map((i) => write(`/volume/tmp/r${i}.txt`, 20 * 1024)));
    const dir = join(s.dataDir, 'volumes', 'sessions', sessionId, 'tmp');
    const names = readdirSync(dir);
    const held = names.reduce((sum, name) => sum + 4096 + statSync(join(dir, name)).size, 0);
    assert.ok(held <= 56 * 1024, `the volume holds ${held} bytes, over its 56 KiB quota`);
    assert.ok(names.some((name) => statSync(join(dir, name)).size === 20 * 1024), 'at least one write landed');
  });
});
