/**
 * "A secret header value appears in no output, log line, error message or stored file in plain text":
 * everything a run produces is collected and searched for the value.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcp, callTool, McpClientPool, McpServerError, REDACTED, Secret, seal, sealingKey } from '../../src/mcp/index.js';
import { startModernServer, startLegacyServer, type RunningServer } from './helpers/servers.js';
import { runCli } from './helpers/cli.js';

const SECRET = 'tok_7f3a9c2e5b1d8f4a6c0e2b9d';
const AUTHORIZATION = `Bearer ${SECRET}`;

/** Every file under a directory, as text. */
function filesUnder(dir: string): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...filesUnder(path));
    else found.push([path, readFileSync(path, 'latin1')]);
  }
  return found;
}

function assertClean(label: string, text: string): void {
  assert.ok(!text.includes(SECRET), `${label} shows the secret:\n${text}`);
}

describe('a secret header value appears nowhere in plain text', () => {
  let modern: RunningServer;
  let legacy: RunningServer;
  let home: string;
  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'subako-secret-'));
    [modern, legacy] = await Promise.all([
      startModernServer({ requireAuthorization: AUTHORIZATION }),
      startLegacyServer({ requireAuthorization: AUTHORIZATION }),
    ]);
  });
  after(async () => {
    await Promise.all([modern.stop(), legacy.stop()]);
    rmSync(home, { recursive: true, force: true });
  });

  it('the CLI: outputs and errors of tools, call, a careless server and a refused credential', async () => {
    const env = { SUBAKO_HOME: home };
    const header = `Authorization=${AUTHORIZATION}`;
    const runs = await Promise.all([
      runCli(['mcp', 'tools', '--url', modern.url, '--header', header], env),
      runCli(['mcp', 'tools', '--url', legacy.url, '--header', header, '--json'], env),
      runCli(['mcp', 'call', '--url', modern.url, '--header', header, 'whoami'], env),
      runCli(['mcp', 'call', '--url', modern.url, '--header', header, 'echo_auth_error'], env),
      runCli(['mcp', 'call', '--url', legacy.url, '--header', header, 'echo_auth_error', '--json'], env),
      runCli(['mcp', 'call', '--url', modern.url, '--header', `Authorization=Bearer ${SECRET}x`, 'add', '{"x":1,"y":1}'], env),
      runCli(['mcp', 'call', '--url', modern.url, '--header', `Authorization ${SECRET}`, 'add'], env),
    ]);
    // The runs did what they should, so their outputs are worth searching.
    assert.equal(runs[0].code, 0, runs[0].stderr);
    assert.match(runs[0].stdout, /^add/m);
    assert.equal(runs[3].code, 3, 'a request the server rejects was not made (cli/call-exit.ts)');
    assert.match(runs[3].stderr, /rejected the request to call tool "echo_auth_error"/);
    assert.ok(runs[3].stderr.includes(REDACTED), 'the echoed value was cut out');
    assert.equal(runs[5].code, 3, 'a refused credential: the call could not be made (cli/call-exit.ts)');
    assert.match(runs[5].stderr, /HTTP 401/);
    assert.equal(runs[6].code, 2, 'a malformed --header is a usage error');
    for (const [i, run] of runs.entries()) {
      assertClean(`run ${i} stdout`, run.stdout);
      assertClean(`run ${i} stderr`, run.stderr);
    }
    // whoami shows what arrived: the server did get the real value (only the server).
    assert.equal(runs[2].code, 0, runs[2].stderr);
    assert.equal(runs[2].stdout, `${REDACTED}\n`, 'a result quoting the credential back shows it redacted');
  });
});

describe('the library: errors, results, tool values, served listings, logs and stored files', () => {
  let modern: RunningServer;
  let home: string;
  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'subako-secret-lib-'));
    modern = await startModernServer({ requireAuthorization: AUTHORIZATION });
  });
  after(async () => {
    await modern.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('leaves the value nowhere a person could see it', async () => {
    const seen: string[] = [];
    const show = (label: string, value: unknown) => {
      seen.push(`${label}: ${typeof value === 'string' ? value : `${inspect(value, { depth: 20, showHidden: true })} ${JSON.stringify(value)}`}`);
    };
    const pool = new McpClientPool({ timeoutMs: 5000 });
    const auth = mcp.headers({ Authorization: Secret.concat('Bearer ', new Secret(SECRET)) });
    try {
      const toolbox = await mcp.tools({ url: modern.url, auth, pool });
      show('toolbox', toolbox);
      show('auth', auth);
      const whoami = await callTool(toolbox.whoami, {});
      show('whoami result', whoami);
      assert.equal(modern.stats.authorizations.at(-1), AUTHORIZATION, 'the server received the real value');
      const echoed = await callTool(toolbox.echo_auth_error, {}).catch((err: unknown) => err);
      assert.ok(echoed instanceof McpServerError);
      show('error message', (echoed as Error).message);
      show('error', echoed);
      show('error stack', (echoed as Error).stack);
      const refused = await mcp
        .call({ url: modern.url, auth: mcp.headers({ Authorization: `Bearer ${SECRET}-wrong` }), pool, tool: 'add', arguments: { x: 1, y: 1 } })
        .catch((err: unknown) => err);
      assert.ok(refused instanceof McpServerError && refused.httpStatus === 401);
      show('401 error', refused);

      // Proxying the remote toolbox through serve: the listing and the logs carry no secret either.
      const logs: string[] = [];
      await mcp.serve(
        toolbox,
        async (url) => {
          const client = new LegacyClient({ name: 'v1', version: '1' });
          await client.connect(new LegacyTransport(new URL(url)));
          show('served listing', await client.listTools());
          show('served whoami', await client.callTool({ name: 'whoami', arguments: {} }));
          await client.close();
        },
        { log: (line) => logs.push(line), onerror: (err) => show('serve onerror', err) },
      );
      show('serve logs', logs.join('\n'));

      // Stored: a sealed copy on disk, under SUBAKO_HOME with its key file.
      const key = sealingKey({ SUBAKO_HOME: home });
      writeFileSync(join(home, 'credential.sealed'), seal(auth.values.Authorization, { key, context: 'example' }));
    } finally {
      await pool.closeAll();
    }
    assert.ok(seen.length >= 10);
    for (const text of seen) assertClean('output', text);
    for (const [path, text] of filesUnder(home)) assertClean(path, text);
  });
});
