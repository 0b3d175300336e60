/**
 * Cancellation is not a timeout: a call whose signal aborts is stopped at once and ends as `cancelled` (not
 * a crash, not `timeout`), in FunctionHost.call's outcome and through Tool.call (which reports `cancelled` and
 * rejects with CallCancelledError); the worker it ran on is replaced and the next call is served.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FunctionHost } from '../../src/function/host.js';
import { CallCancelledError, type CallReport } from '../../src/tool.js';
import { GREET, probe, Scratch } from './guests.js';

// One worker, so the next call can only be served if the cancelled run's worker was replaced or reused.
let host: FunctionHost;
let scratch: Scratch;
const DEADLINE_MS = 20_000;
before(() => {
  host = new FunctionHost({ poolSize: 1, limits: { callTimeoutMs: DEADLINE_MS } });
  scratch = new Scratch();
});
after(async () => {
  await host.close();
  scratch.cleanup();
});

describe('a call whose caller goes away', () => {
  test('ends as cancelled, not a timeout crash, well before its deadline; the next call is served', async () => {
    const loaded = await host.load(probe());
    const controller = new AbortController();
    const started = performance.now();
    const call = host.call(loaded, 'timeout', {}, { tmpDir: scratch.dir('tmp'), signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    const outcome = await call;
    assert.equal(outcome.status, 'cancelled');
    assert.equal(outcome.crash, null);
    assert.ok(performance.now() - started < DEADLINE_MS / 2, 'the run went on towards its deadline');
    const greet = await host.load({ name: 'greet', moduleBytes: GREET, assetsDir: null });
    assert.equal((await host.call(greet, 'greet', { name: 'Ada' }, { tmpDir: scratch.dir('tmp') })).status, 'ok');
  });

  test('a signal already aborted stops the run at once', async () => {
    const loaded = await host.load(probe());
    const outcome = await host.call(loaded, 'timeout', {}, { tmpDir: scratch.dir('tmp'), signal: AbortSignal.abort() });
    assert.equal(outcome.status, 'cancelled');
  });

  test('Tool.call reports cancelled and rejects with CallCancelledError, as its contract says', async () => {
    const loaded = await host.load(probe());
    const tool = host.toolbox(loaded, [{ name: 'timeout', inputSchema: { type: 'object' } }], () => ({ tmpDir: scratch.dir('tmp') })).timeout;
    const controller = new AbortController();
    let report: CallReport | null = null;
    const call = tool.call({}, { signal: controller.signal, report: (r) => { report = r; } });
    setTimeout(() => controller.abort(), 200);
    await assert.rejects(call, (err: unknown) => err instanceof CallCancelledError && err.code === 'cancelled');
    assert.equal((report as CallReport | null)?.status, 'cancelled');
  });
});
