/**
 * The relay of call events between replicas (platform/nats-events.ts): two feeds, each with its own connection
 * to the machine's NATS (subjects named for this run), as two replicas would have. A feed hears the other's
 * calls once, tagged with their origin; its own are not echoed back; what it heard is not relayed on; the
 * observers (metrics) hear only their own; a record past the server's message size travels slimmed. And the
 * pure parts: what a message holds within a size, and what is dropped off the subject.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection } from '@nats-io/transport-node';
import { CallEvents, type CallEvent } from '../../src/platform/calls/call-events.js';
import { randomBytes } from 'node:crypto';
import { CallEventRelay, NOT_RELAYED_TEXT, readRelayed, relayBody } from '../../src/platform/scale-out/nats-events.js';
import { SealedBus } from '../../src/platform/scale-out/nats-calls.js';
import { BusDrops, busKey } from '../../src/platform/scale-out/nats-envelope.js';
import { newId } from '../../src/platform/ids.js';
import type { CallRecord } from '../../src/platform/store/store.js';
import { connectShared, runName } from '../helpers/nats.js';

const record = (extra: Partial<CallRecord> = {}): CallRecord => ({
  id: newId('call'), sessionId: 'ses_1', via: 'api', tool: 'greet', arguments: { name: 'Ada' }, outcome: 'running', crash: null,
  model: [], stderrTail: '', egress: [], durationMs: null, startedAt: new Date().toISOString(), ...extra,
});

/** Events a listener heard, and a wait for the next `count` of them (failing after 5 s rather than hanging). */
function recorder() {
  const heard: CallEvent[] = [];
  let wake: (() => void) | null = null;
  return {
    heard,
    listen: (event: CallEvent) => { heard.push(event); wake?.(); },
    async atLeast(count: number): Promise<CallEvent[]> {
      const deadline = Date.now() + 5_000;
      while (heard.length < count) {
        if (Date.now() > deadline) throw new Error(`heard ${heard.length} events, not ${count}`);
        await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, 50); });
      }
      return heard;
    },
  };
}

describe('what a relayed message holds', () => {
  const event = { origin: 'abc', agentId: 'agt_1' };

  it('the whole record when it fits', () => {
    const call = record({ model: [{ type: 'text', text: 'hello' }], stderrTail: 'log' });
    const body = relayBody({ ...event, call }, 1024 * 1024);
    assert.deepEqual(readRelayed(body), { v: 1, ...event, call });
  });

  it('without its result and stderr when they do not fit, then without its arguments; nothing when even that does not', () => {
    const big = 'x'.repeat(4_000);
    const call = record({ model: [{ type: 'text', text: big }], stderrTail: big, arguments: { small: true } });
    const slim = readRelayed(relayBody({ ...event, call }, 2_000))!;
    assert.deepEqual(slim.call, { ...call, model: [{ type: 'text', text: NOT_RELAYED_TEXT }], stderrTail: '' });
    const heavy = record({ model: [{ type: 'text', text: big }], arguments: { blob: big } });
    assert.equal(readRelayed(relayBody({ ...event, call: heavy }, 2_000))!.call.arguments, NOT_RELAYED_TEXT);
    assert.equal(relayBody({ ...event, call: record({ tool: big }) }, 2_000), null);
  });

  it('a body of any other shape is dropped', () => {
    for (const junk of ['not a record', null, { v: 2, origin: 'a', agentId: 'b', call: record() },
      { v: 1, origin: 'a', call: record() }, { v: 1, origin: 'a', agentId: 'b', call: { id: 'x' } }]) {
      assert.equal(readRelayed(junk), null);
    }
  });
});

describe('two replicas\' feeds relayed over NATS', () => {
  const prefix = runName('events');
  let ncA: NatsConnection;
  let ncB: NatsConnection;
  const feedA = new CallEvents();
  const feedB = new CallEvents();
  const key = busKey(randomBytes(32), prefix);
  before(async () => {
    [ncA, ncB] = [await connectShared(), await connectShared()];
    CallEventRelay.start(new SealedBus(ncA, key, new BusDrops(undefined)), prefix, feedA);
    CallEventRelay.start(new SealedBus(ncB, key, new BusDrops(undefined)), prefix, feedB);
    // Both subscriptions are registered with the server before anything is published.
    await Promise.all([ncA.flush(), ncB.flush()]);
  });
  after(async () => {
    await ncA.close();
    await ncB.close();
  });

  it('B hears A\'s call once, tagged with A\'s origin; A hears it once, its own; observers hear only their own', async () => {
    const [subscribedA, subscribedB, observedA, observedB] = [recorder(), recorder(), recorder(), recorder()];
    const unsubscribe = [feedA.subscribe(subscribedA.listen)!, feedB.subscribe(subscribedB.listen)!];
    const unobserve = [feedA.observe(observedA.listen), feedB.observe(observedB.listen)];
    try {
      const call = record();
      feedA.publish(call, 'agt_a');
      feedA.publish({ ...call, outcome: 'ok', durationMs: 3 }, 'agt_a');
      const heardB = await subscribedB.atLeast(2);
      assert.deepEqual(heardB.map((e) => [e.call.id, e.call.outcome, e.agentId, e.origin]), [[call.id, 'running', 'agt_a', feedA.epoch], [call.id, 'ok', 'agt_a', feedA.epoch]]);
      // Then one of B's own: everything of A's that was to come has come before it (NATS keeps a publisher's order).
      const own = record({ sessionId: 'ses_2' });
      feedB.publish(own, 'agt_b');
      const heardA = await subscribedA.atLeast(3);
      assert.deepEqual(heardA.map((e) => [e.call.id, e.origin ?? 'here']), [[call.id, 'here'], [call.id, 'here'], [own.id, feedB.epoch]]);
      await ncA.flush();
      await ncB.flush();
      assert.equal(subscribedB.heard.length, 3, 'nothing came twice');
      assert.deepEqual(observedA.heard.map((e) => e.call.id), [call.id, call.id], 'A\'s observers: only A\'s calls');
      assert.deepEqual(observedB.heard.map((e) => e.call.id), [own.id], 'B\'s observers: only B\'s calls');
      // A relayed event takes its place in the feed's own sequence, so a stream resumes across it.
      assert.deepEqual(feedB.since(0)?.map((e) => e.seq), [1, 2, 3]);
    } finally {
      for (const stop of [...unsubscribe, ...unobserve]) stop();
    }
  });

  it('a record past the server\'s message size travels without its result, and the event still arrives', async () => {
    const heard = recorder();
    const unsubscribe = feedB.subscribe(heard.listen)!;
    try {
      const huge = record({ outcome: 'ok', model: [{ type: 'text', text: 'y'.repeat((ncA.info?.max_payload ?? 1024 * 1024) + 1) }] });
      feedA.publish(huge, 'agt_a');
      const [event] = await heard.atLeast(1);
      assert.equal(event.call.id, huge.id);
      assert.deepEqual(event.call.model, [{ type: 'text', text: NOT_RELAYED_TEXT }]);
    } finally {
      unsubscribe();
    }
  });
});
