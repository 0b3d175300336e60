/**
 * Issue 28, points 1 and 6 (what needs only users), in Chromium against a real `subako serve`: the Users page lists
 * the users the application added; a user's page shows its vaults with each credential's state (connected, expired)
 * and never a secret, revokes a credential, lists the user's sessions and starts one for it; a user is added and
 * deleted from the page, its sessions going with it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { eventually } from '../helpers/eventually.js';
import { spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { launchChromium, requireConsoleBuild, signIn, watchProblems } from './helpers.js';

const SECRETS = ['tok-ada-live-7f1e2d', 'tok-ada-old-93ab04'];

let serve: ChildServer;
let browser: BrowserContext;
let page: Page;
const problems: string[] = [];
let agentId: string;
let liveVault: string;
let adaSession: string;

before(async () => {
  requireConsoleBuild();
  serve = await spawnServe(tempDir());
  agentId = (await serve.call('POST', '/v1/agents', { name: 'helper' })).body.id;
  assert.equal((await serve.call('POST', '/v1/users', { id: 'auth0|ada', display_name: 'Ada Lovelace', email: 'ada@example.com' })).status, 201);
  assert.equal((await serve.call('POST', '/v1/users', { id: 'bob.smith@example.com' })).status, 201);
  liveVault = (await serve.call('POST', `/v1/users/${encodeURIComponent('auth0|ada')}/vaults`, { name: 'github' })).body.id;
  const credentials = [
    { target: 'https://api.github.com', payload: { auth_scheme: 'static_bearer', token: SECRETS[0] } },
    { target: 'https://slack.com', payload: { auth_scheme: 'oauth', access_token: SECRETS[1], expires_at: new Date(Date.now() - 3600_000).toISOString() } },
  ];
  for (const body of credentials) assert.equal((await serve.call('POST', `/v1/vaults/${liveVault}/credentials`, body)).status, 201);
  adaSession = (await serve.call('POST', `/v1/agents/${agentId}/sessions`, { user_id: 'auth0|ada' })).body.id;
  browser = await launchChromium();
  page = await browser.newPage();
  watchProblems(page, problems);
  await signIn(page, serve.url, serve.apiKey);
});

after(async () => {
  await browser?.close();
  serve?.child.kill('SIGTERM');
  await serve?.exited;
});

describe('the Users page', () => {
  it('lists the users; a user\'s page shows its vaults\' credentials by state, never a secret, and its sessions', async () => {
    await page.locator('nav.top').getByRole('link', { name: 'Users', exact: true }).click();
    const list = page.locator('table.list');
    await list.getByRole('link', { name: 'auth0|ada' }).waitFor();
    assert.match(await list.innerText(), /auth0\|ada\s+Ada Lovelace\s+ada@example\.com/);
    assert.match(await list.innerText(), /bob\.smith@example\.com/);
    await list.getByRole('link', { name: 'auth0|ada' }).click();
    await page.getByRole('heading', { name: 'User Ada Lovelace' }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/users/${encodeURIComponent('auth0|ada')}`);
    const vault = page.locator(`.user-vault[data-vault="${liveVault}"]`);
    await vault.getByText('https://api.github.com').waitFor();
    const rows = await vault.locator('tbody tr').allInnerTexts();
    assert.equal(rows.length, 2);
    assert.match(rows.find((r) => r.includes('api.github.com'))!, /static_bearer\s+connected/);
    assert.match(rows.find((r) => r.includes('slack.com'))!, /oauth\s+expired/);
    await page.locator(`a[href="/sessions/${adaSession}"]`).waitFor();
    const html = await page.content();
    for (const secret of SECRETS) assert.ok(!html.includes(secret), 'no secret on the page');
  });

  it('a user whose id holds dots has a page that a reload finds again', async () => {
    await page.locator('nav.top').getByRole('link', { name: 'Users', exact: true }).click();
    await page.locator('table.list').getByRole('link', { name: 'bob.smith@example.com' }).click();
    await page.getByRole('heading', { name: 'User bob.smith@example.com' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'User bob.smith@example.com' }).waitFor();
    await page.locator('nav.top').getByRole('link', { name: 'Users', exact: true }).click();
    await page.locator('table.list').getByRole('link', { name: 'auth0|ada' }).click();
    await page.getByRole('heading', { name: 'User Ada Lovelace' }).waitFor();
  });

  it('revokes a credential: it leaves the page and the vault', async () => {
    page.once('dialog', (dialog) => void dialog.accept());
    const vault = page.locator(`.user-vault[data-vault="${liveVault}"]`);
    await vault.locator('tr', { hasText: 'https://slack.com' }).getByRole('button', { name: 'revoke' }).click();
    await eventually('the revoked credential to leave the page', () => vault.locator('tbody tr').count(), (n) => n === 1);
    const left = (await serve.call('GET', `/v1/vaults/${liveVault}/credentials`)).body.items as { target: string }[];
    assert.deepEqual(left.map((c) => c.target), ['https://api.github.com']);
  });

  it('starts a session for the user, shown with its user and its endpoint once', async () => {
    await page.getByRole('button', { name: 'start a session for this user' }).click();
    await page.getByText('Capability URL (the URL alone is the credential)').waitFor();
    const sessionId = new URL(page.url()).pathname.split('/')[2];
    assert.match(sessionId, /^ses_/);
    assert.match(await page.locator('dl.facts').innerText(), /user\s+auth0\|ada/);
    const listed = (await serve.call('GET', `/v1/users/${encodeURIComponent('auth0|ada')}/sessions`)).body.items as { id: string }[];
    assert.ok(listed.some((s) => s.id === sessionId));
  });

  it('adds a user from the form, and deletes a user with its vaults and sessions', async () => {
    await page.locator('nav.top').getByRole('link', { name: 'Users', exact: true }).click();
    await page.locator('input[name=user-id]').fill('carol-42');
    await page.locator('input[name=display-name]').fill('Carol');
    await page.getByRole('button', { name: 'add user' }).click();
    await page.getByRole('heading', { name: 'User Carol' }).waitFor();
    assert.equal((await serve.call('GET', '/v1/users/carol-42')).status, 200);

    await page.locator('nav.top').getByRole('link', { name: 'Users', exact: true }).click();
    await page.locator('input[name=user-id]').fill('no spaces');
    await page.getByRole('button', { name: 'add user' }).click();
    await page.getByRole('alert').filter({ hasText: 'is not a user id' }).waitFor();

    await page.locator('table.list').getByRole('link', { name: 'auth0|ada' }).click();
    await page.getByRole('heading', { name: 'User Ada Lovelace' }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'delete user' }).click();
    await page.waitForURL((url) => url.pathname === '/users');
    await eventually('the deleted user to leave the list', () => page.locator('table.list').getByRole('link', { name: 'auth0|ada' }).count(), (n) => n === 0);
    assert.equal((await serve.call('GET', `/v1/users/${encodeURIComponent('auth0|ada')}`)).status, 404);
    assert.equal((await serve.call('GET', `/v1/sessions/${adaSession}`)).status, 404);
    assert.equal((await serve.call('GET', `/v1/vaults/${liveVault}`)).status, 404);
    assert.deepEqual(problems.filter((p) => !/status of 422/.test(p)), []);
  });
});
