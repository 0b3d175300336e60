/**
 * Call admission shares the workers out fairly (finding 7: one agent held every worker). On its own, with the
 * tools' kinds as the call log gives them: an agent runs at most its share; the next free worker goes to an
 * agent with nothing running, then round-robin by agent, in arrival order within an agent and a session;
 * calls that hold no worker are not held up by busy workers; a call waiting for a worker keeps its deadline,
 * may be cancelled or stopped, and its turn passes on. Then a model-based check of the same rules over random
 * sequences of calls, ends and cancellations.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CallAdmission, CallRefusedError, type AdmittedCall, type CallAdmissionLimits } from '../../src/platform/calls/call-admission.js';

const LONG = 60_000;
/** A function package's tool (holds a worker) and a remote MCP server's (does not), as Tool.source says. */
const FUNCTION = { source: { kind: 'function' } };
const REMOTE = { source: { kind: 'mcp' } };
/** Three workers, an agent's share two of them (the defaults for three workers), a session one. */
const THREE = { sessionConcurrency: 1, sessionQueue: 8, agentConcurrency: 2, agentQueue: 16, workers: 3 };

/** Whether `call` has been given its turn (or refused one) by now, without waiting for it. */
async function turnOf(call: AdmittedCall): Promise<string> {
  return Promise.race([call.started, new Promise<string>((resolve) => setImmediate(() => resolve('waiting')))]);
}
const turnsOf = (calls: AdmittedCall[]): Promise<string[]> => Promise.all(calls.map(turnOf));

describe('call admission shares the workers fairly', () => {
  it('an agent runs at most its share of the workers; another agent with nothing running gets one at once', async () => {
    const admission = new CallAdmission(THREE);
    // Agent a in three sessions: two run, the third waits although a worker is free.
    const a = ['a1', 'a2', 'a3'].map((session) => admission.admit(session, 'a', LONG, undefined, FUNCTION));
    assert.deepEqual(await turnsOf(a), ['run', 'run', 'waiting']);
    const b = admission.admit('b1', 'b', LONG, undefined, FUNCTION);
    assert.equal(await turnOf(b), 'run');
    for (const call of [...a, b]) call.end();
  });

  it('the next free worker goes to an agent with nothing running, ahead of the busy agents\' backlogs', async () => {
    const admission = new CallAdmission(THREE);
    const [a1, a2] = ['a1', 'a2'].map((session) => admission.admit(session, 'a', LONG, undefined, FUNCTION));
    const aBacklog = ['a3', 'a4'].map((session) => admission.admit(session, 'a', LONG, undefined, FUNCTION));
    const c1 = admission.admit('c1', 'c', LONG, undefined, FUNCTION); // the third worker
    const cBacklog = admission.admit('c2', 'c', LONG, undefined, FUNCTION);
    const b = admission.admit('b1', 'b', LONG, undefined, FUNCTION); // came last, runs nothing
    assert.deepEqual(await turnsOf([a1, a2, c1, ...aBacklog, cBacklog, b]), ['run', 'run', 'run', 'waiting', 'waiting', 'waiting', 'waiting']);
    a1.end();
    assert.deepEqual(await turnsOf([b, ...aBacklog, cBacklog]), ['run', 'waiting', 'waiting', 'waiting']);
    for (const call of [a2, c1, b, ...aBacklog, cBacklog]) call.end();
  });

  it('then round-robin by agent (not to the agent whose call ended), each agent\'s calls in arrival order', async () => {
    const admission = new CallAdmission({ sessionConcurrency: 1, sessionQueue: 8, agentConcurrency: 3, agentQueue: 16, workers: 4 });
    const started: string[] = [];
    const calls = new Map<string, AdmittedCall>();
    for (const session of ['a0', 'a1', 'c0', 'c1', 'a2', 'a3', 'a4', 'c2', 'c3', 'c4']) {
      const call = admission.admit(session, session[0], LONG, undefined, FUNCTION);
      void call.started.then((turn) => turn === 'run' && started.push(session));
      calls.set(session, call);
    }
    await turnsOf([...calls.values()]);
    assert.deepEqual(started, ['a0', 'a1', 'c0', 'c1'], 'a and c hold two workers each, both have calls waiting');
    // The oldest running call ends, each time: who takes the worker it frees.
    const takers: string[][] = [];
    for (const ending of ['a0', 'a1', 'c0', 'c1', 'a2', 'c2']) {
      const before = started.length;
      calls.get(ending)!.end();
      await turnsOf([...calls.values()]);
      takers.push([ending, ...started.slice(before)]);
    }
    assert.deepEqual(takers, [['a0', 'a2'], ['a1', 'c2'], ['c0', 'a3'], ['c1', 'c3'], ['a2', 'a4'], ['c2', 'c4']]);
    for (const call of calls.values()) call.end();
  });

  it('calls that hold no worker (remote MCP tools) are held by their session and agent only, not by busy workers', async () => {
    const admission = new CallAdmission({ ...THREE, workers: 1 });
    const busy = admission.admit('a1', 'a', LONG, undefined, FUNCTION); // the one worker
    const remoteOfA = admission.admit('a2', 'a', LONG, undefined, REMOTE);
    const remoteOfB = admission.admit('b1', 'b', LONG, undefined, REMOTE);
    const functionOfB = admission.admit('b2', 'b', LONG, undefined, FUNCTION);
    const thirdOfA = admission.admit('a3', 'a', LONG, undefined, REMOTE); // a's share (2) is taken
    assert.deepEqual(await turnsOf([remoteOfA, remoteOfB, functionOfB, thirdOfA]), ['run', 'run', 'waiting', 'waiting']);
    // a's remote call ends: its third call starts at once, though no worker is free.
    remoteOfA.end();
    assert.deepEqual(await turnsOf([thirdOfA, functionOfB]), ['run', 'waiting']);
    busy.end();
    assert.equal(await turnOf(functionOfB), 'run');
    for (const call of [remoteOfB, functionOfB, thirdOfA]) call.end();
  });

  it('a call waiting for a worker keeps its deadline, may be cancelled, and its turn passes to the next', async () => {
    const admission = new CallAdmission({ ...THREE, workers: 1 });
    const holder = admission.admit('a1', 'a', LONG, undefined, FUNCTION);
    const doomed = admission.admit('b1', 'b', 30, undefined, FUNCTION);
    const caller = new AbortController();
    const leaving = admission.admit('c1', 'c', LONG, caller.signal, FUNCTION);
    const patient = admission.admit('d1', 'd', LONG, undefined, FUNCTION);
    assert.equal(await doomed.started, 'timeout');
    caller.abort();
    assert.equal(await leaving.started, 'cancelled');
    doomed.end();
    leaving.end();
    assert.equal(await turnOf(patient), 'waiting');
    holder.end();
    assert.equal(await turnOf(patient), 'run');
    patient.end();
  });

  it('stopAgent ends its calls waiting for a worker; the worker goes to the next agent', async () => {
    const admission = new CallAdmission({ ...THREE, workers: 1 });
    const holder = admission.admit('a1', 'a', LONG, undefined, FUNCTION);
    const stoppedOne = admission.admit('b1', 'b', LONG, undefined, FUNCTION);
    const next = admission.admit('c1', 'c', LONG, undefined, FUNCTION);
    const stop = admission.stopAgent('b');
    assert.equal(await stoppedOne.started, 'stopped');
    stoppedOne.end();
    await stop;
    holder.end();
    assert.equal(await turnOf(next), 'run');
    next.end();
  });

  it('a call refused while every worker is busy says so, besides its queue', async () => {
    const admission = new CallAdmission({ sessionConcurrency: 1, sessionQueue: 1, agentConcurrency: 2, agentQueue: 4, workers: 1 });
    const holder = admission.admit('a1', 'a', LONG, undefined, FUNCTION);
    const waiting = admission.admit('b1', 'b', LONG, undefined, FUNCTION);
    assert.throws(() => admission.admit('b1', 'b', LONG, undefined, FUNCTION), (err: unknown) => {
      assert.ok(err instanceof CallRefusedError);
      assert.equal(err.limit, 'session');
      assert.match(err.message, /session b1 already runs 0 calls \(at most 1 at once\) and has 1 waiting \(at most 1\); all 1 workers are busy; retry after 1 s/);
      return true;
    });
    for (const call of [holder, waiting]) call.end();
  });

  it('without `workers` (calls over NATS, the fleet\'s workers), agents are held by their own shares only', async () => {
    const admission = new CallAdmission({ sessionConcurrency: 1, sessionQueue: 8, agentConcurrency: 2, agentQueue: 16 });
    const calls = ['a', 'b', 'c', 'd'].flatMap((agent) => [1, 2, 3].map((n) => admission.admit(`${agent}${n}`, agent, LONG, undefined, FUNCTION)));
    assert.deepEqual(await turnsOf(calls), calls.map((_, i) => (i % 3 === 2 ? 'waiting' : 'run')));
    calls[0].end();
    assert.equal(await turnOf(calls[2]), 'run', 'an agent\'s waiting call starts when one of its own ends');
    for (const call of calls) call.end();
  });
});

/** One step of the model-based check. */
type Step =
  | { kind: 'admit'; agent: number; session: number; onWorker: boolean }
  | { kind: 'end'; pick: number }
  | { kind: 'cancel'; pick: number };

interface Tracked {
  agent: string;
  session: string;
  onWorker: boolean;
  call: AdmittedCall;
  state: 'waiting' | 'running' | 'gone';
  /** When it started, counted in starts. */
  startedAs: number | null;
  arrival: number;
}

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('admit' as const), agent: fc.nat(3), session: fc.nat(2), onWorker: fc.integer({ min: 0, max: 4 }).map((n) => n > 0) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('end' as const), pick: fc.nat(63) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat(63) }) },
);

describe('call admission over random sequences of calls (model-based)', () => {
  const shapes: CallAdmissionLimits[] = [
    { sessionConcurrency: 1, sessionQueue: 3, agentConcurrency: 2, agentQueue: 5, workers: 3 },
    { sessionConcurrency: 1, sessionQueue: 3, agentConcurrency: 2, agentQueue: 5, workers: 2 },
    { sessionConcurrency: 2, sessionQueue: 2, agentConcurrency: 3, agentQueue: 4, workers: 4 },
    { sessionConcurrency: 1, sessionQueue: 4, agentConcurrency: 1, agentQueue: 6, workers: 1 },
  ];
  for (const limits of shapes) {
    it(`never past a limit, never a call left waiting that could run, a freed worker to an agent with nothing running first, ` +
      `each session in arrival order, and every call started or gone in the end (${JSON.stringify(limits)})`, async () => {
      await fc.assert(fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const admission = new CallAdmission(limits);
        const calls: Tracked[] = [];
        let starts = 0;
        const live = (state: Tracked['state']) => calls.filter((c) => c.state === state);
        const running = (of: (c: Tracked) => boolean) => live('running').filter(of).length;
        const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
        const check = (): void => {
          for (const c of calls) {
            assert.ok(running((o) => o.session === c.session) <= limits.sessionConcurrency, 'a session past its limit');
            assert.ok(running((o) => o.agent === c.agent) <= limits.agentConcurrency, 'an agent past its share');
          }
          const onWorkers = running((o) => o.onWorker);
          assert.ok(onWorkers <= limits.workers!, 'more calls on workers than workers');
          for (const c of live('waiting')) {
            const couldRun = running((o) => o.session === c.session) < limits.sessionConcurrency
              && running((o) => o.agent === c.agent) < limits.agentConcurrency && (!c.onWorker || onWorkers < limits.workers!);
            assert.ok(!couldRun, `a call of ${c.session} waits though it could run`);
          }
        };
        for (const s of steps) {
          if (s.kind === 'admit') {
            const agent = `a${s.agent}`;
            let call: AdmittedCall;
            try {
              call = admission.admit(`${agent}s${s.session}`, agent, LONG, undefined, s.onWorker ? FUNCTION : REMOTE);
            } catch (err) {
              assert.ok(err instanceof CallRefusedError);
              continue;
            }
            const tracked: Tracked = { agent, session: `${agent}s${s.session}`, onWorker: s.onWorker, call, state: 'waiting', startedAs: null, arrival: calls.length };
            calls.push(tracked);
            void call.started.then((turn) => {
              if (turn === 'run') Object.assign(tracked, { state: 'running', startedAs: starts++ });
            });
            await settle();
          } else {
            const pool = s.kind === 'end' ? live('running') : live('waiting');
            if (pool.length === 0) continue;
            const chosen = pool[s.pick % pool.length];
            // Before a worker frees: the agents with nothing running that wait for one.
            const idleWaiting = new Set(live('waiting').filter((c) => c.onWorker && running((o) => o.agent === c.agent) === 0).map((c) => c.agent));
            const wasFull = running((o) => o.onWorker) === limits.workers;
            const startsBefore = starts;
            chosen.state = 'gone';
            chosen.call.end();
            await settle();
            const firstOnWorker = calls.filter((c) => c.startedAs !== null && c.startedAs >= startsBefore && c.onWorker).sort((x, y) => x.startedAs! - y.startedAs!)[0];
            if (s.kind === 'end' && chosen.onWorker && wasFull && idleWaiting.size > 0) {
              assert.ok(firstOnWorker && idleWaiting.has(firstOnWorker.agent),
                `the freed worker went to ${firstOnWorker?.agent}, not to an agent with nothing running (${[...idleWaiting]})`);
            }
          }
          check();
        }
        // Within a session, calls of a kind start in the order they came.
        for (const session of new Set(calls.map((c) => c.session))) {
          for (const onWorker of [true, false]) {
            const ran = calls.filter((c) => c.session === session && c.onWorker === onWorker && c.startedAs !== null);
            const byStart = [...ran].sort((x, y) => x.startedAs! - y.startedAs!).map((c) => c.arrival);
            assert.deepEqual(byStart, ran.map((c) => c.arrival), `${session} started out of order`);
          }
        }
        // Nobody is stranded: ending what runs, again and again, starts every call still waiting.
        for (let guard = 0; live('running').length > 0; guard++) {
          assert.ok(guard < 1_000);
          for (const c of live('running')) {
            c.state = 'gone';
            c.call.end();
          }
          await settle();
        }
        assert.deepEqual(live('waiting').map((c) => c.session), [], 'calls left waiting with nothing running');
      }), { numRuns: 120 });
    });
  }
});
