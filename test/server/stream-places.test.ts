/**
 * How the live call stream's places are shared (stream-places.ts): one key holds at most its share; read keys
 * together never take the last places, which are kept for admin keys; nobody passes the places in all. Each
 * refusal names the limit it met.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { placeRefusal, type StreamHolder } from '../../src/server/stream-places.js';

const reader: StreamHolder = { id: 'key_r', prefix: 'sk_read', scope: 'read' };
const admin: StreamHolder = { id: 'key_a', prefix: 'sk_admn', scope: 'admin' };
const limits = { max: 64, perKey: 8 };

describe('sharing the stream places', () => {
  it('a key with fewer than its share gets a place while places are left', () => {
    assert.equal(placeRefusal({ all: 0, byReaders: 0, byKey: 0 }, reader, limits), null);
    assert.equal(placeRefusal({ all: 55, byReaders: 55, byKey: 7 }, reader, limits), null);
    assert.equal(placeRefusal({ all: 63, byReaders: 56, byKey: 7 }, admin, limits), null);
  });

  it('a key holding its share is refused with 429, whatever its scope, naming the per-key limit', () => {
    for (const holder of [reader, admin]) {
      const refusal = placeRefusal({ all: 8, byReaders: holder === reader ? 8 : 0, byKey: 8 }, holder, limits);
      assert.equal(refusal?.status, 429);
      assert.equal(refusal?.code, 'too_many_streams_for_key');
      assert.match(refusal!.message, new RegExp(`${holder.prefix}… holds 8 call streams, as many as one key may hold`));
      assert.equal(refusal?.headers?.['retry-after'], '2');
    }
  });

  it('read keys together stop short of the places kept for admin keys; an admin key still gets them', () => {
    const refusal = placeRefusal({ all: 56, byReaders: 56, byKey: 0 }, reader, limits);
    assert.equal(refusal?.status, 503);
    assert.equal(refusal?.code, 'too_many_streams');
    assert.match(refusal!.message, /read keys hold 56 call streams.*the last 8 of the 64 places are kept for admin keys/);
    assert.equal(placeRefusal({ all: 56, byReaders: 56, byKey: 0 }, admin, limits), null);
    // Places admins hold do not count against readers.
    assert.equal(placeRefusal({ all: 60, byReaders: 52, byKey: 0 }, reader, limits), null);
  });

  it('nobody passes the places in all', () => {
    for (const holder of [reader, admin]) {
      const refusal = placeRefusal({ all: 64, byReaders: holder === reader ? 40 : 56, byKey: 0 }, holder, limits);
      assert.equal(refusal?.status, 503);
      assert.match(refusal!.message, /64 call streams are open, as many as this server holds/);
    }
  });
});
