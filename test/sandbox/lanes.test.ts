/**
 * Lanes (a socket per sandbox worker, straight to the server) and the instance a worker makes ahead of a run:
 * frames are cut and refused exactly; a process that is not the sandbox process cannot open a lane or break
 * the server through one; an instance made ahead is always fresh, and a module with a start section is
 * never instantiated outside its run.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { SandboxProcess } from '../../src/sandbox/sandbox-process.js';
import { SandboxPool } from '../../src/sandbox/pool.js';
import { SANDBOX_ERROR, SandboxError } from '../../src/sandbox/errors.js';
import { FrameReader, LaneFrameError, encodeFrame } from '../../src/sandbox/lane-frames.js';
import { hasStartSection } from '../../src/wasm/index.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { wat } from '../helpers/wat.js';
import { fixture } from '../helpers/paths.js';
import { MIB, cGuest, limits, runToEnd, start, until } from './helpers.js';

/** A sandbox process made while TMPDIR names `dir` (where its lane directory goes). */
function sandboxUnder(dir: string): SandboxProcess {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    return new SandboxProcess({ size: 1 });
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

/** Prints the number of runs this instance has seen (as a digit) and counts one more: a reused instance prints 1. */
const COUNTER = `(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $runs (mut i32) (i32.const 0))
  (data (i32.const 16) "?\\n")
  (func (export "_start")
    (i32.store8 (i32.const 16) (i32.add (i32.const 48) (global.get $runs)))
    (global.set $runs (i32.add (global.get $runs) (i32.const 1)))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))`;

/**
 * Its start function (run as it instantiates) counts itself in a global; _start prints the count. WASI calls
 * from a start function cannot reach memory (the host binds it as _start is called), so the start function
 * only counts.
 */
const STARTS = `(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $starts (mut i32) (i32.const 0))
  (data (i32.const 16) "?\\n")
  (func $start (global.set $starts (i32.add (global.get $starts) (i32.const 1))))
  (start $start)
  (func (export "_start")
    (i32.store8 (i32.const 16) (i32.add (i32.const 48) (global.get $starts)))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))`;

describe('lane frames', () => {
  test('a frame cut anywhere is read whole, once, in order; its byte field travels raw and comes back as bytes', () => {
    const values = [
      { t: 'out', runId: 1, stream: 1, bytes: new Uint8Array([1, 2, 3, 0, 255]) },
      { t: 'done', runId: 1, outcome: { kind: 'exit', code: 0 }, writtenBytes: 0 },
      { t: 'run', runId: 2, stdin: Buffer.from('{"id":1}\n'), text: 'x'.repeat(3000), nothing: null },
    ];
    const stream = Buffer.concat(values.map(encodeFrame));
    for (const cut of [1, 3, 4, 5, 9, 17, stream.length - 1]) {
      const reader = new FrameReader(1 << 20);
      const seen: unknown[] = [];
      reader.push(stream.subarray(0, cut), (value) => seen.push(value));
      reader.push(stream.subarray(cut), (value) => seen.push(value));
      assert.deepEqual(seen, [values[0], values[1], { ...values[2], stdin: new Uint8Array(values[2].stdin as Buffer) }], `cut at ${cut}`);
    }
  });

  test('a frame past the cap, a header that is not a JSON object, or a raw field no message has is refused by name', () => {
    const frame = (header: string, raw = Buffer.alloc(0)) => {
      const json = Buffer.from(header);
      const out = Buffer.alloc(8 + json.length + raw.length);
      out.writeUInt32BE(4 + json.length + raw.length, 0);
      out.writeUInt32BE(json.length, 4);
      json.copy(out, 8);
      raw.copy(out, 8 + json.length);
      return out;
    };
    const refusedWith = (bytes: Buffer, pattern: RegExp) => assert.throws(() => new FrameReader(1024).push(bytes, () => undefined), (error: unknown) =>
      error instanceof LaneFrameError && pattern.test(error.message));
    const big = Buffer.alloc(4);
    big.writeUInt32BE(0xffffffff, 0);
    refusedWith(big, /4294967295 bytes is past the cap of 1024/);
    refusedWith(frame('{"t":'), /not JSON/);
    refusedWith(frame('[1,2]'), /not an object/);
    refusedWith(frame('{"t":"out","$bin":"__proto__"}', Buffer.from([1])), /raw field no message has/);
    refusedWith(frame('{"t":"done"}', Buffer.from([1])), /bytes no field names/);
    const lying = frame('{}');
    lying.writeUInt32BE(500, 4);
    refusedWith(lying, /header runs past the frame/);
  });
});

describe('which modules get an instance made ahead', () => {
  test('a start section is found from the section headers', async () => {
    assert.equal(hasStartSection(await wat(STARTS)), true);
    assert.equal(hasStartSection(await wat(COUNTER)), false);
  });

  test('none for a module with a start section (its code would run outside a run) or one linked per run (subako_http)', async () => {
    const pool = new SandboxPool({ size: 1 });
    try {
      assert.equal((await pool.compile(await wat(COUNTER), { memoryBytes: MIB })).premade, true);
      assert.equal((await pool.compile(await wat(STARTS), { memoryBytes: MIB })).premade, false);
      const http = readFileSync(fixture('c', 'sandbox', 'http-then-write.wasm'));
      assert.equal((await pool.compile(http, { memoryBytes: 64 * MIB })).premade, false);
    } finally {
      await pool.close();
    }
  });
});

for (const [name, make] of [
  ['a sandbox process', () => new SandboxProcess({ size: 1 })],
  ['a pool in this process', () => new SandboxPool({ size: 1 })],
] as Array<[string, () => Sandbox & { close(): Promise<void> }]>) {
  describe(`instances made ahead, ${name}`, () => {
    const sandbox = make();
    after(() => sandbox.close());

    test('every run starts on a fresh instance: its globals and memory are as the module declares them', async () => {
      const counter = await sandbox.compile(await wat(COUNTER), { memoryBytes: MIB });
      for (let run = 0; run < 4; run++) {
        const { result, stdout } = await runToEnd(sandbox, counter);
        assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
        assert.equal(stdout, '0\n', `run ${run}`);
      }
    });

    test('a module with a start section runs it once per run, on an instance of its own', async () => {
      const starts = await sandbox.compile(await wat(STARTS), { memoryBytes: MIB });
      for (let run = 0; run < 3; run++) {
        const { result, stdout } = await runToEnd(sandbox, starts);
        assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
        assert.equal(stdout, '1\n', `run ${run}`);
      }
    });
  });
}

describe('the lane socket, attacked from outside the sandbox process', () => {
  const sandbox = new SandboxProcess({ size: 1 });
  after(() => sandbox.close());

  /** Connects, writes `bytes`, and resolves once the server has closed the connection. */
  const refused = (bytes: Buffer) => new Promise<void>((resolve, reject) => {
    const socket = connect(sandbox.lanePath, () => socket.write(bytes));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
    socket.on('data', () => reject(new Error('the server answered a stranger')));
    socket.resume();
  });

  test('the socket sits in a directory only this user can enter, gone when the sandbox closes', async () => {
    assert.equal(statSync(dirname(sandbox.lanePath)).mode & 0o777, 0o700);
    const other = new SandboxProcess({ size: 1 });
    const dir = dirname(other.lanePath);
    await other.close();
    assert.equal(existsSync(dir), false);
  });

  test('workers that cannot open their lanes make the sandbox refuse runs, saying why', async () => {
    const cut = new SandboxProcess({ size: 1 });
    try {
      // The socket is gone before any worker can reach it.
      rmSync(cut.lanePath, { force: true });
      const echo = await cut.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
      const handle = cut.run(echo, { args: [], env: [], preopens: [], limits: limits() });
      await assert.rejects(handle.result, (error: unknown) =>
        error instanceof SandboxError && error.code === SANDBOX_ERROR.workerFailed && /could not open its lane to the server/.test(error.message));
      assert.throws(() => cut.run(echo, { args: [], env: [], preopens: [], limits: limits() }), /could not open its lane/);
    } finally {
      await cut.close();
    }
  });

  test('a lane directory left by a server killed outright is removed by the next sandbox made there; a live process\'s and a symlink stay', async () => {
    const place = join(process.env.TMPDIR ?? '/tmp', `lane-dirs-${process.pid}`);
    mkdirSync(place, { recursive: true });
    // A process that has ended: its pid names the leftover (its socket file inside, as a killed server leaves it).
    const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(ended.stdout);
    const leftover = join(place, `subako-lanes-${deadPid}-AbC123`);
    mkdirSync(join(leftover));
    writeFileSync(join(leftover, 'lanes.sock'), '');
    const live = join(place, `subako-lanes-${process.ppid}-XyZ789`);
    mkdirSync(live);
    const target = join(place, 'not-lanes');
    mkdirSync(target);
    writeFileSync(join(target, 'keep'), 'kept');
    symlinkSync(target, join(place, `subako-lanes-${deadPid}-Sym456`));
    const other = sandboxUnder(place);
    try {
      assert.equal(existsSync(leftover), false, 'the ended process\'s directory is gone');
      assert.equal(existsSync(live), true, 'a running process\'s directory stays');
      assert.equal(readFileSync(join(target, 'keep'), 'utf8'), 'kept', 'a symlink is not followed');
      assert.equal(dirname(other.lanePath).startsWith(join(place, `subako-lanes-${process.pid}-`)), true, other.lanePath);
      const echo = await other.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
      assert.equal((await runToEnd(other, echo, {}, 'here\n')).stdout, '1:here\n');
    } finally {
      await other.close();
      rmSync(place, { recursive: true, force: true });
    }
  });

  test('under a TMPDIR too long for a socket path, the lanes go under /tmp and calls run', async () => {
    const long = join(process.env.TMPDIR ?? '/tmp', 'x'.repeat(100));
    mkdirSync(long, { recursive: true });
    const other = sandboxUnder(long);
    try {
      assert.ok(Buffer.byteLength(other.lanePath) <= 100, other.lanePath);
      const echo = await other.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
      const { stdout } = await runToEnd(other, echo, {}, 'long\n');
      assert.equal(stdout, '1:long\n');
    } finally {
      await other.close();
      rmSync(long, { recursive: true, force: true });
    }
  });

  test('a hello with a token the server did not give, a frame past the cap and garbage are all dropped', async () => {
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    await refused(encodeFrame({ t: 'hello', token: 'ab'.repeat(32), laneId: 1 }));
    await refused(encodeFrame({ t: 'hello', token: 'not hex at all', laneId: 2 }));
    const huge = Buffer.alloc(4);
    huge.writeUInt32BE(0x7fffffff, 0);
    await refused(huge);
    await refused(Buffer.concat([Buffer.from([0, 0, 0, 4]), Buffer.from([0xff, 0xff, 0xff, 0xff])]));
    await refused(encodeFrame({ t: 'done', runId: 1, outcome: { kind: 'exit', code: 0 } }));
    // The sandbox serves as before.
    const { result, stdout } = await runToEnd(sandbox, echo, {}, 'after\n');
    assert.deepEqual(result.outcome, { kind: 'exit', code: 0 });
    assert.equal(stdout, '1:after\n');
  });
});

/**
 * A sandbox process a guest has taken over knows its token and can open lanes and lie on them. Whatever it
 * says, the server stays up, holds the run to its limits, and believes no number beyond what the run allowed.
 */
describe('a lane that lies, from a sandbox process that is not ours any more', () => {
  const sandbox = new SandboxProcess({ size: 1 });
  after(() => sandbox.close());
  const child = () => (sandbox as unknown as { child: { token: Buffer; lanes: Map<number, unknown> } }).child;
  const token = (): string => child().token.toString('hex');
  const laneCount = (): number => child().lanes.size;
  let nextLaneId = 1000;

  /** Opens a lane with the process's token; `runs` yields each run frame the server sends it. */
  const openLane = async () => {
    const socket = connect(sandbox.lanePath);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const runs: Array<Record<string, unknown>> = [];
    const frames = new FrameReader(1 << 24);
    socket.on('data', (chunk: Buffer) => frames.push(chunk, (value) => runs.push(value as Record<string, unknown>)));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(encodeFrame({ t: 'hello', token: token(), laneId: nextLaneId++ }));
    return { socket, runs, closed, send: (message: object) => socket.write(encodeFrame(message)) };
  };

  test('output past the stdout cap ends the run as stdout_limit, and reported byte counts are held to the run\'s budget', async () => {
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    await runToEnd(sandbox, echo, {}, 'warm\n'); // the real worker's lane is open and idle
    const liar = await openLane();
    // The lane opened last is the first free one: the next run goes to it.
    await until(() => laneCount() === 2);
    const flooded = start(sandbox, echo, { limits: limits({ stdoutBytes: 1000 }) });
    await until(() => liar.runs.length === 1);
    const runId = liar.runs[0].runId;
    liar.send({ t: 'out', runId, stream: 1, bytes: new Uint8Array(800) });
    liar.send({ t: 'out', runId, stream: 1, bytes: new Uint8Array(800) });
    liar.send({ t: 'done', runId, outcome: { kind: 'exit', code: 0 }, writtenBytes: 5e18 });
    const { result } = await flooded.finished;
    assert.deepEqual(result.outcome, { kind: 'stdout_limit' });

    liar.socket.destroy();
    // A lane whose connection closed without its process's word is gone a moment later.
    await until(() => laneCount() === 1);
    const liar2 = await openLane();
    await until(() => laneCount() === 2);
    const lying = start(sandbox, echo, { limits: limits({ writeBudgetBytes: 4096 }) });
    await until(() => liar2.runs.length === 1);
    liar2.send({ t: 'done', runId: liar2.runs[0].runId, outcome: { kind: 'exit', code: 0, extra: 'x' }, writtenBytes: 5e18 });
    const lied = await lying.finished;
    assert.equal(lied.result.writtenBytes, 4096, 'no more than the run was allowed to write');
    liar2.socket.destroy();
    await until(() => laneCount() === 1);
    // The real worker still serves.
    const after = await runToEnd(sandbox, echo, {}, 'still\n');
    assert.equal(after.stdout, '1:still\n');
  });

  test('a flood of lanes is refused past twice the workers; an end the server does not know is taken as a trap', async () => {
    const lanes = [await openLane()];
    await until(() => laneCount() === 2);
    // The real lane and one liar fill 2 × size: the next liar's connection is closed.
    const refused = await openLane();
    await refused.closed;
    assert.equal(laneCount(), 2);
    const echo = await sandbox.compile(cGuest('echo-lines'), { memoryBytes: 64 * MIB });
    const odd = start(sandbox, echo);
    await until(() => lanes.some((lane) => lane.runs.length > 0));
    const taken = lanes.find((lane) => lane.runs.length > 0)!;
    taken.send({ t: 'done', runId: taken.runs[0].runId, outcome: { kind: 'sandbox_crashed', message: 'made up' }, writtenBytes: -1 });
    const { result } = await odd.finished;
    assert.equal(result.outcome.kind, 'trap');
    assert.equal(result.writtenBytes, 0);
    for (const lane of lanes) lane.socket.destroy();
  });
});
