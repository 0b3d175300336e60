import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { McpAuthError } from '../../../src/mcp/errors.js';
import { CredentialFile } from '../../../src/mcp/oauth/credential-file.js';
import { storedTokens, type StoredCredential } from '../../../src/mcp/oauth/credential.js';
import { CredentialStore, CredentialStoreError, needsRefresh } from '../../../src/mcp/oauth/index.js';

let dir: string;
const key = randomBytes(32);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'subako-store-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function credential(accessToken: string, extra: Partial<StoredCredential['tokens']> = {}): StoredCredential {
  return {
    version: 1,
    serverUrl: 'https://mcp.example/mcp',
    resource: 'https://mcp.example/mcp',
    authorizationServer: { url: 'https://auth.example', metadata: { issuer: 'https://auth.example' } as never },
    client: { client_id: 'client-1', redirect_uris: ['http://127.0.0.1/callback'] },
    tokens: { accessToken, tokenType: 'Bearer', ...extra },
  };
}

describe('the credential store file', () => {
  test('entries are sealed, listed by name only, and the file is written with mode 0600', async () => {
    const store = new CredentialStore({ path: join(dir, 'a', 'credentials.json'), key });
    await store.save('github', credential('at-github-plaintext', { refreshToken: 'rt-github-plaintext' }));
    await store.save('linear', credential('at-linear-plaintext'));
    const text = await readFile(store.path, 'utf8');
    assert.ok(!text.includes('plaintext'));
    assert.deepEqual(Object.keys(JSON.parse(text).credentials), ['github', 'linear']);
    assert.deepEqual(await store.names(), ['github', 'linear']);
    assert.equal((await stat(store.path)).mode & 0o777, 0o600);
    assert.equal((await stat(join(dir, 'a'))).mode & 0o777, 0o700);
    assert.equal((await store.get('github'))?.tokens.refreshToken, 'rt-github-plaintext');
  });

  test('no temporary file or lock is left behind after writes', async () => {
    const store = new CredentialStore({ path: join(dir, 'b', 'credentials.json'), key });
    await Promise.all(['x', 'y', 'z'].map((name) => store.save(name, credential(`at-${name}`))));
    assert.deepEqual(await store.names(), ['x', 'y', 'z'], 'concurrent writers do not lose each other\'s entries');
    assert.deepEqual(await readdir(join(dir, 'b')), ['credentials.json']);
  });

  test('forget deletes one credential and says whether there was one', async () => {
    const store = new CredentialStore({ path: join(dir, 'c', 'credentials.json'), key });
    await store.save('one', credential('at-1'));
    await store.save('two', credential('at-2'));
    assert.equal(await store.forget('one'), true);
    assert.equal(await store.forget('one'), false);
    assert.deepEqual(await store.names(), ['two']);
    await assert.rejects(store.accessToken('one'), (err: unknown) => err instanceof McpAuthError && err.reason === 'missing');
  });

  test('an entry moved under another name does not open (the seal is bound to the name)', async () => {
    const path = join(dir, 'd', 'credentials.json');
    const store = new CredentialStore({ path, key });
    await store.save('alice', credential('at-alice'));
    const file = JSON.parse(await readFile(path, 'utf8'));
    file.credentials.mallory = file.credentials.alice;
    await writeFile(path, JSON.stringify(file));
    await assert.rejects(store.get('mallory'), { code: 'seal_error' });
    assert.equal((await store.get('alice'))?.tokens.accessToken, 'at-alice');
  });

  test('a different key cannot open the entries', async () => {
    const path = join(dir, 'e', 'credentials.json');
    await new CredentialStore({ path, key }).save('k', credential('at-k'));
    await assert.rejects(new CredentialStore({ path, key: randomBytes(32) }).get('k'), { code: 'seal_error' });
  });

  test('a corrupt file is a CredentialStoreError, not a crash', async () => {
    const path = join(dir, 'f.json');
    await writeFile(path, '{ not json');
    await assert.rejects(new CredentialStore({ path, key }).names(), (err: unknown) => err instanceof CredentialStoreError && err.reason === 'corrupt');
    await writeFile(path, JSON.stringify({ version: 99, credentials: {} }));
    await assert.rejects(new CredentialStore({ path, key }).names(), CredentialStoreError);
    await writeFile(path, JSON.stringify({ version: 1, credentials: { ok: 42 } }));
    await assert.rejects(new CredentialStore({ path, key }).names(), CredentialStoreError);
  });

  test('names outside [A-Za-z0-9._-] (paths, empty, too long) are refused', async () => {
    const store = new CredentialStore({ path: join(dir, 'g.json'), key });
    for (const name of ['', '../x', 'a/b', 'with space', '-leading', 'x'.repeat(65), '__proto__']) {
      await assert.rejects(store.save(name, credential('t')), (err: unknown) => err instanceof CredentialStoreError && err.reason === 'invalid_name', name);
    }
  });

  test('a stale lock left by a dead process is broken; a live one makes writers wait', async () => {
    const path = join(dir, 'h', 'credentials.json');
    const file = new CredentialFile({ path, key });
    const order: string[] = [];
    const first = file.update(async (editor) => {
      order.push('first in');
      await new Promise((resolve) => setTimeout(resolve, 100));
      editor.write('a', '{}');
      order.push('first out');
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = file.update((editor) => {
      order.push('second in');
      editor.write('b', '{}');
    });
    await Promise.all([first, second]);
    assert.deepEqual(order, ['first in', 'first out', 'second in']);
    assert.deepEqual(await file.names(), ['a', 'b']);

    await mkdir(`${path}.lock`);
    const longAgo = new Date(Date.now() - 120_000);
    await utimes(`${path}.lock`, longAgo, longAgo);
    await file.update((editor) => editor.write('c', '{}'));
    assert.deepEqual(await file.names(), ['a', 'b', 'c']);
  });
});

describe('when a token needs refreshing', () => {
  test('sixty seconds before expiry, not earlier; never when the server gave no expiry; always when it cannot be read', () => {
    assert.equal(needsRefresh(1_000_000, 1_000_000 - 60_001), false);
    assert.equal(needsRefresh(1_000_000, 1_000_000 - 60_000), true);
    assert.equal(needsRefresh(1_000_000, 2_000_000), true);
    assert.equal(needsRefresh(undefined, 9e15), false);
    assert.equal(needsRefresh(Date.parse('not a date'), 0), true);
  });

  test('a refresh response without a refresh token keeps the old one; with one, it replaces it', () => {
    const previous = { accessToken: 'old', tokenType: 'Bearer', refreshToken: 'rt-old', scope: 's' };
    const kept = storedTokens({ access_token: 'new', token_type: 'Bearer', expires_in: 10 }, 1000, previous);
    assert.deepEqual(kept, { accessToken: 'new', tokenType: 'Bearer', refreshToken: 'rt-old', scope: 's', expiresAt: 11_000 });
    const rotated = storedTokens({ access_token: 'new', token_type: 'Bearer', refresh_token: 'rt-new' }, 1000, previous);
    assert.equal(rotated.refreshToken, 'rt-new');
    assert.equal(rotated.expiresAt, undefined);
  });
});
