/**
 * A remote server's own tasks (the io.modelcontextprotocol/tasks extension) as subako's client meets them
 * (mcp/upstream-tasks.ts): a call that says what to do with one declares the extension; a task answer is taken off
 * the wire (the SDK client refuses it) and either passed to the caller (UpstreamTaskError, with the way back to the
 * server's tasks/get, tasks/update and tasks/cancel) or polled to its end. A call that says nothing declares nothing,
 * and the server answers it plainly. The server is the official v2 server SDK on loopback (helpers/task-upstream.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpClientPool } from '../../src/mcp/connection.js';
import { tools } from '../../src/mcp/client-api.js';
import { McpServerError } from '../../src/mcp/errors.js';
import { UpstreamTaskError, parseUpstreamTask, pollDelayMs, MIN_UPSTREAM_POLL_MS, MAX_UPSTREAM_POLL_MS } from '../../src/mcp/upstream-tasks.js';
import { CallCancelledError, type Tool } from '../../src/tool.js';
import { until } from '../helpers/eventually.js';
import { startTaskUpstream, type TaskUpstream } from './helpers/task-upstream.js';

let upstream: TaskUpstream;
const pool = new McpClientPool({ timeoutMs: 30_000 });
let job: Tool;

before(async () => {
  upstream = await startTaskUpstream({ pollIntervalMs: 20 });
  job = (await tools({ url: upstream.url, pool })).job;
});

after(async () => {
  await pool.closeAll();
  await upstream?.stop();
});

describe('a task a remote server keeps', () => {
  it('is not asked for by a call that does not take tasks: the server answers plainly', async () => {
    const result = await job.call({ label: 'plain-1' });
    assert.deepEqual(result.content, [{ type: 'text', text: 'plain plain-1' }]);
    assert.deepEqual(upstream.calls.at(-1), { label: 'plain-1', declaredTasks: false });
  });

  it('is polled to its end with `poll`, at the server\'s interval, and its result is the call\'s', async () => {
    const call = job.call({ label: 'poll-1' }, { upstreamTasks: 'poll' });
    await until('the server was asked about its task', () => upstream.requests.some((r) => r.startsWith('get up-') && r.endsWith('poll-1')));
    assert.deepEqual(upstream.calls.at(-1), { label: 'poll-1', declaredTasks: true });
    upstream.complete('poll-1', 'done poll-1');
    const result = await call;
    assert.deepEqual(result.content, [{ type: 'text', text: 'done poll-1' }]);
  });

  it('polled, fails the call with what the server said when its task failed', async () => {
    const call = job.call({ label: 'poll-2' }, { upstreamTasks: 'poll' });
    await until('the task was made', () => upstream.calls.some((c) => c.label === 'poll-2'));
    upstream.fail('poll-2', 'the disk is full');
    await assert.rejects(call, (err: unknown) => err instanceof McpServerError && /failed: the disk is full/.test(err.message));
  });

  it('polled, is cancelled on the server when the call is', async () => {
    const controller = new AbortController();
    const call = job.call({ label: 'poll-3' }, { upstreamTasks: 'poll', signal: controller.signal });
    await until('the server was asked about its task', () => upstream.requests.some((r) => r.startsWith('get ') && r.endsWith('poll-3')));
    controller.abort();
    await assert.rejects(call, CallCancelledError);
    await until('the server\'s task was cancelled', () => upstream.status('poll-3') === 'cancelled');
    assert.ok(upstream.requests.includes(`cancel ${upstream.taskOf('poll-3')}`));
  });

  it('polled, ends the call saying what was asked when the task asks for input, and is cancelled', async () => {
    const call = job.call({ label: 'poll-4' }, { upstreamTasks: 'poll' });
    await until('the task was made', () => upstream.calls.some((c) => c.label === 'poll-4'));
    upstream.askInput('poll-4');
    const result = await call;
    assert.equal(result.isError, true);
    assert.match(JSON.stringify(result.content), /asked for input \(confirm\)/);
    assert.equal(upstream.status('poll-4'), 'cancelled');
  });

  it('is passed to the caller with `pass`, who reaches it afterwards: get, update and cancel go to the server', async () => {
    const passed = await job.call({ label: 'pass-1' }, { upstreamTasks: 'pass' }).then(() => undefined, (err: unknown) => err);
    assert.ok(passed instanceof UpstreamTaskError, String(passed));
    const theirs = upstream.taskOf('pass-1');
    assert.equal(passed.task.taskId, theirs);
    assert.equal(passed.task.status, 'working');
    assert.equal(passed.task.pollIntervalMs, 20);
    assert.equal(passed.tool, 'job');
    assert.deepEqual(upstream.requests.filter((r) => r.includes('pass-1')), [], 'nothing polled: the caller holds it');

    upstream.askInput('pass-1');
    const asking = parseUpstreamTask(await passed.access.get(theirs));
    assert.equal(asking.status, 'input_required');
    assert.ok(asking.inputRequests?.confirm);
    await passed.access.update(theirs, { confirm: { action: 'accept', content: { ok: true } } });
    assert.ok(upstream.requests.includes(`update ${theirs} {"confirm":{"action":"accept","content":{"ok":true}}}`), upstream.requests.join('\n'));
    assert.equal(upstream.status('pass-1'), 'working');
    await passed.access.cancel(theirs);
    assert.equal(upstream.status('pass-1'), 'cancelled');
    assert.equal(parseUpstreamTask(await passed.access.get(theirs)).status, 'cancelled');
  });
});

describe('what a server says of a task is checked', () => {
  it('a task needs a usable id and one of the extension\'s statuses', () => {
    assert.throws(() => parseUpstreamTask({ taskId: '', status: 'working' }), /taskId/);
    assert.throws(() => parseUpstreamTask({ taskId: 'a b', status: 'working' }), /taskId/);
    assert.throws(() => parseUpstreamTask({ taskId: 'x'.repeat(257), status: 'working' }), /taskId/);
    assert.throws(() => parseUpstreamTask({ taskId: 't1', status: 'sleeping' }), /status "sleeping"/);
    assert.throws(() => parseUpstreamTask([]), /not an object/);
    const task = parseUpstreamTask({ taskId: 't1', status: 'failed', error: { code: -32603, message: 'm'.repeat(5000) }, pollIntervalMs: -5, ttlMs: 'long' });
    assert.equal(task.error?.message.length, 2000);
    assert.equal(task.pollIntervalMs, undefined);
    assert.equal(task.ttlMs, null);
  });

  it('a poll interval is kept within bounds whatever the server asks', () => {
    assert.equal(pollDelayMs({ pollIntervalMs: 0 }), MIN_UPSTREAM_POLL_MS);
    assert.equal(pollDelayMs({ pollIntervalMs: 86_400_000 }), MAX_UPSTREAM_POLL_MS);
    assert.equal(pollDelayMs({ pollIntervalMs: 500 }), 500);
    assert.equal(pollDelayMs({}), 1_000);
  });
});
