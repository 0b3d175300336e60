/**
 * The worker in the console's call trace (issue 25, point 7): in Chromium against a real `subako serve --nats`
 * and a `subako worker` on the machine's NATS (this run's prefix), a call's trace names the worker that ran it,
 * its id and its host, as the record does.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, removeBuckets, runName, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { probePackageDir, spawnServe, tempDir, TEST_KEY, type ChildServer } from '../server/helpers/harness.js';
import { NO_CHROMIUM, launchChromium, packDir, requireConsoleBuild } from './helpers.js';

describe('a call\'s trace in the console, in scale-out', { skip: NO_CHROMIUM }, () => {
  const prefix = runName('console_fleet');
  const dataDir = tempDir();
  let serve: ChildServer;
  let worker: ChildWorker;
  let browser: BrowserContext;
  let page: Page;
  let callId: string;

  before(async () => {
    requireConsoleBuild();
    serve = await spawnServe(dataDir, undefined, ['--nats', SHARED_NATS_URL, '--nats-prefix', prefix, '--no-examples']);
    worker = await spawnWorker({ url: SHARED_NATS_URL, prefix, volumesDir: join(dataDir, 'volumes'), pool: 1, env: TEST_KEY, repoRoot: REPO_ROOT });
    assert.equal((await serve.call('POST', '/v1/packages', packDir(probePackageDir()))).status, 201);
    const agent = (await serve.call('POST', '/v1/agents', { name: 'traced', tools: [{ package: 'probe' }] })).body;
    const session = (await serve.call('POST', `/v1/agents/${agent.id}/sessions`, {})).body;
    const answer = await serve.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'echo', arguments: { seen: 'in the console' } });
    assert.equal(answer.body.call.outcome, 'ok', JSON.stringify(answer.body));
    callId = answer.body.call.id;
    browser = await launchChromium();
    page = await browser.newPage();
  });

  after(async () => {
    await browser?.close();
    await worker?.stop();
    serve?.child.kill('SIGTERM');
    await serve?.exited;
    await removeBuckets(prefix);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('names the worker that ran the call: its id and its host', { timeout: 120_000 }, async () => {
    await page.goto(`${serve.url}/`);
    await page.getByLabel('API key').fill(serve.apiKey);
    await page.getByRole('button', { name: 'sign in' }).click();
    await page.locator('nav.top').getByRole('link', { name: 'Calls', exact: true }).click();
    await page.locator(`tr[data-call-id="${callId}"]`).getByRole('link').first().click();
    const shown = page.locator(`.calls-detail .trace[data-call-id="${callId}"] dd.worker`);
    await shown.waitFor();
    assert.equal(await shown.textContent(), `${worker.name} on ${hostname()}`);
  });
});
