/**
 * Call admission, on its own: per-session and per-agent limits, bounded queues, the deadline counting the
 * wait, and stopping a session's or an agent's calls. Deadlines here are tens of milliseconds.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CallAdmission, CallRefusedError, defaultCallAdmissionLimits, type AdmittedCall } from '../../src/platform/calls/call-admission.js';
import { NotFoundError } from '../../src/platform/errors.js';

const LONG = 60_000;
const limits = { sessionConcurrency: 2, sessionQueue: 2, agentConcurrency: 3, agentQueue: 3 };

/** Whether `call` has been given its turn (or refused one) by now, without waiting for it. */
async function turnOf(call: AdmittedCall): Promise<string> {
  return Promise.race([call.started, new Promise<string>((resolve) => setImmediate(() => resolve('waiting')))]);
}

describe('call admission', () => {
  it('a session runs at most sessionConcurrency calls at once; the next ones wait and start in arrival order', async () => {
    const admission = new CallAdmission(limits);
    const [a, b, c, d] = [1, 2, 3, 4].map(() => admission.admit('s1', 'a1', LONG));
    assert.deepEqual(await Promise.all([a, b, c, d].map(turnOf)), ['run', 'run', 'waiting', 'waiting']);
    a.end();
    assert.deepEqual(await Promise.all([c, d].map(turnOf)), ['run', 'waiting']);
    b.end();
    assert.equal(await turnOf(d), 'run');
    for (const call of [c, d]) call.end();
    assert.deepEqual(admission.inFlight('s1'), { running: 0, waiting: 0 });
  });

  it('limits read again as calls come and go (scale-out: the fleet\'s slots): grown, waiting calls start; shrunk, running ones are left to end', async () => {
    let sized = { sessionConcurrency: 1, sessionQueue: 4, agentConcurrency: 1, agentQueue: 4 };
    const admission = new CallAdmission(() => sized);
    const [a, b, c] = [1, 2, 3].map(() => admission.admit('s1', 'a1', LONG));
    assert.deepEqual(await Promise.all([a, b, c].map(turnOf)), ['run', 'waiting', 'waiting']);
    // A worker joins: the next arrival sees the larger share, and the calls waiting start before it.
    sized = { ...sized, sessionConcurrency: 3, agentConcurrency: 3 };
    const d = admission.admit('s1', 'a1', LONG);
    assert.deepEqual(await Promise.all([b, c, d].map(turnOf)), ['run', 'run', 'waiting']);
    // A worker leaves: nothing running is stopped; the waiting call starts only once the calls fit the smaller share.
    sized = { ...sized, sessionConcurrency: 2, agentConcurrency: 2 };
    a.end();
    assert.equal(await turnOf(d), 'waiting');
    b.end();
    assert.equal(await turnOf(d), 'run');
    for (const call of [c, d]) call.end();
    assert.deepEqual(admission.inFlight('s1'), { running: 0, waiting: 0 });
  });

  it('a call past a full session queue is refused at once, naming the session limit and a retry hint', () => {
    const admission = new CallAdmission(limits);
    const calls = [1, 2, 3, 4].map(() => admission.admit('s1', 'a1', LONG));
    assert.throws(() => admission.admit('s1', 'a1', LONG), (err: unknown) => {
      assert.ok(err instanceof CallRefusedError);
      assert.equal(err.code, 'too_many_calls');
      assert.equal(err.limit, 'session');
      assert.ok(err.retryAfterMs > 0);
      assert.match(err.message, /session s1 already runs 2 calls \(at most 2 at once\) and has 2 waiting \(at most 2\)/);
      return true;
    });
    for (const call of calls) call.end();
  });

  it('the agent limit counts all its sessions, and a full agent queue refuses naming the agent limit', () => {
    const admission = new CallAdmission(limits);
    const calls = [admission.admit('s1', 'a1', LONG), admission.admit('s1', 'a1', LONG)];
    calls.push(admission.admit('s2', 'a1', LONG)); // the agent's third and last slot
    for (let i = 0; i < 3; i++) calls.push(admission.admit(`s${3 + i}`, 'a1', LONG)); // three sessions wait on the agent
    assert.throws(() => admission.admit('s9', 'a1', LONG), (err: unknown) => err instanceof CallRefusedError && err.limit === 'agent');
    // Another agent is not concerned.
    assert.doesNotThrow(() => calls.push(admission.admit('t1', 'a2', LONG)));
    for (const call of calls) call.end();
  });

  it('a full session does not hold up the same agent\'s other sessions', async () => {
    const admission = new CallAdmission({ sessionConcurrency: 1, sessionQueue: 4, agentConcurrency: 2, agentQueue: 8 });
    const first = admission.admit('busy', 'a1', LONG);
    const other = admission.admit('other', 'a1', LONG); // the agent's second slot
    const busyWaiting = admission.admit('busy', 'a1', LONG);
    const otherWaiting = admission.admit('other', 'a1', LONG);
    const third = admission.admit('third', 'a1', LONG);
    assert.deepEqual(await Promise.all([first, other, busyWaiting, otherWaiting, third].map(turnOf)), ['run', 'run', 'waiting', 'waiting', 'waiting']);
    // `other` ends: its own next call and `third` are behind `busyWaiting` in the agent's queue, but busy is
    // still full, so the first call that may run is otherWaiting's.
    other.end();
    assert.deepEqual(await Promise.all([busyWaiting, otherWaiting, third].map(turnOf)), ['waiting', 'run', 'waiting']);
    for (const call of [first, busyWaiting, otherWaiting, third]) call.end();
  });

  it('a waiting call whose deadline passes ends as timeout without running; one that starts late gets only the rest', async () => {
    const admission = new CallAdmission({ sessionConcurrency: 1, sessionQueue: 4, agentConcurrency: 4, agentQueue: 8 });
    const holder = admission.admit('s1', 'a1', LONG);
    const doomed = admission.admit('s1', 'a1', 30);
    const patient = admission.admit('s1', 'a1', 10_000);
    assert.equal(await doomed.started, 'timeout');
    assert.ok(doomed.remainingMs() < 2, 'nothing (or a timer tick) is left of its deadline');
    assert.ok(doomed.waitedMs() >= 25, `waited ${doomed.waitedMs()} ms`);
    doomed.end();
    assert.equal(await turnOf(patient), 'waiting');
    await new Promise((resolve) => setTimeout(resolve, 40));
    holder.end();
    assert.equal(await patient.started, 'run');
    assert.ok(patient.waitedMs() >= 35, `waited ${patient.waitedMs()} ms`);
    assert.ok(patient.remainingMs() <= 10_000 - patient.waitedMs() + 1, 'the wait is taken off the deadline');
  });

  it('a caller that goes away while waiting leaves the queue', async () => {
    const admission = new CallAdmission({ sessionConcurrency: 1, sessionQueue: 1, agentConcurrency: 4, agentQueue: 8 });
    const holder = admission.admit('s1', 'a1', LONG);
    const caller = new AbortController();
    const waiting = admission.admit('s1', 'a1', LONG, caller.signal);
    assert.throws(() => admission.admit('s1', 'a1', LONG), CallRefusedError);
    caller.abort();
    assert.equal(await waiting.started, 'cancelled');
    assert.ok(waiting.signal.aborted, 'the call\'s own signal follows the caller\'s');
    waiting.end();
    assert.doesNotThrow(() => admission.admit('s1', 'a1', LONG), 'its place in the queue is free again');
    holder.end();
  });

  it('stopSession aborts its running and waiting calls, resolves once they have ended, and refuses later calls', async () => {
    const admission = new CallAdmission({ sessionConcurrency: 1, sessionQueue: 4, agentConcurrency: 4, agentQueue: 8 });
    const running = admission.admit('s1', 'a1', LONG);
    const waiting = admission.admit('s1', 'a1', LONG);
    const bystander = admission.admit('s2', 'a1', LONG);
    let stopped = false;
    const stop = admission.stopSession('s1').then(() => { stopped = true; });
    assert.ok(running.signal.aborted);
    assert.match(running.stoppedBecause() ?? '', /session s1 was deleted/);
    assert.equal(await waiting.started, 'stopped');
    assert.ok(!bystander.signal.aborted, 'another session\'s call runs on');
    waiting.end();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stopped, false, 'the running call has not ended yet');
    running.end();
    await stop;
    assert.throws(() => admission.admit('s1', 'a1', LONG), NotFoundError);
    bystander.end();
  });

  it('stopAgent ends the calls of every session of the agent', async () => {
    const admission = new CallAdmission(limits);
    const calls = [admission.admit('s1', 'a1', LONG), admission.admit('s2', 'a1', LONG)];
    const other = admission.admit('t1', 'a2', LONG);
    const stop = admission.stopAgent('a1');
    assert.ok(calls.every((call) => call.signal.aborted));
    assert.ok(!other.signal.aborted);
    for (const call of calls) call.end();
    await stop;
    assert.throws(() => admission.admit('s3', 'a1', LONG), NotFoundError);
  });

  it('end() is idempotent and nothing is kept for sessions without calls', () => {
    const admission = new CallAdmission(limits);
    const call = admission.admit('s1', 'a1', LONG);
    call.end();
    call.end();
    assert.deepEqual(admission.inFlight('s1'), { running: 0, waiting: 0 });
    assert.equal((admission as unknown as { sessions: Map<string, unknown> }).sessions.size, 0);
    assert.equal((admission as unknown as { agents: Map<string, unknown> }).agents.size, 0);
  });

  it('defaults: a session may take half the workers, an agent all but one (all at one or two workers); the queues are bounded', () => {
    const sized = (workers: number) => {
      const { sessionConcurrency, agentConcurrency } = defaultCallAdmissionLimits(workers);
      return [sessionConcurrency, agentConcurrency];
    };
    // One worker: nothing to keep back. Two: an agent's share must stay above its session's (1), so it is both.
    assert.deepEqual([1, 2, 3, 4, 5, 8, 64].map(sized), [[1, 1], [1, 2], [1, 2], [2, 3], [2, 4], [4, 7], [32, 63]]);
    assert.deepEqual(defaultCallAdmissionLimits(2), { sessionConcurrency: 1, sessionQueue: 16, agentConcurrency: 2, agentQueue: 64, workers: 2 });
    assert.deepEqual(defaultCallAdmissionLimits(8), { sessionConcurrency: 4, sessionQueue: 16, agentConcurrency: 7, agentQueue: 64, workers: 8 });
    // Over NATS the workers are the fleet's: no cap across agents, the shares sized from the replica's number.
    assert.deepEqual(defaultCallAdmissionLimits(8, 'fleet'), { sessionConcurrency: 4, sessionQueue: 16, agentConcurrency: 7, agentQueue: 64 });
    assert.throws(() => new CallAdmission({ ...limits, sessionConcurrency: 0 }), /sessionConcurrency must be a whole number of at least 1/);
    assert.throws(() => new CallAdmission({ ...limits, workers: 0 }), /workers must be a whole number of at least 1/);
  });
});
