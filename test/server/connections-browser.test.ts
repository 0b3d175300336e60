/**
 * Issue 28, points 2, 3 and 6, as people meet them: an end user connects their own account at an upstream's
 * authorization server through a real browser (Chromium, a person typing who they are and clicking Allow), and
 * their session's calls then reach the protected upstream MCP server with their token and nobody else's.
 *
 * - A call before consent comes back to a client that declared URL-mode elicitation as an input request carrying
 *   the consent link (MRTR); the person consents in the browser, and the client's retry runs the call.
 * - Two users of one agent each reach the upstream with their own token (the upstream records which it saw).
 * - A client that cannot open URLs gets a tool result with the link; the link works the same.
 * - The callback is single use; disconnecting revokes at the authorization server and takes effect at once.
 * - The console's user page lists the connections (connected, scopes) and disconnects; never a token.
 * - No token or code appears in the server's log, the call records, the API's answers or any page.
 *
 * Real parts only: `subako serve` as a child process, the test authorization server (RFC 8414, 7591, 7009, PKCE)
 * and an official v2 SDK MCP server protected by it on loopback, the official v2 client, and Chromium.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page } from 'playwright-core';
import { TestAuthServer } from '../mcp/oauth/auth-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../mcp/oauth/protected-mcp-server.js';
import { spawnServe, tempDir, type ChildServer } from './helpers/harness.js';
import { connectedAgent, linkIn, mcpClient, textOf, userSession, type UserSession } from './helpers/connections.js';
import { launchChromium, NO_CHROMIUM, requireConsoleBuild, signIn } from '../console/helpers.js';

let auth: TestAuthServer;
let upstream: ProtectedMcpServer;
let server: ChildServer;
let browser: BrowserContext;
let agentId: string;
/** Everything a person or a client was shown: checked for tokens at the end. */
const shown: string[] = [];

before(async () => {
  if (NO_CHROMIUM) return;
  requireConsoleBuild();
  auth = await new TestAuthServer({ consentPage: true }).start();
  upstream = await startProtectedMcpServer(auth, { openListing: true });
  server = await spawnServe(tempDir());
  browser = await launchChromium();
  agentId = await connectedAgent(server, upstream.url);
});

after(async () => {
  await browser?.close().catch(() => undefined);
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await upstream?.close();
  await auth?.close();
});

/** The person's part: opens the link, says who they are, clicks Allow, and reads the answer page. */
async function consentInBrowser(link: string, who: string, decision: 'Allow' | 'Deny' = 'Allow'): Promise<{ text: string; callback: string }> {
  const page: Page = await browser.newPage();
  try {
    await page.goto(link);
    await page.getByLabel('Your name').fill(who);
    const landed = page.waitForURL(/\/v1\/connections\/callback/);
    await page.getByRole('button', { name: decision }).click();
    await landed;
    const callback = page.url();
    const text = await page.locator('main').innerText();
    shown.push(await page.content());
    return { text, callback };
  } finally {
    await page.close();
  }
}

async function records(session: UserSession): Promise<{ outcome: string }[]> {
  const list = await server.call('GET', `/v1/sessions/${session.id}/calls`);
  shown.push(JSON.stringify(list.body));
  return list.body.items;
}

describe('per-user connections, through a browser', { skip: NO_CHROMIUM }, () => {
  let ada: UserSession;
  let bob: UserSession;

  it('asks before consent with a URL-mode input request; the retry after the person consents runs with their token', async () => {
    ada = await userSession(server, agentId, 'ada');
    const asked: string[] = [];
    let callbackUrl = '';
    const client = await mcpClient(ada.url, async (params) => {
      assert.equal(params.mode, 'url');
      asked.push(params.url!);
      const { text, callback } = await consentInBrowser(params.url!, 'ada');
      callbackUrl = callback;
      assert.match(text, /Your up account is connected/);
      return { action: 'accept' };
    });
    try {
      const listed = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(listed, ['me', 'whoami'], 'listed before any connection (the upstream lists to anyone)');
      const result = await client.callTool({ name: 'me', arguments: {} });
      shown.push(JSON.stringify(result));
      assert.deepEqual(result.structuredContent, { subject: 'ada' });
      assert.equal(asked.length, 1, 'asked once');
      assert.match(asked[0], new RegExp(`^${server.url}/v1/connect/[A-Za-z0-9_-]+$`));
      assert.deepEqual((await records(ada)).map((r) => r.outcome), ['input_required', 'ok']);

      // Connected: the next call is not asked.
      assert.deepEqual((await client.callTool({ name: 'me', arguments: {} })).structuredContent, { subject: 'ada' });
      assert.equal(asked.length, 1);

      // The authorization the server ran: a web client registered dynamically for its public callback, PKCE S256, the resource.
      const registration = auth.registrationRequests.at(-1)!;
      assert.equal(registration.application_type, 'web');
      assert.deepEqual(registration.redirect_uris, [`${server.url}/v1/connections/callback`]);
      const authorization = auth.authorizationRequests.at(-1)!;
      assert.equal(authorization.get('code_challenge_method'), 'S256');
      assert.equal(authorization.get('resource'), upstream.url);
      assert.equal(authorization.get('scope'), 'tools:call');

      // The callback is single use: the same redirect again stores nothing and says why.
      const replay = await fetch(callbackUrl);
      const replayPage = await replay.text();
      shown.push(replayPage);
      assert.equal(replay.status, 400);
      assert.match(replayPage, /finished already/);
    } finally {
      await client.close();
    }
  });

  it('gives two users of one agent each their own token at the upstream', async () => {
    bob = await userSession(server, agentId, 'bob');
    const client = await mcpClient(bob.url, async (params) => {
      await consentInBrowser(params.url!, 'bob');
      return { action: 'accept' };
    });
    const adaClient = await mcpClient(ada.url, async () => assert.fail('ada is connected already'));
    try {
      upstream.seen.length = 0;
      assert.deepEqual((await client.callTool({ name: 'me', arguments: {} })).structuredContent, { subject: 'bob' });
      assert.deepEqual((await adaClient.callTool({ name: 'me', arguments: {} })).structuredContent, { subject: 'ada' });
      const calls = upstream.seen.filter((s) => s.subject === 'ada' || s.subject === 'bob');
      const tokenOf = (who: string) => new Set(calls.filter((s) => s.subject === who).map((s) => s.token));
      assert.equal(tokenOf('bob').size, 1);
      assert.equal(tokenOf('ada').size, 1);
      assert.notDeepEqual([...tokenOf('ada')], [...tokenOf('bob')], 'each user\'s own token');
    } finally {
      await client.close();
      await adaClient.close();
    }
  });

  it('gives a client that cannot open URLs a result carrying the link, which works the same', async () => {
    const carol = await userSession(server, agentId, 'carol');
    const client = await mcpClient(carol.url);
    try {
      const first = await client.callTool({ name: 'me', arguments: {} });
      shown.push(JSON.stringify(first));
      assert.equal(first.isError, true);
      const { text } = await consentInBrowser(linkIn(textOf(first)), 'carol');
      assert.match(text, /connected/);
      assert.deepEqual((await client.callTool({ name: 'me', arguments: {} })).structuredContent, { subject: 'carol' });
    } finally {
      await client.close();
    }
  });

  it('stores nothing when the person says no, and says so', async () => {
    const dan = await userSession(server, agentId, 'dan');
    const client = await mcpClient(dan.url);
    try {
      const first = await client.callTool({ name: 'me', arguments: {} });
      const { text } = await consentInBrowser(linkIn(textOf(first)), 'dan', 'Deny');
      assert.match(text, /did not grant the connection \(access_denied\)/);
      assert.deepEqual((await server.call('GET', '/v1/users/dan/connections')).body.items, []);
    } finally {
      await client.close();
    }
  });

  it('shows the connections on the console\'s user page and disconnects there: revoked at once, the next call asks again', async () => {
    const listed = await server.call('GET', '/v1/users/ada/connections');
    shown.push(JSON.stringify(listed.body));
    assert.equal(listed.status, 200);
    assert.equal(listed.body.items.length, 1);
    assert.equal(listed.body.items[0].name, 'up');
    assert.equal(listed.body.items[0].status, 'connected');
    assert.deepEqual(listed.body.items[0].scopes, ['tools:call']);
    const adaTokens = upstream.seen.filter((s) => s.subject === 'ada').map((s) => s.token);
    assert.ok(adaTokens.length > 0 && adaTokens.every((t) => auth.introspect(t) !== undefined));

    const page = await browser.newPage();
    try {
      await signIn(page, server.url, server.apiKey);
      await page.goto(`${server.url}/users/ada`);
      const section = page.locator('section.connections');
      await section.getByText('connected', { exact: true }).waitFor();
      await section.getByText('tools:call').waitFor();
      shown.push(await page.content());
      page.once('dialog', (dialog) => void dialog.accept());
      await section.getByRole('button', { name: 'Disconnect' }).click();
      await section.getByText('No connections').waitFor();
      shown.push(await page.content());
    } finally {
      await page.close();
    }
    assert.ok(auth.revocationRequests.length >= 1, 'revoked at the authorization server (RFC 7009)');
    assert.ok(adaTokens.every((t) => auth.introspect(t) === undefined), 'ada\'s tokens no longer work anywhere');

    const manual = await mcpClient(ada.url, undefined, { manual: true });
    try {
      const again = await manual.callTool({ name: 'me', arguments: {} }, { allowInputRequired: true } as never) as unknown as {
        resultType: string; inputRequests: Record<string, { method: string; params: { mode: string; url: string } }>;
      };
      assert.equal(again.resultType, 'input_required', JSON.stringify(again));
      assert.equal(again.inputRequests.connect_up.params.mode, 'url');
      assert.match(again.inputRequests.connect_up.params.url, /\/v1\/connect\//);
    } finally {
      await manual.close();
    }
  });

  it('shows no token or code anywhere: the server\'s log, the records, the API\'s answers, the pages', async () => {
    const everything = [server.stdout(), server.stderr(), ...shown].join('\n');
    assert.ok(auth.issuedSecrets.length >= 8);
    for (const secret of auth.issuedSecrets) assert.ok(!everything.includes(secret), 'a token or code was shown');
  });
});
