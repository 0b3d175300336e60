import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LoginError } from '../../../src/mcp/oauth/errors.js';
import { startRedirectListener } from '../../../src/mcp/oauth/loopback.js';

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

describe('the loopback redirect listener', () => {
  test('listens on 127.0.0.1 at a port the system picked, path /callback', async () => {
    const a = await startRedirectListener();
    const b = await startRedirectListener();
    try {
      assert.match(a.redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      assert.notEqual(a.redirectUri, b.redirectUri);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a redirect with a foreign state is answered 400 and ignored; ours resolves with the code and iss', async () => {
    const listener = await startRedirectListener();
    try {
      const waiting = listener.waitForCallback('our-state-0123456789');
      const forged = await get(`${listener.redirectUri}?code=evil&state=someone-elses`);
      assert.equal(forged.status, 400);
      const missing = await get(`${listener.redirectUri}?code=evil`);
      assert.equal(missing.status, 400);
      const ours = await get(`${listener.redirectUri}?code=the-code&state=our-state-0123456789&iss=https%3A%2F%2Fauth.example`);
      assert.equal(ours.status, 200);
      assert.deepEqual(await waiting, { code: 'the-code', iss: 'https://auth.example' });
      // One-shot: once settled, nothing more is accepted.
      assert.equal((await get(`${listener.redirectUri}?code=x&state=our-state-0123456789`)).status, 404);
    } finally {
      await listener.close();
    }
  });

  test('an error redirect with our state rejects with a LoginError whose code is reduced to safe characters', async () => {
    const listener = await startRedirectListener();
    try {
      const refused = assert.rejects(listener.waitForCallback('s1'), (err: unknown) => {
        assert.ok(err instanceof LoginError);
        assert.equal(err.reason, 'authorization');
        assert.match(err.message, /\(access_deniedscript\)/);
        return true;
      });
      const page = await get(`${listener.redirectUri}?state=s1&error=${encodeURIComponent('access_denied<script>')}`);
      assert.equal(page.status, 400);
      assert.ok(!page.body.includes('<script>'));
      await refused;
    } finally {
      await listener.close();
    }
  });

  test('other paths and methods are 404; aborting rejects the wait', async () => {
    const listener = await startRedirectListener();
    try {
      const controller = new AbortController();
      const waiting = listener.waitForCallback('s2', { signal: controller.signal });
      assert.equal((await get(listener.redirectUri.replace('/callback', '/other'))).status, 404);
      const post = await fetch(`${listener.redirectUri}?state=s2&code=c`, { method: 'POST' });
      await post.body?.cancel();
      assert.equal(post.status, 404);
      controller.abort();
      await assert.rejects(waiting, LoginError);
    } finally {
      await listener.close();
    }
    await assert.rejects(fetch(listener.redirectUri), 'closed after close()');
  });
});
