/**
 * An endpoint's calls in flight by request id (in-flight-calls.ts): a `notifications/cancelled` stops the one call
 * with that id; with two calls sharing the id (two clients of one endpoint) it stops neither; an id that is not
 * one, or that no call has, stops nothing; a string id and a number id are different ids; an answered call is no
 * longer cancellable.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InFlightCalls } from '../../src/mcp/in-flight-calls.js';

describe('calls in flight by request id', () => {
  it('a cancellation stops the one call with its id, with the reason it gave', () => {
    const calls = new InFlightCalls();
    const one = calls.begin(7);
    const other = calls.begin(8);
    assert.equal(calls.cancel(7, 'the user pressed stop'), 'cancelled');
    assert.equal(one.signal.aborted, true);
    assert.equal(one.signal.reason, 'the user pressed stop');
    assert.equal(other.signal.aborted, false);
  });

  it('two calls sharing an id: neither is stopped', () => {
    const calls = new InFlightCalls();
    const a = calls.begin('x');
    const b = calls.begin('x');
    assert.equal(calls.cancel('x'), 'ambiguous');
    assert.equal(a.signal.aborted || b.signal.aborted, false);
    b.end();
    assert.equal(calls.cancel('x'), 'cancelled');
    assert.equal(a.signal.aborted, true);
  });

  it('an id no call has, a string for a number, or no id at all stops nothing', () => {
    const calls = new InFlightCalls();
    const call = calls.begin(1);
    assert.equal(calls.cancel('1'), 'unknown');
    assert.equal(calls.cancel(2), 'unknown');
    assert.equal(calls.cancel(undefined), 'unknown');
    assert.equal(calls.cancel({ id: 1 }), 'unknown');
    assert.equal(call.signal.aborted, false);
  });

  it('an answered call is forgotten: cancelling it afterwards stops nothing', () => {
    const calls = new InFlightCalls();
    const call = calls.begin(3);
    call.end();
    assert.equal(calls.size, 0);
    assert.equal(calls.cancel(3), 'unknown');
    assert.equal(call.signal.aborted, false);
  });
});
