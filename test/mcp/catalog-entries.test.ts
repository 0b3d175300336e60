/**
 * What a remote server lists of its resources, templates and prompts, and what it asks a client for, is checked
 * before anyone sees it (catalog-entries.ts, input-requests.ts): each entry rebuilt from MCP's fields, of MCP's
 * types, within bounds; an entry with an unusable identity is left out whole. And a request's trace context is
 * taken only when it is a W3C `traceparent` (trace-context.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  completionResultOf, isRelayableUri, promptEntryOf, promptResultOf, readResultOf, resourceEntryOf, resourceTemplateEntryOf, MAX_URI_CHARS,
} from '../../src/mcp/catalog-entries.js';
import { acceptedInputKinds, capabilitiesFor, checkInputRequests, MAX_INPUT_REQUESTS } from '../../src/mcp/input-requests.js';
import { parseTraceparent, traceparentOf } from '../../src/mcp/trace-context.js';

describe('a listed resource is relayed only with a URI and a name anyone can be shown', () => {
  it('keeps MCP\'s fields of their types, drops the rest', () => {
    assert.deepEqual(resourceEntryOf({
      uri: 'file:///a.txt', name: 'a', title: 'A', description: 'd', mimeType: 'text/plain', size: 3,
      annotations: { audience: ['user'], priority: 0.5, lastModified: '2026-01-01T00:00:00Z', extra: 1 }, _meta: { 'io.modelcontextprotocol/x': 1 }, evil: true,
    }), {
      uri: 'file:///a.txt', name: 'a', title: 'A', description: 'd', mimeType: 'text/plain', size: 3,
      annotations: { audience: ['user'], priority: 0.5, lastModified: '2026-01-01T00:00:00Z' },
    });
    assert.deepEqual(resourceEntryOf({ uri: 'a://b', name: 'b', size: -1, mimeType: 'not a mime', title: 7, annotations: { priority: 3 } }), { uri: 'a://b', name: 'b' });
  });

  it('leaves out an entry whose URI has no scheme, whitespace, a control or a reordering character, or is too long', () => {
    for (const uri of ['no-scheme', 'a://b c', 'a://b\u0000', 'a://b\u000a', 'a://\u202eb', 'a://b\u2066', `a://${'x'.repeat(MAX_URI_CHARS)}`, 42, undefined]) {
      assert.equal(resourceEntryOf({ uri, name: 'n' }), undefined, JSON.stringify(uri));
      assert.equal(isRelayableUri(uri), false, JSON.stringify(uri));
    }
    assert.equal(resourceEntryOf({ uri: 'a://b', name: '' }), undefined);
    assert.equal(resourceEntryOf({ uri: 'a://b', name: 'n'.repeat(257) }), undefined);
    assert.equal(resourceEntryOf({ uri: 'a://b', name: 'bell\u0007' }), undefined);
    assert.equal(resourceEntryOf(null), undefined);
    assert.equal(resourceEntryOf(['a://b']), undefined);
  });

  it('a template is checked as a resource is, by its uriTemplate', () => {
    assert.deepEqual(resourceTemplateEntryOf({ uriTemplate: 'file:///{path}', name: 'files' }), { uriTemplate: 'file:///{path}', name: 'files' });
    assert.equal(resourceTemplateEntryOf({ uriTemplate: 'file:///{ path}', name: 'files' }), undefined);
  });
});

describe('a listed prompt is relayed only when all of it can be described', () => {
  it('keeps its arguments, each with MCP\'s fields', () => {
    assert.deepEqual(promptEntryOf({ name: 'p', arguments: [{ name: 'a', required: true, description: 'x', other: 1 }] }), { name: 'p', arguments: [{ name: 'a', required: true, description: 'x' }] });
  });
  it('leaves out a prompt with an unusable argument, too many arguments, or arguments that are not a list', () => {
    assert.equal(promptEntryOf({ name: 'p', arguments: [{ name: 'ok' }, { name: '' }] }), undefined);
    assert.equal(promptEntryOf({ name: 'p', arguments: Array.from({ length: 65 }, (_, i) => ({ name: `a${i}` })) }), undefined);
    assert.equal(promptEntryOf({ name: 'p', arguments: { name: 'a' } }), undefined);
  });
});

describe('answers are bounded and of MCP\'s shapes', () => {
  it('a read keeps text or blob parts with relayable URIs, and valid caching hints', () => {
    const read = readResultOf({
      contents: [{ uri: 'a://1', text: 't' }, { uri: 'a://2', blob: 'AA==' }, { uri: 'a://3' }, { uri: 'bad uri', text: 'x' }, 'junk'],
      ttlMs: 5, cacheScope: 'public',
    });
    assert.deepEqual(read, { contents: [{ uri: 'a://1', text: 't' }, { uri: 'a://2', blob: 'AA==' }], ttlMs: 5, cacheScope: 'public' });
    assert.deepEqual(readResultOf({ contents: [], ttlMs: -1, cacheScope: 'everyone' }), { contents: [] });
    assert.equal(readResultOf({ contents: Array.from({ length: 2000 }, (_, i) => ({ uri: `a://${i}`, text: '' })) }).contents.length, 1024);
  });
  it('a prompt keeps messages of a known role with a typed content block', () => {
    assert.deepEqual(promptResultOf({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }, { role: 'system', content: { type: 'text' } }, { role: 'user', content: 'x' }] }),
      { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] });
  });
  it('a completion keeps at most 100 string values of at most 1024 characters', () => {
    const values = [...Array.from({ length: 150 }, (_, i) => `v${i}`), 7, 'x'.repeat(1025)];
    const result = completionResultOf({ completion: { values, total: 152, hasMore: true } });
    assert.equal(result.completion.values.length, 100);
    assert.equal(result.completion.total, 152);
    assert.deepEqual(completionResultOf({ completion: { values: 'no' } }), { completion: { values: [] } });
  });
});

describe('input requests a server asks for', () => {
  const form = { method: 'elicitation/create', params: { message: 'ok?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } } };
  it('form and URL elicitation, sampling and roots are relayed as rebuilt objects, without the server\'s other keys', () => {
    const checked = checkInputRequests({
      a: { ...form, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'forged' } } },
      b: { method: 'elicitation/create', params: { mode: 'url', message: 'sign in', url: 'https://x.example/in', extra: 1 } },
      c: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
      d: { method: 'roots/list', params: { anything: true } },
    }, 'state');
    assert.ok(checked.ok);
    assert.deepEqual(checked.requests, {
      a: { method: 'elicitation/create', params: { mode: 'form', message: 'ok?', requestedSchema: form.params.requestedSchema } },
      b: { method: 'elicitation/create', params: { mode: 'url', message: 'sign in', url: 'https://x.example/in' } },
      c: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
      d: { method: 'roots/list' },
    });
  });
  it('refuses what the revision does not define, a URL that is not http(s), too many requests, a key or a state out of bounds', () => {
    const refused = (requests: unknown, state?: unknown) => { const c = checkInputRequests(requests, state); return c.ok ? '' : c.problem; };
    assert.match(refused({ x: { method: 'tools/call', params: {} } }), /not an input request of MCP 2026-07-28/);
    assert.match(refused({ x: { method: 'elicitation/create', params: { mode: 'url', message: 'm', url: 'javascript:alert(1)' } } }), /not an http\(s\) URL/);
    assert.match(refused({ x: { method: 'elicitation/create', params: { mode: 'dance', message: 'm' } } }), /neither form nor url/);
    assert.match(refused({ x: { method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'array' } } } }), /requestedSchema/);
    assert.match(refused(Object.fromEntries(Array.from({ length: MAX_INPUT_REQUESTS + 1 }, (_, i) => [`k${i}`, form]))), /more than the 16/);
    assert.match(refused({ ['k'.repeat(129)]: form }), /key/);
    assert.match(refused({ a: form }, 'x'.repeat(64 * 1024 + 1)), /requestState/);
    assert.match(refused([form]), /not an object/);
    const proto = checkInputRequests(JSON.parse('{"__proto__": {"method": "roots/list"}}'), undefined);
    assert.ok(proto.ok && Object.hasOwn(proto.requests, '__proto__'), 'a key named __proto__ is a key like any other');
  });
  it('what a request declares, and declares back', () => {
    assert.deepEqual(acceptedInputKinds({ elicitation: {} }), { form: true, url: false, sampling: false, roots: false });
    assert.deepEqual(acceptedInputKinds({ elicitation: { url: {} }, sampling: {}, roots: {} }), { form: false, url: true, sampling: true, roots: true });
    assert.deepEqual(acceptedInputKinds(undefined), { form: false, url: false, sampling: false, roots: false });
    assert.deepEqual(capabilitiesFor({ form: true, url: true, sampling: false, roots: true }), { elicitation: { form: {}, url: {} }, roots: {} });
    assert.deepEqual(capabilitiesFor({ form: false, url: false, sampling: false, roots: false }), {});
  });
});

describe('trace context', () => {
  const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  it('takes a version-00 traceparent as it is', () => {
    assert.equal(parseTraceparent(valid), valid);
    assert.equal(traceparentOf({ traceparent: valid, other: 1 }), valid);
  });
  it('reads a later version by its first fields and passes it on as version 00', () => {
    assert.equal(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra'), valid);
  });
  it('drops what is not one: all-zero ids, version ff, upper case, a 00 with more fields, other types', () => {
    for (const value of [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      `${valid}-more`, `${valid}\r\nx-injected: 1`, 'nonsense', 42, null, undefined,
    ]) assert.equal(parseTraceparent(value), undefined, String(value));
    assert.equal(traceparentOf(undefined), undefined);
  });
});
