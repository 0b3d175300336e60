/**
 * Finding 7: one agent could hold every worker. An agent's limit was the whole pool, so an agent flooding
 * from several sessions took every worker, and another agent's trivial call waited 14 s behind it.
 *
 * A real platform server in this process (three sandbox workers, the default limits: an agent may run two
 * calls at once, a session one) and the `hold` guest (test/fixtures/c/mcp/hold.c): each call keeps its
 * worker until the test releases it, and counts, in its agent's /volume/data, how many of the agent's calls
 * run at that moment. Nothing is decided by the clock: a call ends when the test says so, and what started
 * is read from the files the guests made (started/<id>), while the workers are known to be all taken.
 *
 * 1. Agent A floods from three sessions: two of its calls run, the rest wait although a worker is free;
 *    agent B's call takes that worker at once and ends before any of A's waiting calls starts.
 * 2. Agents A and C fill the three workers, both with calls waiting; agent B's call, which came last, gets
 *    the next worker that frees, ahead of both backlogs.
 * Every call of the floods ends `ok` once released, and no guest ever saw more than two calls of its agent
 * running at once.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packBundle } from '../../src/package/index.js';
import { fixture } from '../helpers/paths.js';
import { startInProcess, tempDir, type InProcess } from '../server/helpers/harness.js';

const WORKERS = 3;
/** The default share of an agent with three workers: all but one. */
const SHARE = 2;
/** Generous: nothing here should wait for a deadline; a call holds its worker until released. */
const CALL_TIMEOUT_MS = 120_000;
/** How long to wait for something that must happen (it comes in milliseconds when the server is right). */
const CEILING_MS = 20_000;

interface HoldAgent {
  id: string;
  sessions: string[];
  data: string;
  /** The agent's calls in flight: their answers, by hold id. */
  calls: Map<string, Promise<{ status: number; body: any }>>;
}

describe('finding 7: one agent cannot hold every worker', () => {
  let server: InProcess;
  const agents: HoldAgent[] = [];
  let made = 0;

  before(async () => {
    server = await startInProcess({ workers: WORKERS, limits: { callTimeoutMs: CALL_TIMEOUT_MS } });
    const dir = tempDir('subako-hold-');
    writeFileSync(join(dir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'hold', description: 'Holds its worker until released.', version: '1.0.0' }));
    cpSync(fixture('c', 'mcp', 'hold.wasm'), join(dir, 'module.wasm'));
    const uploaded = await server.call('POST', '/v1/packages', await packBundle(dir));
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    rmSync(dir, { recursive: true, force: true });
  });

  // Whatever happened in a test, every call it holds is let go and answered before the next one (or the stop).
  afterEach(async () => {
    for (const agent of agents) release(agent, 'all');
    await Promise.allSettled(agents.flatMap((agent) => [...agent.calls.values()]));
  });
  after(async () => {
    await server?.close();
    if (server) rmSync(server.dataDir, { recursive: true, force: true });
  });

  /** A new agent granting the hold package with its /volume/data, and `sessions` sessions of it. */
  async function holdAgent(sessions: number): Promise<HoldAgent> {
    const agent = await server.call('POST', '/v1/agents', { name: `hold-${++made}`, tools: [{ package: 'hold', data: true }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const ids: string[] = [];
    for (let i = 0; i < sessions; i++) {
      const session = await server.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
      assert.equal(session.status, 201, JSON.stringify(session.body));
      ids.push(session.body.id);
    }
    const holder: HoldAgent = { id: agent.body.id, sessions: ids, data: await server.server.platform.volumes.agentData(agent.body.id), calls: new Map() };
    agents.push(holder);
    return holder;
  }

  /** Sends a `hold` call with `id` through the session's REST endpoint; its answer comes once it is released. */
  function hold(agent: HoldAgent, session: string, id: string): void {
    agent.calls.set(id, server.call('POST', `/v1/sessions/${session}/calls`, { tool: 'hold', arguments: { id } }));
  }

  /** The hold ids whose guest has started, as the guests wrote them in the agent's /volume/data. */
  function started(agent: HoldAgent): string[] {
    try {
      return readdirSync(join(agent.data, 'started')).sort();
    } catch {
      return [];
    }
  }

  function release(agent: HoldAgent, id: string): void {
    mkdirSync(join(agent.data, 'release'), { recursive: true });
    writeFileSync(join(agent.data, 'release', id), '');
  }

  /** Calls of the agent admitted (running or waiting for a turn), from the platform's admission. */
  function admitted(agent: HoldAgent): number {
    return agent.sessions.reduce((sum, id) => {
      const { running, waiting } = server.server.platform.admission.inFlight(id);
      return sum + running + waiting;
    }, 0);
  }

  /** Floods: `perSession` calls in each of the agent's sessions, and waits until all of them are admitted. */
  async function flood(agent: HoldAgent, name: string, perSession: number): Promise<void> {
    agent.sessions.forEach((session, s) => {
      for (let n = 0; n < perSession; n++) hold(agent, session, `${name}-${s}-${n}`);
    });
    await until(() => admitted(agent) === agent.sessions.length * perSession, `all ${agent.sessions.length * perSession} calls of ${name} admitted`);
  }

  /** Lets every call of the agent go and checks the answers: all ok, and no guest saw more than SHARE of its agent's calls running. */
  async function releaseAll(agent: HoldAgent): Promise<number> {
    release(agent, 'all');
    let most = 0;
    for (const [id, answer] of agent.calls) {
      const { status, body } = await answer;
      assert.equal(status, 200, `${id}: ${JSON.stringify(body)}`);
      assert.equal(body.call.outcome, 'ok', `${id}: ${JSON.stringify(body.call)}`);
      const seen = JSON.parse(body.result.content[0].text) as { id: string; seen: number };
      assert.equal(seen.id, id);
      most = Math.max(most, seen.seen);
    }
    agent.calls.clear();
    return most;
  }

  it('an agent flooding from three sessions runs at most its share; another agent\'s call takes the free worker at once and ends before the flood\'s waiting calls start', async () => {
    const a = await holdAgent(3);
    const b = await holdAgent(1);
    await flood(a, 'a', 2);
    // The calls admitted to run have reached their guests (whatever their number).
    const running = (): number => a.sessions.reduce((sum, id) => sum + server.server.platform.admission.inFlight(id).running, 0);
    await until(() => started(a).length === running(), 'A\'s running calls in their guests');

    hold(b, b.sessions[0], 'b');
    await until(() => started(b).includes('b'), 'B\'s call started while A floods (it would need one of A\'s workers)');
    assert.equal(started(a).length, SHARE, `A runs ${started(a).join(', ')}: at most ${SHARE} of the ${WORKERS} workers`);

    release(b, 'b');
    const answer = await b.calls.get('b')!;
    b.calls.clear();
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.call.outcome, 'ok');
    // B has ended and none of A's waiting calls has started: they wait for A's own calls to end.
    assert.equal(started(a).length, SHARE, 'none of A\'s waiting calls started before B ended');

    assert.equal(await releaseAll(a), SHARE, `no more than ${SHARE} of A's calls ran at once (and the flood did use its share)`);
    assert.equal(started(a).length, 6);
  });

  it('the next worker to free goes to an agent with nothing running, ahead of the backlogs of the agents holding the others', async () => {
    const a = await holdAgent(3);
    const c = await holdAgent(3);
    const b = await holdAgent(1);
    await flood(a, 'a', 2);
    await until(() => started(a).length >= Math.min(SHARE, WORKERS), 'A\'s first calls in their guests');
    await flood(c, 'c', 2);
    // Every worker is taken (by A's calls and C's), and both have calls waiting.
    await until(() => started(a).length + started(c).length === WORKERS, 'every worker taken');
    const [aRan, cRan] = [started(a), started(c)];

    hold(b, b.sessions[0], 'b');
    await until(() => admitted(b) === 1, 'B\'s call admitted');
    assert.deepEqual(started(b), [], 'no worker was free for B');

    // One of A's calls ends: the worker it frees is B's, though A and C have calls waiting since before B came.
    release(a, aRan[0]);
    await until(() => started(b).includes('b'), 'B\'s call started on the worker A freed');
    // While B holds that worker every worker is taken again: nothing else started in between, or since.
    assert.deepEqual([started(a), started(c)], [aRan, cRan], 'no call of A\'s or C\'s backlog started before B');

    release(b, 'b');
    const answer = await b.calls.get('b')!;
    b.calls.clear();
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.call.outcome, 'ok');

    assert.ok(await releaseAll(a) <= SHARE, `no more than ${SHARE} of A's calls ran at once`);
    assert.ok(await releaseAll(c) <= SHARE, `no more than ${SHARE} of C's calls ran at once`);
    assert.equal(started(a).length + started(c).length, 12);
  });
});

/** Waits for `check` to hold, polling every 20 ms; past CEILING_MS the test fails naming what never came. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + CEILING_MS;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
