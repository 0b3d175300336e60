/**
 * How `subako serve` serves the console: its files from dist/console at `/` under a strict
 * Content-Security-Policy with nosniff, index.html for every page path (the console routes it), hashed assets
 * cached for good, and nothing of the API's answers changed: an unknown `/v1/…` path stays a JSON 404. A
 * server whose console was not built says how to build it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONSOLE_CSP, ConsoleFiles } from '../../src/server/console-files.js';
import { requireConsoleBuild } from '../console/helpers.js';
import { startInProcess, tempDir, type InProcess } from './helpers/harness.js';

let s: InProcess;
before(async () => {
  requireConsoleBuild();
  s = await startInProcess();
});
after(() => s.close());

describe('the console\'s files', () => {
  it('answers / and every page path with index.html, under a CSP that allows nothing inline or foreign', async () => {
    const index = await fetch(`${s.url}/`);
    const html = await index.text();
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(index.headers.get('content-security-policy'), CONSOLE_CSP);
    assert.equal(index.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(index.headers.get('x-frame-options'), 'DENY');
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-|https?:|\*|data:/);
    assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
    assert.doesNotMatch(html, /<style|style=/, 'no inline style');
    // A user's id is the application's and may hold dots: its page is a page, not a file.
    for (const page of ['/calls', '/calls/call_x', '/sessions/ses_1', '/vaults', '/users', '/users/ada.smith%40example.com']) {
      const answer = await fetch(`${s.url}${page}`);
      assert.equal(answer.status, 200, page);
      assert.equal(await answer.text(), html, page);
    }
  });

  it('serves the hashed assets with their types, cached for good, and answers 304 to a matching ETag', async () => {
    const html = await (await fetch(`${s.url}/`)).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
    const answer = await fetch(`${s.url}${script}`);
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.match(answer.headers.get('cache-control') ?? '', /immutable/);
    await answer.arrayBuffer();
    const again = await fetch(`${s.url}${script}`, { headers: { 'if-none-match': answer.headers.get('etag')! } });
    assert.equal(again.status, 304);
    const head = await fetch(`${s.url}/`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
  });

  it('leaves API paths and unknown files to the API: JSON 404s', async () => {
    for (const path of ['/v1/nothing', '/v1', '/assets/missing.js', '/.well-known/anything', '/nowhere', '/calls/x.json']) {
      const answer = await fetch(`${s.url}${path}`);
      assert.equal(answer.status, 404, path);
      assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, path);
    }
    const post = await fetch(`${s.url}/calls`, { method: 'POST' });
    assert.equal(post.status, 404);
    assert.equal((await post.json()).error.code, 'not_found');
  });

  it('says how to build the console when it was not built', async () => {
    const files = new ConsoleFiles(tempDir('subako-no-console-'));
    assert.equal(files.built, false);
    const server = createServer((req, res) => { if (!files.handle(req, res)) { res.writeHead(404); res.end(); } });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/calls`);
      assert.equal(answer.status, 503);
      assert.match(await answer.text(), /npm run build/);
    } finally {
      server.close();
    }
  });
});
