import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { abortWith } from '../../src/common/index.js';

describe('abortWith: a controller that follows another signal until let go', () => {
  it('aborts with the source\'s reason', () => {
    const source = new AbortController();
    const follower = new AbortController();
    abortWith(follower, source.signal);
    assert.equal(follower.signal.aborted, false);
    const reason = new Error('the caller went away');
    source.abort(reason);
    assert.equal(follower.signal.aborted, true);
    assert.equal(follower.signal.reason, reason);
  });

  it('follows no more once unlinked, and its own abort leaves the source alone', () => {
    const source = new AbortController();
    const follower = new AbortController();
    const unlink = abortWith(follower, source.signal);
    unlink();
    source.abort();
    assert.equal(follower.signal.aborted, false);
    const other = new AbortController();
    const second = new AbortController();
    abortWith(second, other.signal);
    second.abort();
    assert.equal(other.signal.aborted, false);
  });

  it('a source aborted already aborts the follower at once', () => {
    const source = new AbortController();
    source.abort('gone');
    const follower = new AbortController();
    abortWith(follower, source.signal)();
    assert.equal(follower.signal.reason, 'gone');
  });
});
