import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EgressError, MAX_REQUEST_BYTES, MAX_TIMEOUT_MS, parseHttpRequest } from '../../src/egress/index.js';

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

function refusedAs(kind: string, request: unknown): void {
  assert.throws(
    () => parseHttpRequest(bytes(request)),
    (error: unknown) => error instanceof EgressError && error.kind === kind,
    `${JSON.stringify(request).slice(0, 120)} must be ${kind}`,
  );
}

describe('request: only url is required; the defaults of the page', () => {
  it('method GET, no headers, inline output, follow_redirects true, no timeout', () => {
    const request = parseHttpRequest(bytes({ url: 'https://api.example.com/orders?x=1#frag' }));
    assert.equal(request.method, 'GET');
    assert.deepEqual(request.headers, {});
    assert.deepEqual(request.output, { type: 'inline' });
    assert.equal(request.followRedirects, true);
    assert.equal(request.timeoutMs, undefined);
    assert.equal(request.body, undefined);
    assert.equal(request.url.href, 'https://api.example.com/orders?x=1', 'the fragment is never sent');
  });
  it('null stands for an absent optional field', () => {
    const request = parseHttpRequest(bytes({ url: 'https://a.example/', method: null, headers: null, timeout_ms: null }));
    assert.equal(request.method, 'GET');
  });
  it('the example of the page parses', () => {
    const request = parseHttpRequest(bytes({
      method: 'POST', url: 'https://api.example.com/orders', headers: { accept: 'application/json' },
      body: { type: 'json', json: { order: 1042 } }, output: { type: 'inline' }, follow_redirects: true, timeout_ms: 5000,
    }));
    assert.equal(request.method, 'POST');
    assert.deepEqual(request.headers, { accept: 'application/json' });
    assert.equal(request.body?.type, 'json');
    assert.equal(new TextDecoder().decode((request.body as { bytes: Uint8Array }).bytes), '{"order":1042}');
    assert.equal(request.timeoutMs, 5000);
  });
});

describe('request: methods', () => {
  it('GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS are accepted', () => {
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      assert.equal(parseHttpRequest(bytes({ method, url: 'https://a.example/' })).method, method);
    }
  });
  it('CONNECT, TRACE, TRACK, lower case and non-strings are invalid_request', () => {
    for (const method of ['CONNECT', 'TRACE', 'TRACK', 'get', 'FOO', '', 1, true]) refusedAs('invalid_request', { method, url: 'https://a.example/' });
  });
});

describe('request: url', () => {
  it('plain http is forbidden_destination', () => refusedAs('forbidden_destination', { url: 'http://api.example.com/' }));
  it('other schemes, relative URLs, garbage and a missing url are invalid_request', () => {
    for (const url of ['ftp://a.example/', 'file:///etc/passwd', 'ws://a.example/', '/relative', 'not a url', 'https://', 42]) {
      refusedAs('invalid_request', { url });
    }
    refusedAs('invalid_request', {});
  });
  it('userinfo in the URL is invalid_request', () => refusedAs('invalid_request', { url: 'https://user:pw@a.example/' }));
});

describe('request: fields', () => {
  it('an unknown field is invalid_request', () => {
    refusedAs('invalid_request', { url: 'https://a.example/', redirect: 'follow' });
    refusedAs('invalid_request', { url: 'https://a.example/', Method: 'GET' });
  });
  it('a request that is not UTF-8, not JSON, or not an object is invalid_request', () => {
    assert.throws(() => parseHttpRequest(new Uint8Array([0xff, 0xfe, 0x7b])), (e: unknown) => e instanceof EgressError && e.kind === 'invalid_request');
    refusedAs('invalid_request', '{"url": ');
    refusedAs('invalid_request', '[]');
    refusedAs('invalid_request', '"https://a.example/"');
  });
  it('a request over 8 MiB is invalid_request, one just under parses', () => {
    const pad = (n: number) => JSON.stringify({ url: 'https://a.example/', body: { type: 'text', text: 'x'.repeat(n) } });
    const overhead = pad(0).length;
    assert.equal(parseHttpRequest(bytes(pad(MAX_REQUEST_BYTES - overhead))).body?.type, 'text');
    refusedAs('invalid_request', pad(MAX_REQUEST_BYTES - overhead + 1));
  });
  it('follow_redirects must be a boolean', () => {
    assert.equal(parseHttpRequest(bytes({ url: 'https://a.example/', follow_redirects: false })).followRedirects, false);
    refusedAs('invalid_request', { url: 'https://a.example/', follow_redirects: 'no' });
  });
  it(`timeout_ms must be a positive integer up to ${MAX_TIMEOUT_MS}`, () => {
    assert.equal(parseHttpRequest(bytes({ url: 'https://a.example/', timeout_ms: MAX_TIMEOUT_MS })).timeoutMs, MAX_TIMEOUT_MS);
    for (const timeout_ms of [0, -1, 1.5, '100', MAX_TIMEOUT_MS + 1, 1e300]) refusedAs('invalid_request', { url: 'https://a.example/', timeout_ms });
  });
});

describe('request: headers', () => {
  it('upper-case names are invalid_request', () => refusedAs('invalid_request', { url: 'https://a.example/', headers: { Accept: '*/*' } }));
  it('names that are not tokens, and values that are not strings or carry CR, LF, NUL or non-Latin-1 text, are invalid_request', () => {
    for (const headers of [{ 'a b': 'x' }, { 'a:b': 'x' }, { '': 'x' }, { accept: 1 }, { accept: 'a\r\nx-injected: 1' }, { accept: 'a\nb' }, { accept: 'a\0' }, { accept: '日本' }, ['x']]) {
      refusedAs('invalid_request', { url: 'https://a.example/', headers });
    }
  });
  it('tabs and Latin-1 values are valid', () => {
    assert.deepEqual(parseHttpRequest(bytes({ url: 'https://a.example/', headers: { 'x-a': 'a\tb', 'x-b': 'café' } })).headers, { 'x-a': 'a\tb', 'x-b': 'café' });
  });
  it('connection headers are dropped, the others kept', () => {
    const headers = {
      host: 'evil.example', 'content-length': '5', connection: 'close', 'transfer-encoding': 'chunked', 'keep-alive': '1',
      upgrade: 'websocket', te: 'trailers', trailer: 'x', 'proxy-connection': 'keep-alive', expect: '100-continue', accept: 'text/plain',
    };
    assert.deepEqual(parseHttpRequest(bytes({ url: 'https://a.example/', headers })).headers, { accept: 'text/plain' });
  });
});

describe('request: body and output', () => {
  it('text, json and file bodies', () => {
    const text = parseHttpRequest(bytes({ url: 'https://a.example/', body: { type: 'text', text: 'héllo' } })).body;
    assert.deepEqual(text && text.type === 'text' ? [Buffer.from(text.bytes).toString(), text.defaultContentType] : null, ['héllo', 'text/plain; charset=utf-8']);
    const json = parseHttpRequest(bytes({ url: 'https://a.example/', body: { type: 'json', json: null } })).body;
    assert.deepEqual(json && json.type === 'json' ? [Buffer.from(json.bytes).toString(), json.defaultContentType] : null, ['null', 'application/json']);
    assert.deepEqual(parseHttpRequest(bytes({ url: 'https://a.example/', body: { type: 'file', path: '/volume/tmp/in.bin' } })).body, { type: 'file', path: '/volume/tmp/in.bin' });
  });
  it('a bad body is invalid_request', () => {
    for (const body of ['text', { type: 'text' }, { type: 'text', text: 1 }, { type: 'json' }, { type: 'file' }, { type: 'file', path: 1 },
      { type: 'form', fields: {} }, { type: 'text', text: 'a', extra: 1 }, []]) {
      refusedAs('invalid_request', { url: 'https://a.example/', method: 'POST', body });
    }
  });
  it('inline and file outputs', () => {
    assert.deepEqual(parseHttpRequest(bytes({ url: 'https://a.example/', output: { type: 'file', path: '/volume/tmp/o' } })).output, { type: 'file', path: '/volume/tmp/o' });
  });
  it('a bad output is invalid_request', () => {
    for (const output of ['file', { type: 'file' }, { type: 'inline', path: '/x' }, { type: 'stream' }]) refusedAs('invalid_request', { url: 'https://a.example/', output });
  });
});
