/**
 * `GET /v1/calls/stream` (issue 15, point 1): the call log live as Server-Sent Events. Each call is an event
 * when it starts and when it ends, with the same view as `GET /v1/calls/{id}`; the filters narrow it as they
 * narrow the search; `Last-Event-ID` resumes where a client left off; a resume that cannot be honoured says
 * so; subscribers are bounded; closing the server ends the streams.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CallEvents } from '../../src/platform/calls/call-events.js';
import { join } from 'node:path';
import { ApiKeys } from '../../src/platform/api-keys.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import { CallStreams, STREAMS_PER_KEY, type CallStreamOptions } from '../../src/server/call-stream.js';
import type { CallRecord } from '../../src/platform/index.js';
import { startInProcess, tempDir, type InProcess } from './helpers/harness.js';
import { openSse, type SseStream } from './helpers/sse.js';

let s: InProcess;
let sessionA: string;
let sessionB: string;

const auth = () => ({ authorization: `Bearer ${s.apiKey}` });
const stream = (query = '', headers: Record<string, string> = {}) => openSse(`${s.url}/v1/calls/stream${query}`, { ...auth(), ...headers });
const greet = async (session: string, name: string) => {
  const answer = await s.call('POST', `/v1/sessions/${session}/calls`, { tool: 'greet', arguments: { name } });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.call as { id: string };
};
const callEvent = async (sse: SseStream) => {
  const event = await sse.next();
  assert.equal(event.event, 'call', JSON.stringify(event));
  return { id: event.id, call: JSON.parse(event.data) };
};

before(async () => {
  s = await startInProcess();
  sessionA = (await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {})).body.id;
  sessionB = (await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {})).body.id;
});
after(() => s.close());

describe('the call stream', () => {
  it('sends a real call when it starts and when it ends, in the view GET /v1/calls/{id} answers', async () => {
    const sse = await stream();
    assert.equal(sse.status, 200);
    assert.match(sse.headers.get('content-type') ?? '', /^text\/event-stream/);
    const made = await greet(sessionA, 'Ada');
    const started = await callEvent(sse);
    const finished = await callEvent(sse);
    sse.close();
    assert.equal(started.call.id, made.id);
    assert.equal(started.call.outcome, 'running');
    assert.equal(started.call.agent_id, s.agentId);
    assert.equal(finished.call.outcome, 'ok');
    assert.match(finished.call.stderr_tail, /greeted Ada/);
    const stored = await s.call('GET', `/v1/calls/${made.id}`);
    assert.deepEqual(finished.call, stored.body);
    assert.equal(sse.retry, 2000);
  });

  it('keeps only the calls the filters name: session, tool, status, agent', async () => {
    const bySession = await stream(`?session=${sessionB}`);
    const byStatus = await stream('?status=ok');
    const byOtherTool = await stream('?tool=nothing-is-called-this');
    const byOtherAgent = await stream('?agent=agt_none');
    await greet(sessionA, 'Ignored');
    const wanted = await greet(sessionB, 'Grace');
    const first = await callEvent(bySession);
    const second = await callEvent(bySession);
    assert.deepEqual([first.call.id, first.call.outcome, second.call.id, second.call.outcome], [wanted.id, 'running', wanted.id, 'ok']);
    // status=ok: only ends, never the `running` events; both sessions' calls, in order.
    const okA = await callEvent(byStatus);
    const okB = await callEvent(byStatus);
    assert.deepEqual([okA.call.outcome, okB.call.outcome, okB.call.id], ['ok', 'ok', wanted.id]);
    // The two streams whose filters match nothing got nothing but their opening lines.
    for (const sse of [bySession, byStatus, byOtherTool, byOtherAgent]) sse.close();
    await Promise.all([byOtherTool.ended, byOtherAgent.ended]);
    await assert.rejects(byOtherTool.next(), /ended/);
    await assert.rejects(byOtherAgent.next(), /ended/);
  });

  it('the calls search takes the same filters, newest first', async () => {
    const page = await s.call('GET', `/v1/calls?session=${sessionB}&tool=greet&status=ok`);
    assert.equal(page.status, 200);
    assert.ok(page.body.items.length >= 1);
    for (const call of page.body.items) assert.deepEqual([call.session_id, call.tool, call.outcome, call.agent_id], [sessionB, 'greet', 'ok', s.agentId]);
    const all = (await s.call('GET', '/v1/calls?limit=2')).body;
    assert.equal(all.items.length, 2);
    assert.ok(all.items[0].id > all.items[1].id, 'newest first');
    const next = (await s.call('GET', `/v1/calls?limit=2&after=${all.next_cursor}`)).body;
    assert.ok(next.items[0].id < all.items[1].id, 'the next page continues older');
    assert.equal((await s.call('GET', '/v1/calls?status=exploded')).status, 400);
  });

  it('resumes after Last-Event-ID with exactly the events missed', async () => {
    const sse = await stream();
    await greet(sessionA, 'One');
    const startedOne = await callEvent(sse);
    sse.close();
    // Missed: the end of call one, and both events of call two.
    const two = await greet(sessionA, 'Two');
    const resumed = await stream('', { 'last-event-id': startedOne.id! });
    const missed = [await callEvent(resumed), await callEvent(resumed), await callEvent(resumed)];
    assert.deepEqual(missed.map((e) => [e.call.id, e.call.outcome]), [[startedOne.call.id, 'ok'], [two.id, 'running'], [two.id, 'ok']]);
    // And live after that.
    const three = await greet(sessionA, 'Three');
    assert.equal((await callEvent(resumed)).call.id, three.id);
    resumed.close();
    const ids = missed.map((e) => e.id!);
    assert.deepEqual([...ids].sort((x, y) => Number(x.split('.')[1]) - Number(y.split('.')[1])), ids, 'ids rise');
  });

  it('a Last-Event-ID from another process (a restarted server) gets a reset, then the live calls', async () => {
    const sse = await stream('', { 'last-event-id': '0123abcd.5' });
    const reset = await sse.next();
    assert.equal(reset.event, 'reset');
    assert.match(JSON.parse(reset.data).reason, /reload/);
    const made = await greet(sessionA, 'After');
    assert.equal((await callEvent(sse)).call.id, made.id);
    sse.close();
  });

  it('takes an API key, as the other routes do', async () => {
    const none = await openSse(`${s.url}/v1/calls/stream`, {});
    assert.equal(none.status, 401);
    const session = (await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {})).body;
    const sessionToken = await openSse(`${s.url}/v1/calls/stream`, { authorization: `Bearer ${session.token}` });
    assert.equal(sessionToken.status, 401, 'a session token may not watch every session');
  });

  it('holds a bounded number of subscribers and refuses the next with 503', async () => {
    const events = new CallEvents(10, 2);
    const first = events.subscribe(() => undefined);
    assert.ok(events.subscribe(() => undefined));
    assert.equal(events.subscribe(() => undefined), null);
    first!();
    assert.ok(events.subscribe(() => undefined), 'a slot frees when a subscriber leaves');

    // Every place taken by admin keys, each holding its share (call-stream-keys.test.ts: how the places are shared).
    const max = s.server.platform.calls.events.maxSubscribers;
    const adminKey = async () => (await s.call('POST', '/v1/keys', { name: 'watcher', scope: 'admin' })).body.key as string;
    const keys = await Promise.all(Array.from({ length: Math.ceil(max / STREAMS_PER_KEY) + 1 }, adminKey));
    const open = await Promise.all(Array.from({ length: max }, (_, i) => stream('', { authorization: `Bearer ${keys[Math.floor(i / STREAMS_PER_KEY)]}` })));
    assert.ok(open.every((o) => o.status === 200));
    const refused = await stream('', { authorization: `Bearer ${keys.at(-1)}` });
    assert.equal(refused.status, 503);
    for (const o of open) o.close();
  });

  it('keeps the last events only: a resume from before them is a reset', () => {
    const events = new CallEvents(3, 1);
    const record = (id: string): CallRecord => ({ id, sessionId: 'ses', via: 'api', tool: 't', arguments: {}, outcome: 'ok', crash: null, model: [], stderrTail: '', egress: [], durationMs: 1, startedAt: '' });
    for (let i = 1; i <= 5; i += 1) events.publish(record(`c${i}`), 'agt');
    assert.deepEqual(events.since(2)?.map((e) => e.call.id), ['c3', 'c4', 'c5']);
    assert.deepEqual(events.since(5), []);
    assert.equal(events.since(1), null, 'event 2 is no longer kept');
    assert.equal(events.since(6), null, 'a number from the future is another process\'s');
    // Bounded in bytes too: large records push the oldest out sooner.
    const heavy = new CallEvents(100, 1, 10_000);
    for (let i = 1; i <= 5; i += 1) heavy.publish({ ...record(`h${i}`), stderrTail: 'x'.repeat(4_000) }, 'agt');
    assert.deepEqual(heavy.since(3)?.map((e) => e.call.id), ['h4', 'h5']);
    assert.equal(heavy.since(2), null);
  });

  it('closing the server ends the open streams', async () => {
    const sse = await stream();
    await s.close();
    await sse.ended;
    const end = await sse.next();
    assert.deepEqual([end.event, JSON.parse(end.data).reason], ['end', 'shutting_down'], 'its last event says why');
    await assert.rejects(sse.next(), /ended/);
  });
});

describe('the call stream\'s own bounds', () => {
  /** The real SQLite store, keeping the ids each key check asked about. */
  class WatchedStore extends SqliteStore {
    readonly asked: string[][] = [];
    override async getApiKeys(ids: readonly string[]) {
      this.asked.push([...ids]);
      return super.getApiKeys(ids);
    }
  }
  /**
   * A bare HTTP server serving one CallStreams over its own CallEvents, so the bounds can be small; its keys are
   * two real ones (a read key, then an admin key) in a SQLite store of its own; `?key=1` opens a stream with the
   * second.
   */
  async function streamsServer(options: CallStreamOptions) {
    const events = new CallEvents(100, 4);
    const store = new WatchedStore(join(tempDir('subako-streams-'), 'subako.db'));
    const keys = new ApiKeys(store);
    const holders = [(await keys.create('watcher', 'read')).record, (await keys.create('admin', 'admin')).record];
    const streams = new CallStreams(events, keys, { perKey: 2, ...options });
    const server = createServer((req, res) => {
      const aborter = new AbortController();
      res.on('close', () => aborter.abort());
      const holder = holders[Number(new URL(req.url ?? '/', 'http://x').searchParams.get('key') ?? 0)];
      void streams.serve(res, holder, {}, undefined, aborter.signal);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const close = async () => {
      streams.closeAll();
      server.closeAllConnections();
      server.close();
      await store.close();
    };
    return { events, streams, store, holders, url, close };
  }
  /** Waits for `condition`, checking every 10 ms, failing after 10 s. */
  async function until(condition: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  const ending = async (sse: SseStream): Promise<string> => {
    const end = await sse.next();
    assert.equal(end.event, 'end', JSON.stringify(end));
    await sse.ended;
    return JSON.parse(end.data).reason;
  };
  const record = (id: string, stderrTail = ''): CallRecord => ({ id, sessionId: 'ses', via: 'api', tool: 't', arguments: {}, outcome: 'ok', crash: null, model: [], stderrTail, egress: [], durationMs: 1, startedAt: '' });

  it('sends a heartbeat comment while nothing happens', async () => {
    const served = await streamsServer({ heartbeatMs: 20 });
    const sse = await openSse(served.url, {});
    while (!sse.comments.includes('heartbeat')) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(sse.comments.includes('subako call stream'));
    sse.close();
    await served.close();
  });

  it('cuts off a client that does not read rather than buffer for it', async () => {
    const served = await streamsServer({ maxBufferedBytes: 64 * 1024 });
    // A raw socket that sends the request and then reads nothing.
    const { connect } = await import('node:net');
    const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    socket.pause();
    while (served.events.subscribers === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const big = 'x'.repeat(4096);
    for (let i = 0; served.events.subscribers > 0 && i < 100_000; i += 1) {
      served.events.publish(record(`c${i}`, big), 'agt');
      if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(served.events.subscribers, 0, 'the stream ended once its buffer passed the bound');
    socket.destroy();
    await served.close();
  });

  it('checks the keys of every open stream in one query per tick, and ends the streams of a key revoked elsewhere', async () => {
    const served = await streamsServer({ keyCheckMs: 20 });
    const [reader, admin] = served.holders;
    const open = [await openSse(served.url, {}), await openSse(served.url, {}), await openSse(`${served.url}?key=1`, {}), await openSse(`${served.url}?key=1`, {})];
    assert.deepEqual(open.map((sse) => sse.status), [200, 200, 200, 200]);
    const from = served.store.asked.length;
    await until(() => served.store.asked.length >= from + 3, 'three key checks');
    for (const ids of served.store.asked.slice(from)) assert.deepEqual([...ids].sort(), [reader.id, admin.id].sort(), 'each key once, in one query');
    // Revoked by another writer of the store (no word reaches this CallStreams but the check's).
    assert.equal(await served.store.revokeApiKey(reader.id, new Date().toISOString()), true);
    assert.deepEqual([await ending(open[0]), await ending(open[1])], ['key_revoked', 'key_revoked']);
    assert.equal(served.events.subscribers, 2, 'the admin\'s streams go on');
    const after = served.store.asked.length;
    await until(() => served.store.asked.length >= after + 2, 'two more key checks');
    assert.deepEqual(served.store.asked.at(-1), [admin.id]);
    for (const sse of open) sse.close();
    await served.close();
  });

  it('a stream whose key the store cannot confirm ends after the grace, saying so (it fails closed)', async () => {
    const served = await streamsServer({ keyCheckMs: 20, unconfirmedGraceMs: 300 });
    const sse = await openSse(served.url, {});
    assert.equal(sse.status, 200);
    const from = served.store.asked.length;
    await until(() => served.store.asked.length >= from + 2, 'two key checks');
    assert.equal(served.events.subscribers, 1, 'confirmed, the stream goes on');
    await served.store.close();
    assert.equal(await ending(sse), 'key_unconfirmed');
    await served.close();
  });

  it('closing the streams says why: the server is shutting down', async () => {
    const served = await streamsServer({});
    const sse = await openSse(served.url, {});
    served.streams.closeAll();
    assert.equal(await ending(sse), 'shutting_down');
    await served.close();
  });
});
