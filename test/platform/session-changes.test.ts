/**
 * The pure rules of change through a session (platform/session-changes.ts, mcp/change-feed.ts): a server's change in
 * the session's names, a listener's URIs back in each server's, and the pace of list changes on one stream.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sessionChangeOf, upstreamFilters } from '../../src/platform/session-changes.js';
import { resourceNaming } from '../../src/platform/calls/resource-uris.js';
import { ChangeFeed, changeOfNotification, pacedListener, type ListingChange } from '../../src/mcp/index.js';

const several = resourceNaming(['notes', 'mail']);
const one = resourceNaming(['notes']);

describe('a server\'s change as the session names it', () => {
  it('a list change is the session\'s list change of the same kind', () => {
    for (const kind of ['tools', 'prompts', 'resources'] as const) assert.deepEqual(sessionChangeOf('notes', { kind }, several), { kind });
  });

  it('a resource update names the resource as the session serves it: prefixed with several servers, as written with one', () => {
    assert.deepEqual(sessionChangeOf('notes', { kind: 'resource', uri: 'notes://a' }, several), { kind: 'resource', uri: 'subako-mcp://notes/notes://a' });
    assert.deepEqual(sessionChangeOf('notes', { kind: 'resource', uri: 'notes://a' }, one), { kind: 'resource', uri: 'notes://a' });
  });

  it('a server cannot name another server\'s resource: what it says is put under its own name', () => {
    assert.deepEqual(sessionChangeOf('notes', { kind: 'resource', uri: 'subako-mcp://mail/x://y' }, several), { kind: 'resource', uri: 'subako-mcp://notes/subako-mcp://mail/x://y' });
  });
});

describe('a listener\'s URIs, asked of each server in its own names', () => {
  it('each server is asked for every list change and for the URIs of its own the listeners named; unknown URIs go nowhere', () => {
    const filters = upstreamFilters(['notes', 'mail'], ['subako-mcp://notes/notes://b', 'subako-mcp://notes/notes://a', 'subako-mcp://other/x://y', 'notes://a'], several);
    const all = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };
    assert.deepEqual(filters.get('notes'), { ...all, resourceSubscriptions: ['notes://a', 'notes://b'] });
    assert.deepEqual(filters.get('mail'), all);
  });
});

describe('notifications read as changes', () => {
  it('the four change notifications, and nothing else', () => {
    assert.deepEqual(changeOfNotification('notifications/tools/list_changed', undefined), { kind: 'tools' });
    assert.deepEqual(changeOfNotification('notifications/resources/updated', { uri: 'a://b' }), { kind: 'resource', uri: 'a://b' });
    assert.equal(changeOfNotification('notifications/resources/updated', {}), undefined);
    assert.equal(changeOfNotification('notifications/message', { level: 'info' }), undefined);
  });
});

describe('the pace of one stream', () => {
  it('a list change within the window waits for its end, several coalesced; resource updates pass at once', () => {
    let now = 0;
    const heard: ListingChange[] = [];
    const paced = pacedListener((change) => void heard.push(change), 1000, () => now);
    paced.listener({ kind: 'tools' });
    now = 100;
    paced.listener({ kind: 'tools' });
    paced.listener({ kind: 'tools' });
    paced.listener({ kind: 'prompts' });
    paced.listener({ kind: 'resource', uri: 'a://b' });
    assert.deepEqual(heard, [{ kind: 'tools' }, { kind: 'prompts' }, { kind: 'resource', uri: 'a://b' }]);
    paced.stop();
  });

  it('a feed\'s listener that throws does not keep the change from the others', () => {
    const errors: Error[] = [];
    const feed = new ChangeFeed((error) => void errors.push(error));
    const heard: ListingChange[] = [];
    feed.subscribe(() => { throw new Error('broken stream'); });
    feed.subscribe((change) => void heard.push(change));
    feed.toolsChanged();
    assert.deepEqual(heard, [{ kind: 'tools' }]);
    assert.equal(errors.length, 1);
  });
});
