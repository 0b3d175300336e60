/**
 * Sessions' changes across replicas (platform/scale-out/nats-listings.ts): two replicas' SessionListens, each relayed
 * over its own connection to the machine's NATS (subjects named for this run). A change one replica saw itself
 * reaches the other's listening stream once (and drops its cached toolbox); a replica's own is not taken back from the
 * echo; a message that does not open with the deployment's key — unsealed, or sealed with another key — is dropped
 * and counted, and reaches nobody; one captured and sent again is dropped as replayed. And what a message may hold.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { NatsConnection, Msg } from '@nats-io/transport-node';
import { ListingRelay, readListing } from '../../src/platform/scale-out/nats-listings.js';
import { SealedBus, natsSubjects } from '../../src/platform/scale-out/nats-calls.js';
import { BusDrops, busKey, sealEnvelope } from '../../src/platform/scale-out/nats-envelope.js';
import { SessionListens } from '../../src/platform/session-listens.js';
import { resourceNaming } from '../../src/platform/calls/resource-uris.js';
import type { AgentToolbox } from '../../src/platform/calls/agent-toolbox.js';
import type { ListingChange } from '../../src/mcp/index.js';
import { newId } from '../../src/platform/ids.js';
import { connectShared, runName } from '../helpers/nats.js';
import { until } from '../helpers/eventually.js';

/** A session's toolbox as the listens see it: its tools' listing, no remote servers to listen to. */
function box(tools: string[]): AgentToolbox {
  const record = Object.fromEntries(tools.map((name) => [name, { name, description: name, inputSchema: { type: 'object' } }]));
  return { tools: record, changeSources: [], resourceNaming: resourceNaming([]) } as unknown as AgentToolbox;
}

describe('what a relayed listing holds', () => {
  const sessionId = newId('ses');
  it('a change of a session, from a server or the session itself', () => {
    for (const change of [{ kind: 'tools' }, { kind: 'prompts' }, { kind: 'resources' }, { kind: 'resource', uri: 'notes://a' }] as ListingChange[]) {
      const body = { v: 1, origin: 'abc', sessionId, from: 'upstream', change };
      assert.deepEqual(readListing(body), body);
    }
  });

  it('anything else is dropped', () => {
    for (const junk of [null, 'x', { v: 2, origin: 'a', sessionId, from: 'session', change: { kind: 'tools' } },
      { v: 1, origin: 'a', sessionId: '../etc', from: 'session', change: { kind: 'tools' } },
      { v: 1, origin: 'a', sessionId, from: 'someone', change: { kind: 'tools' } },
      { v: 1, origin: 'a', sessionId, from: 'session', change: { kind: 'everything' } },
      { v: 1, origin: 'a', sessionId, from: 'session', change: { kind: 'resource' } }]) {
      assert.equal(readListing(junk), null, JSON.stringify(junk));
    }
  });
});

describe('two replicas\' listens relayed over NATS', () => {
  const prefix = runName('listings');
  const subject = natsSubjects(prefix).listings;
  const key = busKey(randomBytes(32), prefix);
  let ncA: NatsConnection;
  let ncB: NatsConnection;
  let ncOutsider: NatsConnection;
  const evictedA: string[] = [];
  const evictedB: string[] = [];
  const listensA = new SessionListens({ evict: (id) => evictedA.push(id) });
  const listensB = new SessionListens({ evict: (id) => evictedB.push(id) });
  const dropsB = new BusDrops(undefined);
  const relays: ListingRelay[] = [];
  const captured: Msg[] = [];

  before(async () => {
    [ncA, ncB, ncOutsider] = [await connectShared(), await connectShared(), await connectShared()];
    relays.push(ListingRelay.start(new SealedBus(ncA, key, new BusDrops(undefined)), prefix, listensA));
    relays.push(ListingRelay.start(new SealedBus(ncB, key, dropsB), prefix, listensB));
    ncOutsider.subscribe(subject, { callback: (_err, msg) => void captured.push(msg) });
    await Promise.all([ncA.flush(), ncB.flush(), ncOutsider.flush()]);
  });
  after(async () => {
    for (const relay of relays) relay.close();
    await Promise.all([ncA?.close(), ncB?.close(), ncOutsider?.close()]);
  });

  it('a tools change one replica saw reaches the other\'s listener once, and drops its cached toolbox', async () => {
    const sessionId = newId('ses');
    const onB = listensB.forSession(sessionId, box(['jot']));
    const heardB: ListingChange[] = [];
    onB.feed.subscribe((change) => void heardB.push(change));
    const admitted = await onB.gate.admit({ toolsListChanged: true });
    assert.ok('release' in admitted);
    const heardA: ListingChange[] = [];
    listensA.forSession(sessionId, box(['jot'])).feed.subscribe((change) => void heardA.push(change));
    // A rebuilt toolbox on A whose tools differ: the session's own change, announced here and relayed.
    listensA.forSession(sessionId, box(['jot', 'tag']));
    await until('B heard the change', () => heardB.length === 1);
    assert.deepEqual(heardB, [{ kind: 'tools' }]);
    assert.deepEqual(heardA, [{ kind: 'tools' }], 'A\'s own listeners heard it once: the echo is not taken back');
    assert.deepEqual(evictedB, [sessionId]);
    assert.deepEqual(evictedA, []);
    admitted.release();
  });

  it('a message that does not open with the deployment\'s key is dropped and counted, and reaches no listener; a replayed one too', async () => {
    const sessionId = newId('ses');
    const onB = listensB.forSession(sessionId, box(['jot']));
    const heardB: ListingChange[] = [];
    onB.feed.subscribe((change) => void heardB.push(change));
    const admitted = await onB.gate.admit({ toolsListChanged: true, resourceSubscriptions: ['notes://a'] });
    assert.ok('release' in admitted);
    const body = { v: 1, origin: 'outsider', sessionId, from: 'upstream', change: { kind: 'resource', uri: 'notes://a' } };
    const before = dropsB.snapshot();
    // Unsealed, as JSON: not a bus message at all.
    ncOutsider.publish(subject, new TextEncoder().encode(JSON.stringify(body)));
    // Sealed, but with a key of the attacker's own.
    const forged = sealEnvelope(busKey(randomBytes(32), prefix), subject, { k: 'listing', c: randomBytes(16).toString('hex'), n: 0, e: Date.now() + 60_000 }, body);
    ncOutsider.publish(subject, forged);
    await until('B dropped both', () => {
      const now = dropsB.snapshot();
      return now.malformed + now.unauthentic - before.malformed - before.unauthentic === 2;
    });
    assert.deepEqual(heardB, []);
    // One that A really sent, captured off the subject and sent again: taken once.
    captured.length = 0;
    const sessionOfA = listensA.forSession(sessionId, box(['jot']));
    void sessionOfA;
    listensA.forSession(sessionId, box(['jot', 'more']));
    await until('B heard A\'s change', () => heardB.length === 1);
    await until('the outsider captured it', () => captured.length === 1);
    ncOutsider.publish(subject, captured[0].data);
    await until('B dropped the replay', () => dropsB.snapshot().replayed === before.replayed + 1);
    assert.deepEqual(heardB, [{ kind: 'tools' }]);
    admitted.release();
  });
});
