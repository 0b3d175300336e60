/**
 * The console's Calls page with many large calls (finding 6 of the trust-boundaries issue): 40 function calls
 * of 900 KiB once made its one page of calls 35 MiB. In Chromium against a real `subako serve`: every answer to
 * `GET /v1/calls` the page reads is under 1 MiB, and the page still shows every call, the older ones by
 * following the list's cursor ("load older calls"); a call's trace shows the call log's preview of its result.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { probePackageDir, spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { NO_CHROMIUM, launchChromium, packDir, requireConsoleBuild } from './helpers.js';

/** A list page's bound as documented (README, the OpenAPI `limit`): its items under 1 MiB of JSON. */
const PAGE_BUDGET = 1024 * 1024;
const READS = 40;
const written = `${'a'.repeat(1000)} é ✓ `.repeat(Math.floor((900 * 1024) / 1010));

let serve: ChildServer;
let browser: BrowserContext;
let page: Page;
/** Every call made, newest last. */
const made: string[] = [];
/** The size of every answer to a list of calls the page read. */
const listed: number[] = [];
const problems: string[] = [];

before(async () => {
  if (NO_CHROMIUM) return; // the tests below skip, saying why
  requireConsoleBuild();
  serve = await spawnServe(tempDir());
  const probe = await serve.call('POST', '/v1/packages', packDir(probePackageDir('1.0.0', 'probe')));
  assert.equal(probe.status, 201, JSON.stringify(probe.body));
  const agent = (await serve.call('POST', '/v1/agents', { name: 'reader', tools: [{ package: 'probe' }] })).body;
  const session = (await serve.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
  const call = (tool: string, args: Record<string, unknown>) => serve.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: args });
  made.push((await call('write_file', { path: '/volume/tmp/big.txt', text: written })).body.call.id);
  for (let i = 0; i < READS; i++) {
    const read = await call('read_file', { path: '/volume/tmp/big.txt' });
    assert.equal(read.body.call.outcome, 'ok');
    made.push(read.body.call.id);
  }
  browser = await launchChromium();
  page = await browser.newPage();
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('response', async (response) => {
    // Only the list: not the live stream (/v1/calls/stream) nor one call (/v1/calls/{id}).
    if (new URL(response.url()).pathname !== '/v1/calls') return;
    listed.push((await response.body()).length);
  });
});

after(async () => {
  await browser?.close();
  serve?.child.kill('SIGTERM');
  await serve?.exited;
});

describe('the Calls page with 40 calls of 900 KiB', { skip: NO_CHROMIUM }, () => {
  it('reads pages under 1 MiB and shows every call, loading the older ones on demand', { timeout: 120_000 }, async () => {
    await page.goto(`${serve.url}/`);
    await page.getByLabel('API key').fill(serve.apiKey);
    await page.getByRole('button', { name: 'sign in' }).click();
    await page.locator('nav.top').getByRole('link', { name: 'Calls', exact: true }).click();
    await page.locator(`tr[data-call-id="${made[made.length - 1]}"]`).waitFor();
    const older = page.getByRole('button', { name: 'load older calls' });
    // The first page ended on its bytes, long before 200 calls.
    await older.waitFor();
    assert.ok((await page.locator('tr[data-call-id]').count()) < made.length);
    while (await older.isVisible()) {
      const before = await page.locator('tr[data-call-id]').count();
      await older.click();
      await page.waitForFunction((n) => document.querySelectorAll('tr[data-call-id]').length > n || !document.querySelector('.more button'), before);
    }
    const shown = await page.locator('tr[data-call-id]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-call-id')));
    assert.deepEqual(shown, [...made].reverse(), 'every call, newest first, once');
    assert.ok(listed.length >= 3, `${listed.length} pages read`);
    for (const size of listed) assert.ok(size <= PAGE_BUDGET + 8 * 1024, `a page of ${size} bytes`);
    assert.deepEqual(problems, []);
  });

  it('opens the oldest read\'s trace: the start of its result and a note of what the call log left out', { timeout: 60_000 }, async () => {
    await page.locator(`tr[data-call-id="${made[1]}"]`).getByRole('link').first().click();
    const trace = page.locator(`.calls-detail .trace[data-call-id="${made[1]}"]`);
    await trace.locator('.block-note', { hasText: 'the call log keeps only the start of this text' }).waitFor();
    await trace.locator('.block-note', { hasText: /bytes of what the model saw were left out of the call log/ }).waitFor();
    assert.deepEqual(problems, []);
  });
});
