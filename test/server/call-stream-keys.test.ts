/**
 * Trust boundaries, finding 4: the live call stream follows the key that opened it. A stream ends within about
 * a second of its key's revocation — made through this server's API, or by another process on the same data
 * directory — with a last `event: end` that says why, and no call made after the revocation reaches it. (Keys
 * have no expiry today: revocation is the only way a key stops being good.) Places are capped per key, and the
 * last of them are kept for admin keys, so no reader — nor all readers together — shuts the admin out.
 *
 * Real parts only: the platform server in this process (SQLite, the worker pool, the example packages), keys
 * made and revoked through its API, streams read with fetch.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ApiKeys } from '../../src/platform/api-keys.js';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import * as callStream from '../../src/server/call-stream.js';
import { startInProcess, type InProcess } from './helpers/harness.js';
import { openSse, type SseEvent, type SseStream } from './helpers/sse.js';

/** Far less than the 15 s heartbeat, far more than the 1 s check: a stream that outlives its key fails here. */
const CEILING_MS = 8_000;
/** The per-key cap (read through the module, so that this file still runs, and fails, on a server without one). */
const STREAMS_PER_KEY = (callStream as Record<string, unknown>).STREAMS_PER_KEY as number;

let s: InProcess;
let session: string;
const opened: SseStream[] = [];

before(async () => {
  s = await startInProcess();
  session = (await s.call('POST', `/v1/agents/${s.agentId}/sessions`, {})).body.id;
});
after(async () => {
  for (const sse of opened) sse.close();
  await s.close();
});

async function newKey(scope: 'admin' | 'read'): Promise<{ id: string; key: string }> {
  const made = await s.call('POST', '/v1/keys', { name: `streams-${scope}`, scope });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return { id: made.body.id, key: made.body.key };
}
async function stream(key: string): Promise<SseStream> {
  const sse = await openSse(`${s.url}/v1/calls/stream?session=${session}`, { authorization: `Bearer ${key}` });
  opened.push(sse);
  return sse;
}
async function within<T>(promise: Promise<T>, what: string, ms = CEILING_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
const next = (sse: SseStream, what = 'the next event'): Promise<SseEvent> => within(sse.next(), what);
const greet = async (name: string): Promise<string> => {
  const answer = await s.call('POST', `/v1/sessions/${session}/calls`, { tool: 'greet', arguments: { name } });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.call.id as string;
};
async function callEvent(sse: SseStream): Promise<{ id: string; outcome: string }> {
  const event = await next(sse, 'a call event');
  assert.equal(event.event, 'call', JSON.stringify(event));
  return JSON.parse(event.data);
}
/** The stream's last event is `end`, naming the revoked key, and then it is closed. */
async function endsRevoked(sse: SseStream): Promise<void> {
  const end = await next(sse, 'the end of the revoked key\'s stream');
  assert.equal(end.event, 'end', JSON.stringify(end));
  assert.equal(end.id, null, 'the end event is not a point to resume from');
  assert.equal(JSON.parse(end.data).reason, 'key_revoked');
  await within(sse.ended, 'the connection closing');
  await assert.rejects(sse.next(), /ended/);
}
/** The places the server's live feed holds now. */
const held = (): number => s.server.platform.calls.events.subscribers;
/** Waits until the server has let go of every stream a test before closed (the client's close reaches it later). */
async function noneHeld(): Promise<void> {
  await within((async () => { while (held() > 0) await new Promise((resolve) => setTimeout(resolve, 10)); })(), 'the streams closed before to end');
}

describe('a stream follows its key', () => {
  it('a read key\'s stream ends within a second of its revocation through the API, and hears no call after it', async () => {
    const reader = await newKey('read');
    const watched = await stream(reader.key);
    const admin = await stream(s.apiKey);
    assert.equal(watched.status, 200);
    const earlier = await greet('before');
    for (const sse of [watched, admin]) {
      assert.deepEqual([(await callEvent(sse)).id, (await callEvent(sse)).id], [earlier, earlier], 'the stream is live');
    }
    assert.equal((await s.call('DELETE', `/v1/keys/${reader.id}`)).status, 200);
    await endsRevoked(watched);
    // A call after the revocation: the admin's stream hears it, the revoked key's stream got nothing more.
    const afterwards = await greet('after');
    assert.deepEqual([(await callEvent(admin)).id, (await callEvent(admin)).id], [afterwards, afterwards]);
    admin.close();
    // And the key cannot open another.
    assert.equal((await stream(reader.key)).status, 401);
  });

  it('a key revoked by another process on the same data directory ends its streams too (within about a second)', async () => {
    const reader = await newKey('read');
    const watched = await stream(reader.key);
    assert.equal(watched.status, 200);
    // Another process's write, not this server's API: only a check of the store can see it.
    const other = new SqliteStore(join(s.dataDir, 'subako.db'));
    try {
      await new ApiKeys(other).revoke(reader.id);
    } finally {
      await other.close();
    }
    await endsRevoked(watched);
  });

  it('a key holds at most its share of places: past it a clear 429, and the admin still gets a stream', async () => {
    await noneHeld();
    const reader = await newKey('read');
    // One key opens streams until it is refused (never more than every place there is).
    const max = s.server.platform.calls.events.maxSubscribers;
    const mine: SseStream[] = [];
    let refused: SseStream | null = null;
    while (refused === null && mine.length <= max) {
      const sse = await stream(reader.key);
      if (sse.status === 200) mine.push(sse);
      else refused = sse;
    }
    assert.equal(refused?.status, 429, `one read key held ${mine.length} of ${max} places, then got ${refused?.status}`);
    assert.equal(mine.length, STREAMS_PER_KEY);
    assert.ok(Number(refused!.headers.get('retry-after')) >= 1, 'says when to try again');
    const body = await fetch(`${s.url}/v1/calls/stream`, { headers: { authorization: `Bearer ${reader.key}` } }).then((r) => r.json());
    assert.equal(body.error.code, 'too_many_streams_for_key');
    assert.match(body.error.message, new RegExp(`${STREAMS_PER_KEY} call streams`), body.error.message);
    const admin = await stream(s.apiKey);
    assert.equal(admin.status, 200, 'the admin is not shut out');
    // Revoked, the reader's streams all end and give their places back.
    assert.equal((await s.call('DELETE', `/v1/keys/${reader.id}`)).status, 200);
    for (const sse of mine) await endsRevoked(sse);
    assert.equal(held(), 1, 'only the admin\'s stream holds a place');
    admin.close();
  });

  it('readers together never take the places kept for admin keys; revoked, their places are free again', async () => {
    await noneHeld();
    const max = s.server.platform.calls.events.maxSubscribers;
    const readers: { id: string; key: string }[] = [];
    const streams: SseStream[] = [];
    // Read keys, each opening streams until refused: its own cap (429) sends the next key, the readers' share (503) stops.
    let refusal: Response | null = null;
    while (refusal === null && streams.length <= max) {
      const reader = await newKey('read');
      readers.push(reader);
      for (;;) {
        const sse = await stream(reader.key);
        if (sse.status === 200) {
          streams.push(sse);
          continue;
        }
        if (sse.status !== 429) refusal = await fetch(`${s.url}/v1/calls/stream`, { headers: { authorization: `Bearer ${reader.key}` } });
        break;
      }
    }
    assert.ok(refusal, `readers took ${streams.length} of ${max} places and were never refused`);
    assert.equal(refusal.status, 503);
    const body = await refusal.json();
    assert.equal(body.error.code, 'too_many_streams');
    assert.match(body.error.message, /kept for admin keys/);
    assert.ok(streams.length < max, 'refused while places were left');
    // Those places are the admin's: a whole key's share of them.
    const admins = await Promise.all(Array.from({ length: STREAMS_PER_KEY }, () => stream(s.apiKey)));
    assert.deepEqual(admins.map((sse) => sse.status), admins.map(() => 200));
    // One reader revoked: its streams end and another reader gets places again.
    const [first] = readers;
    assert.equal((await s.call('DELETE', `/v1/keys/${first.id}`)).status, 200);
    const ends = streams.splice(0, STREAMS_PER_KEY);
    for (const sse of ends) await endsRevoked(sse);
    const later = await stream(readers[readers.length - 1].key);
    assert.equal(later.status, 200, 'the revoked reader\'s places are free');
    for (const sse of [...streams, ...admins, later]) sse.close();
  });
});
