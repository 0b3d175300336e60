/**
 * What the login tests share: a SUBAKO_HOME of their own for the file (credentials are written there, sealed with a
 * key made there), and a person's browser that follows the authorization URL and its redirect back.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { mcp } from '../../../src/mcp/index.js';

/** A fresh SUBAKO_HOME for this file's tests, removed (and the library's cached clients closed) after them. */
export function scratchHome(prefix: string): { readonly path: string } {
  const home = { path: '' };
  before(async () => {
    home.path = await mkdtemp(join(tmpdir(), `subako-${prefix}-`));
    process.env.SUBAKO_HOME = home.path;
    delete process.env.SUBAKO_SECRET_KEY;
  });
  after(async () => {
    await mcp.close();
    await rm(home.path, { recursive: true, force: true });
  });
  return home;
}

/** Opens the authorization URL as a browser would, the test server approving at once, and follows it back. */
export async function followInBrowser(authorizationUrl: string): Promise<void> {
  const atServer = await fetch(authorizationUrl, { redirect: 'manual' });
  await atServer.body?.cancel();
  assert.equal(atServer.status, 302, `the authorization endpoint redirects back (got ${atServer.status})`);
  await (await fetch(atServer.headers.get('location')!)).text();
}
