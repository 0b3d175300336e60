import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/platform/store/sqlite-store.js';
import { VaultService } from '../../src/platform/vaults.js';
import { ValidationError } from '../../src/errors.js';

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'subako-vault-'));
  const store = new SqliteStore(join(dir, 'subako.db'));
  return { dir, store, vaults: new VaultService(store, randomBytes(32)) };
}

/** A real OAuth token endpoint on loopback that counts refreshes and rotates refresh tokens. */
async function tokenEndpoint() {
  const seen: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      seen.push(form);
      if (form.get('refresh_token') !== `refresh-${seen.length}`) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"error":"invalid_grant"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: `access-${seen.length + 1}`, token_type: 'Bearer', expires_in: 3600, refresh_token: `refresh-${seen.length + 1}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`, seen, close: () => server.close() };
}

describe('vault credentials', () => {
  it('are sealed at rest: the database file never holds the secret', async () => {
    const { dir, store, vaults } = setup();
    const vault = await vaults.createVault('v');
    await vaults.addCredential(vault.id, { target: 'https://api.example.com', payload: { auth_scheme: 'static_bearer', token: 'very-secret-token-123' } });
    await store.close();
    for (const file of ['subako.db', 'subako.db-wal']) {
      const bytes = (() => { try { return readFileSync(join(dir, file)); } catch { return Buffer.alloc(0); } })();
      assert.equal(bytes.includes('very-secret-token-123'), false, `${file} holds the secret`);
    }
  });

  it('are write-only: views show target and scheme, never the secret', async () => {
    const { store, vaults } = setup();
    const vault = await vaults.createVault('v');
    const view = await vaults.addCredential(vault.id, { target: 'https://api.example.com', payload: { auth_scheme: 'static_headers', headers: { 'X-Api-Key': 'hidden-value-42' } } });
    const listed = await vaults.listCredentials(vault.id, { limit: 10 });
    for (const shown of [view, await vaults.getCredential(vault.id, view.id), ...listed.items]) {
      assert.equal(JSON.stringify(shown).includes('hidden-value-42'), false);
      assert.equal(shown.auth_scheme, 'static_headers');
    }
    const [opened] = await vaults.openAll([vault.id]);
    assert.deepEqual(opened.headers, { 'x-api-key': 'hidden-value-42' });
    await store.close();
  });

  it('refuse a plain-http target and a header that cannot be sent', async () => {
    const { store, vaults } = setup();
    const vault = await vaults.createVault('v');
    await assert.rejects(vaults.addCredential(vault.id, { target: 'http://example.com', payload: { auth_scheme: 'static_bearer', token: 't' } }), ValidationError);
    await assert.rejects(vaults.addCredential(vault.id, { target: 'https://example.com', payload: { auth_scheme: 'static_headers', headers: { host: 'x' } } }), ValidationError);
    await store.close();
  });

  it('refresh an OAuth access token before it expires, once for concurrent users, keeping the rotated refresh token', async () => {
    const endpoint = await tokenEndpoint();
    const { store, vaults } = setup();
    try {
      const vault = await vaults.createVault('v');
      await vaults.addCredential(vault.id, {
        target: 'https://api.example.com',
        payload: {
          auth_scheme: 'oauth', access_token: 'access-1', expires_at: new Date(Date.now() + 10_000).toISOString(),
          refresh: { token_endpoint: endpoint.url, client_id: 'cli', refresh_token: 'refresh-1' },
        },
      });
      const [a, b] = await Promise.all([vaults.openAll([vault.id]), vaults.openAll([vault.id])]);
      assert.equal(endpoint.seen.length, 1);
      assert.equal(a[0].headers.authorization, 'Bearer access-2');
      assert.equal(b[0].headers.authorization, 'Bearer access-2');
      assert.equal(endpoint.seen[0].get('grant_type'), 'refresh_token');
      // Fresh for an hour now: no further refresh.
      await vaults.openAll([vault.id]);
      assert.equal(endpoint.seen.length, 1);
      const [view] = (await vaults.listCredentials(vault.id, { limit: 1 })).items;
      assert.ok(Date.parse(view.expires_at!) > Date.now() + 3000_000);
    } finally {
      endpoint.close();
      await store.close();
    }
  });
});
