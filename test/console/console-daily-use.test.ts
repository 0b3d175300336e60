/**
 * The console finished for daily use (issue 29, point 2), in Chromium against a real `subako serve`, a real MCP
 * server on loopback behind a capability URL, and the probe package: the Sessions page follows its query; a held
 * call is approved from its trace and finishes; traces show small images as thumbnails and how a held call was
 * decided; the Calls list names agent and session and fits 1280 px; a next version is published from the form;
 * a remote server's capability URL is never on the page; the overview's bars and tables are the call log's counts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import type { BrowserContext, Page } from 'playwright-core';
import { eventually } from '../helpers/eventually.js';
import { redactUrl } from '../../src/common/index.js';
import { serveEchoTool } from '../mcp/helpers/servers.js';
import { probePackageDir, spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { launchChromium, packDir, requireConsoleBuild, signIn, watchProblems } from './helpers.js';

/** The path token and query of the remote server's capability URL: never on a page. */
const CAPABILITY = 'cap9f8e7d6c5b4a39281706';

let serve: ChildServer;
let echo: Awaited<ReturnType<typeof serveEchoTool>>;
let browser: BrowserContext;
let page: Page;
const problems: string[] = [];
const agents: Record<'alpha' | 'beta' | 'mailer', { id: string }> = {} as never;
let capabilityUrl: string;

const callOf = (sessionId: string, tool: string, args: Record<string, unknown>) => serve.call('POST', `/v1/sessions/${sessionId}/calls`, { tool, arguments: args });
const startSession = async (agentId: string): Promise<string> => (await serve.call('POST', `/v1/agents/${agentId}/sessions`, {})).body.id;

/** Every call of the log, through the API's pages. */
async function allCalls(): Promise<{ id: string; tool: string; agent_id: string; outcome: string; duration_ms: number | null; started_at: string }[]> {
  const calls = [];
  for (let after: string | null = ''; after !== null;) {
    const listed: any = (await serve.call('GET', `/v1/calls?limit=200${after ? `&after=${after}` : ''}`)).body;
    calls.push(...listed.items);
    after = listed.next_cursor;
  }
  return calls;
}

before(async () => {
  requireConsoleBuild();
  echo = await serveEchoTool();
  capabilityUrl = `${echo.url}/${CAPABILITY}?key=${CAPABILITY}`;
  serve = await spawnServe(tempDir());
  assert.equal((await serve.call('POST', '/v1/packages', packDir(probePackageDir('1.0.0', 'probe')))).status, 201);
  for (const name of ['alpha', 'beta'] as const) agents[name] = (await serve.call('POST', '/v1/agents', { name, tools: [{ package: 'probe' }] })).body;
  const mailer = await serve.call('POST', '/v1/agents', {
    name: 'mailer', tools: [{ package: 'probe' }], mcp_servers: [{ name: 'mail', url: capabilityUrl, default_policy: 'require_approval' }],
  });
  assert.equal(mailer.status, 201, JSON.stringify(mailer.body));
  agents.mailer = mailer.body;
  browser = await launchChromium();
  page = await browser.newPage();
  watchProblems(page, problems);
  await signIn(page, serve.url, serve.apiKey);
});

after(async () => {
  await browser?.close();
  serve?.child.kill('SIGTERM');
  await serve?.exited;
  await echo?.stop();
});

describe('the console for daily use', () => {
  it('the Sessions page follows its query: the chosen agent\'s sessions, and a session started for it', async () => {
    const ofAlpha = await startSession(agents.alpha.id);
    const ofBeta = await startSession(agents.beta.id);
    await page.locator('nav.top').getByRole('link', { name: 'Sessions', exact: true }).click();
    const select = page.locator('select[name=agent]');
    await select.selectOption({ label: 'alpha' });
    await page.locator(`a[href="/sessions/${ofAlpha}"]`).waitFor();
    await select.selectOption({ label: 'beta' });
    await page.locator(`a[href="/sessions/${ofBeta}"]`).waitFor();
    assert.equal(await page.locator(`a[href="/sessions/${ofAlpha}"]`).count(), 0, 'alpha\'s session is not listed');
    assert.equal(new URL(page.url()).searchParams.get('agent'), agents.beta.id);
    assert.equal(await select.inputValue(), agents.beta.id, 'the choice stays');
    await page.getByRole('button', { name: 'start a session' }).click();
    await page.getByRole('heading', { name: /^Session ses_/ }).waitFor();
    const started = new URL(page.url()).pathname.split('/')[2];
    assert.equal((await serve.call('GET', `/v1/sessions/${started}`)).body.agent_id, agents.beta.id);
    // Back in history, the list is alpha's again… no: it is beta's (the URL says so), and the select agrees.
    await page.goBack();
    await page.locator(`a[href="/sessions/${started}"]`).waitFor();
    assert.equal(await select.inputValue(), agents.beta.id);
  });

  it('a held call is approved from its trace: its full arguments, Approve, and the call\'s result arrives', async () => {
    const session = await startSession(agents.mailer.id);
    const tool = ((await serve.call('GET', `/v1/sessions/${session}/tools`)).body.items as { name: string }[]).find((t) => t.name.includes('send'))!.name;
    const args = { to: 'ops@corp.example', body: 'x'.repeat(3000), nested: { a: [1, 2, { b: true }] } };
    const pending = callOf(session, tool, args);
    const approval = await eventually<any>('the call is held', async () => (await serve.call('GET', `/v1/sessions/${session}/approvals`)).body.items[0], Boolean);
    await page.goto(`${serve.url}/calls/${approval.call_id}`);
    const trace = page.locator(`.calls-detail .trace[data-call-id="${approval.call_id}"]`);
    await trace.locator('.held-arguments').waitFor();
    assert.deepEqual(JSON.parse((await trace.locator('.held-arguments').textContent())!), args, 'every argument, whole');
    await trace.getByRole('button', { name: 'Approve' }).click();
    const answer = await pending;
    assert.equal(answer.body.call.outcome, 'ok');
    assert.deepEqual(echo.received.at(-1)!.args, args);
    await trace.locator('.outcome-ok').first().waitFor();
    // The trace keeps the record of the decision: who, when.
    const record = trace.locator('.approval-record[data-decision="approved"]');
    await record.waitFor();
    const decided = (await serve.call('GET', `/v1/calls/${approval.call_id}`)).body.approval;
    assert.equal(decided.decision, 'approved');
    assert.equal(await record.locator('.approval-decided-by').textContent(), decided.decided_by);
    assert.equal(await record.locator('.approval-decided-at time').getAttribute('datetime'), decided.decided_at);
  });

  it('a denial from the page ends the held call denied, and its trace says so', async () => {
    const session = await startSession(agents.mailer.id);
    const tool = ((await serve.call('GET', `/v1/sessions/${session}/tools`)).body.items as { name: string }[]).find((t) => t.name.includes('send'))!.name;
    const pending = callOf(session, tool, { to: 'nobody@corp.example' });
    const approval = await eventually<any>('the call is held', async () => (await serve.call('GET', `/v1/sessions/${session}/approvals`)).body.items[0], Boolean);
    await page.goto(`${serve.url}/calls/${approval.call_id}`);
    const trace = page.locator(`.calls-detail .trace[data-call-id="${approval.call_id}"]`);
    await trace.getByRole('button', { name: 'Deny' }).click();
    assert.equal((await pending).body.call.outcome, 'denied');
    await trace.locator('.approval-record[data-decision="denied"]').waitFor();
  });

  it('a trace shows an image the tool answered as a thumbnail, from the call log', async () => {
    const session = await startSession(agents.alpha.id);
    const png = (await sharp({ create: { width: 400, height: 200, channels: 3, background: '#2457c5' } }).png().toBuffer()).toString('base64');
    const made = (await callOf(session, 'raw', { result: { content: [{ type: 'text', text: 'a chart:' }, { type: 'image', mimeType: 'image/png', data: png }] } })).body.call;
    await page.goto(`${serve.url}/calls/${made.id}`);
    const image = page.locator(`.calls-detail .trace[data-call-id="${made.id}"] .thumbnail img.model-image`);
    await image.waitFor();
    await page.waitForFunction((id) => (document.querySelector(`.trace[data-call-id="${id}"] .thumbnail img`) as HTMLImageElement | null)?.complete === true, made.id);
    assert.equal(await image.evaluate((img: HTMLImageElement) => img.naturalWidth), 400, 'the image itself');
    const box = (await image.boundingBox())!;
    assert.ok(box.width <= 162 && box.height <= 162, `drawn small: ${box.width}×${box.height}`);
  });

  it('the Calls list names each call\'s agent and session and fits its columns at 1280 px', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${serve.url}/calls`);
    const calls = await allCalls();
    await page.locator(`tr[data-call-id="${calls[0].id}"]`).waitFor();
    const names = new Map(Object.entries(agents).map(([name, a]) => [a.id, name]));
    for (const call of calls.slice(0, 10)) {
      const row = page.locator(`tr[data-call-id="${call.id}"]`);
      assert.equal((await row.locator('.call-agent').textContent())?.trim(), names.get(call.agent_id));
      const sessionId = (await serve.call('GET', `/v1/calls/${call.id}`)).body.session_id;
      assert.equal(await row.locator('.call-session').getAttribute('title'), sessionId);
      assert.equal(await row.locator('.call-session a').getAttribute('href'), `/sessions/${sessionId}`);
    }
    const widths = await page.evaluate(() => {
      const list = document.querySelector('.calls-list') as HTMLElement;
      const table = list.querySelector('table.calls') as HTMLElement;
      const cells = Array.from(table.querySelectorAll('td, th')) as HTMLElement[];
      return {
        page: document.documentElement.scrollWidth, list: list.clientWidth, table: table.scrollWidth,
        clipped: cells.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => `${c.textContent} (${c.scrollWidth} > ${c.clientWidth})`),
      };
    });
    assert.ok(widths.page <= 1280, `the page is ${widths.page} px wide`);
    assert.ok(widths.table <= widths.list, `the table (${widths.table} px) fits its column (${widths.list} px)`);
    assert.deepEqual(widths.clipped, [], 'every cell shows all it holds');
    await page.setViewportSize({ width: 1440, height: 1000 });
  });

  it('an agent\'s page shows a remote server\'s origin only, never its capability URL', async () => {
    await page.goto(`${serve.url}/agents/${agents.mailer.id}`);
    await page.getByRole('heading', { name: 'Agent mailer' }).waitFor();
    await page.getByRole('button', { name: 'what it grants' }).first().click();
    const origin = new URL(echo.url).origin;
    assert.equal(await page.locator('.grants .remote-origin').textContent(), `${origin}/…`);
    await page.locator('details summary', { hasText: 'spec as JSON' }).click();
    const shown = async () => (await page.content()) + (await page.locator('input, textarea').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value).join('\n')));
    assert.ok(!(await shown()).includes(CAPABILITY), 'not in the grants, the JSON or the form');
    await page.getByRole('button', { name: 'JSON', exact: true }).click();
    await page.locator('textarea[name=spec]').waitFor();
    assert.ok(!(await shown()).includes(CAPABILITY), 'not in the JSON editor');
    await page.getByRole('button', { name: 'form', exact: true }).click();
  });

  it('publishes the next version from the form: egress allow list, grants, approval policy; the capability URL kept', async () => {
    await page.goto(`${serve.url}/agents/${agents.mailer.id}`);
    await page.getByRole('heading', { name: 'Agent mailer' }).waitFor();
    const grant = page.locator('fieldset.grant[data-package="probe"]');
    await grant.locator('textarea[name=egress-allow]').fill('api.example.com\nexample.org');
    await grant.locator('textarea[name=egress-grants]').fill('https://api.example.com');
    const remote = page.locator('fieldset.remote[data-server="mail"]');
    await remote.locator('select[name=server-policy]').selectOption('allow');
    await remote.locator('textarea[name=server-tool-policies]').fill('send=require_approval');
    await page.getByRole('button', { name: 'publish version' }).click();
    await page.getByText('(current)').locator('xpath=..').getByText('2').waitFor();
    const spec = (await serve.call('GET', `/v1/agents/${agents.mailer.id}`)).body.spec;
    assert.deepEqual(spec.tools[0].egress, { allow: ['api.example.com', 'example.org'], grants: ['https://api.example.com'] });
    assert.equal(spec.mcp_servers[0].default_policy, 'allow');
    assert.deepEqual(spec.mcp_servers[0].tools, [{ name: 'send', policy: 'require_approval' }]);
    // The API shows a URL's secret parts redacted, and refuses a URL holding "[redacted]" unless it is the one shown
    // for that server: the form sent that back, so the version kept the stored capability URL (not the origin shown).
    assert.equal(spec.mcp_servers[0].url, redactUrl(capabilityUrl), 'the stored URL, as the API shows it');
  });

  it('the overview draws the call log\'s counts: bars per minute and per hour, errors, and p50/p95 by tool and agent', async () => {
    const session = await startSession(agents.beta.id);
    for (let i = 0; i < 4; i += 1) await callOf(session, 'raw', { result: { content: [{ type: 'text', text: `no ${i}` }], isError: i % 2 === 0 } });
    const calls = await allCalls();
    const ended = calls.filter((c) => c.outcome !== 'running');
    assert.equal(ended.length, calls.length);
    const isError = (c: { outcome: string }) => ['tool_error', 'crash', 'unknown', 'invalid_arguments'].includes(c.outcome);
    const perMinute = new Map<string, { calls: number; errors: number }>();
    for (const c of calls) {
      const at = perMinute.get(c.started_at.slice(0, 16)) ?? { calls: 0, errors: 0 };
      perMinute.set(c.started_at.slice(0, 16), { calls: at.calls + 1, errors: at.errors + (isError(c) ? 1 : 0) });
    }
    const nearest = (ds: number[], p: number) => [...ds].sort((a, b) => a - b)[Math.ceil((p / 100) * ds.length) - 1];

    await page.locator('nav.top').getByRole('link', { name: 'Overview', exact: true }).click();
    const bars = page.locator('svg.chart g.bar');
    await bars.first().waitFor();
    const drawn = await bars.evaluateAll((gs) => gs.map((g) => ({
      start: g.getAttribute('data-start')!, calls: Number(g.getAttribute('data-calls')), errors: Number(g.getAttribute('data-errors')),
      height: Number(g.querySelector('rect.calls')!.getAttribute('height')),
    })));
    assert.ok(drawn.length >= 60 && drawn.length <= 62, `${drawn.length} minutes`);
    for (const bar of drawn.filter((b) => b.calls > 0)) {
      assert.deepEqual({ calls: bar.calls, errors: bar.errors }, perMinute.get(bar.start.slice(0, 16)), `the minute ${bar.start}`);
    }
    assert.equal(drawn.reduce((n, b) => n + b.calls, 0), calls.length, 'every call in a bar');
    const tallest = drawn.reduce((a, b) => (b.calls > a.calls ? b : a));
    for (const bar of drawn) assert.ok(Math.abs(bar.height - (tallest.height * bar.calls) / tallest.calls) < 0.01, 'each bar as tall as its count');
    assert.equal(Number(await page.locator('.totals .total-errors').textContent()), calls.filter(isError).length);

    for (const [what, keyOf] of [['tool', (c: { tool: string }) => c.tool], ['agent', (c: { agent_id: string }) => c.agent_id]] as const) {
      const keys = new Set(calls.map(keyOf as (c: typeof calls[number]) => string));
      for (const key of keys) {
        const mine = calls.filter((c) => (keyOf as (c: typeof calls[number]) => string)(c) === key);
        const row = page.locator(`table.stats-${what} tr[data-key="${key}"]`);
        assert.equal(Number(await row.locator('.n-calls').textContent()), mine.length, `${what} ${key}: calls`);
        assert.equal(Number(await row.locator('.n-errors').textContent()), mine.filter(isError).length, `${what} ${key}: errors`);
        const durations = mine.map((c) => c.duration_ms!).filter((d) => d !== null);
        assert.equal(await row.locator('.p50').textContent(), `${nearest(durations, 50)} ms`, `${what} ${key}: p50`);
        assert.equal(await row.locator('.p95').textContent(), `${nearest(durations, 95)} ms`, `${what} ${key}: p95`);
      }
    }

    await page.getByRole('button', { name: 'last day' }).click();
    await page.waitForFunction(() => document.querySelectorAll('svg.chart g.bar').length <= 26);
    const hours = await bars.evaluateAll((gs) => gs.map((g) => Number(g.getAttribute('data-calls'))));
    assert.ok(hours.length >= 24, `${hours.length} hours`);
    assert.equal(hours.reduce((n, c) => n + c, 0), calls.length);
    assert.deepEqual(problems, []);
  });
});
