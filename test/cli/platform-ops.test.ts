/**
 * Issue 29, point 3: the operator's commands a newcomer reached for and did not find, against a real `subako serve`
 * (port 0, killed in after()) and a real MCP upstream: `approvals list|show|approve|deny`, `agents update --spec`,
 * `vaults add-credential` with the secret from standard input, `packages create` bundling exactly as `pack` does
 * (a Rust project's hard-linked target/ is never read), and `push` with the `subako login` profile.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../helpers/eventually.js';
import { startModernServer, type RunningServer } from '../mcp/helpers/servers.js';
import { greetPackageDir, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { jsonOf, runCli, serveForCli, stopServe } from './helpers/run-cli.js';

/** How long a held call waits for a person here: a generous ceiling, never reached by a passing test. */
const HELD_CALL_WINDOW_MS = 3 * 60_000;

const oneLine = (text: string): void => assert.equal(text.trimEnd().split('\n').length, 1, `one line: ${text}`);

describe('operator commands against a real subako serve', () => {
  let server: ChildServer;
  let upstream: RunningServer;
  let admin: NodeJS.ProcessEnv;
  let sessionId: string;
  let heldTool: string;

  before(async () => {
    upstream = await startModernServer();
    // A held call waits for its decision as long as a call may run (the server's call timeout, 30 s by
    // default), and a decision here takes several `subako` processes (list, show, approve): seconds each on a
    // loaded machine, where 30 s ran out before the approve (the approval expired). Nothing here waits for it.
    ({ server, admin } = await serveForCli(['--call-timeout-ms', String(HELD_CALL_WINDOW_MS)]));
    const agent = await server.call('POST', '/v1/agents', {
      name: 'held', mcp_servers: [{ name: 'calc', url: upstream.url, default_policy: 'require_approval' }],
    });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const session = await server.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    assert.equal(session.status, 201, JSON.stringify(session.body));
    sessionId = session.body.id;
    const tools = await server.call('GET', `/v1/sessions/${sessionId}/tools`);
    heldTool = tools.body.items.map((t: { name: string }) => t.name).find((n: string) => n.endsWith('add'));
    assert.ok(heldTool, JSON.stringify(tools.body));
  });

  after(async () => {
    await stopServe(server);
    await upstream.stop();
  });

  /** A call through the session's REST face; it waits (held) until someone decides it. */
  const heldCall = (x: number) => server.call('POST', `/v1/sessions/${sessionId}/calls`, { tool: heldTool, arguments: { x, y: 2 } });
  /**
   * Until the call is held, asked of the REST API: a `subako` process per poll cost seconds each on a loaded
   * machine and showed nothing more (the command's own list is asserted once the call is held).
   */
  const waiting = async () => (await eventually('a call is held', () => server.call('GET', '/v1/approvals'), (answer) => answer.body.items?.length === 1)).body.items;

  it('approvals list shows the held call (tool, agent, session, age); show prints its whole arguments; approve runs it', async () => {
    const call = heldCall(40);
    const [held] = await waiting();
    assert.deepEqual(jsonOf(await runCli(['approvals', 'list', '--json'], admin)).map((item: { id: string; tool: string }) => [item.id, item.tool]), [[held.id, heldTool]]);
    const table = await runCli(['approvals', 'list'], admin);
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /^ID +TOOL +AGENT +SESSION +AGE +EXPIRES IN\n/);
    assert.match(table.stdout, new RegExp(`^${held.id} +${heldTool} +agt_[0-9a-f]+ +${sessionId} +\\d+s +\\d+[smh]$`, 'm'));
    const shown = await runCli(['approvals', 'show', held.id], admin);
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^tool +${heldTool}$`, 'm'));
    assert.match(shown.stdout, /^decision +pending$/m);
    assert.ok(shown.stdout.endsWith('arguments:\n{\n  "x": 40,\n  "y": 2\n}\n'), shown.stdout);
    const approved = await runCli(['approvals', 'approve', held.id], admin);
    assert.equal(approved.status, 0, approved.stderr);
    assert.equal(approved.stdout, `${held.id} approved\n`);
    const answer = await call;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.match(JSON.stringify(answer.body), /42/);
    assert.equal(jsonOf(await runCli(['approvals', 'show', held.id, '--json'], admin)).decision, 'approved');
    // Decided once: a second decision is refused in one line (exit 1).
    const again = await runCli(['approvals', 'deny', held.id], admin);
    assert.equal(again.status, 1);
    oneLine(again.stderr);
    assert.match(again.stderr, /already decided \(approved\)/);
  });

  it('approvals deny --reason ends the call without running it, and the model reads the reason', async () => {
    const call = heldCall(1);
    const [held] = await waiting();
    const denied = await runCli(['approvals', 'deny', held.id, '--reason', 'not during the freeze'], admin);
    assert.equal(denied.status, 0, denied.stderr);
    assert.equal(denied.stdout, `${held.id} denied\n`);
    const answer = await call;
    assert.match(JSON.stringify(answer.body), /not during the freeze/);
    assert.equal(jsonOf(await runCli(['approvals', 'show', held.id, '--json'], admin)).reason, 'not during the freeze');
    assert.equal((await runCli(['approvals', 'list'], admin)).stdout, '(no calls are waiting for approval)\n');
  });

  it('an unknown approval id is one line naming it (exit 1); a missing one is usage (exit 2)', async () => {
    for (const verb of ['show', 'approve', 'deny']) {
      const run = await runCli(['approvals', verb, 'apr_doesnotexist'], admin);
      assert.equal(run.status, 1, `${verb}: ${run.stderr}`);
      oneLine(run.stderr);
      assert.match(run.stderr, /^subako: no held call apr_doesnotexist on http:\/\/127\.0\.0\.1:\d+ .*subako approvals list/);
    }
    assert.equal((await runCli(['approvals', 'approve'], admin)).status, 2);
  });

  it('agents update <name> --spec publishes the next version from the file', async () => {
    const spec = join(tempDir('subako-spec-'), 'agent.json');
    writeFileSync(spec, JSON.stringify({ description: 'Adds, after a person says yes.', mcp_servers: [{ name: 'calc', url: upstream.url, default_policy: 'allow' }] }));
    const run = await runCli(['agents', 'update', 'held', '--spec', spec], admin);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^agent held version 2 published \(agt_[0-9a-f]+\); sessions already started keep version 1, new sessions get 2\n$/);
    const agents = jsonOf(await runCli(['agents', 'list', '--json'], admin));
    const agent = jsonOf(await runCli(['agents', 'get', agents.find((a: any) => a.name === 'held').id, '--json'], admin));
    assert.equal(agent.version, 2);
    assert.equal(agent.spec.description, 'Adds, after a person says yes.');
    assert.equal(agent.spec.mcp_servers[0].default_policy, 'allow');

    const unknown = await runCli(['agents', 'update', 'nobody', '--spec', spec], admin);
    assert.equal(unknown.status, 1);
    oneLine(unknown.stderr);
    assert.match(unknown.stderr, /no agent named "nobody" on .*subako agents list/);
    writeFileSync(spec, JSON.stringify({ name: 'other' }));
    const renamed = await runCli(['agents', 'update', 'held', '--spec', spec], admin);
    assert.equal(renamed.status, 2);
    assert.match(renamed.stderr, /names the agent "other", not "held"/);
    const refused = await runCli(['agents', 'update', 'held', '--spec', join(tempDir(), 'absent.json')], admin);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /--spec .*absent\.json cannot be read \(ENOENT\)/);
  });

  it('vaults add-credential reads the secret from stdin (bearer, headers, oauth), never prints it, and refuses an empty one', async () => {
    const vault = jsonOf(await runCli(['vaults', 'create', 'ops', '--json'], admin));
    const secret = 'tok_Planted9Secret9Value';
    const bearer = await runCli(['vaults', 'add-credential', vault.id, '--target', 'https://api.example.com'], admin, `${secret}\n`);
    assert.equal(bearer.status, 0, bearer.stderr);
    assert.match(bearer.stdout, /^credential crd_\S+ \(static_bearer\) for https:\/\/api\.example\.com added to vlt_/);
    const header = await runCli(['vaults', 'add-credential', vault.id, '--target', 'https://h.example.com', '--scheme', 'headers', '--header', 'x-api-key'], admin, secret);
    assert.equal(header.status, 0, header.stderr);
    const oauth = await runCli(['vaults', 'add-credential', vault.id, '--target', 'https://o.example.com', '--scheme', 'oauth', '--name', 'o', '--json'], admin,
      JSON.stringify({ access_token: secret, refresh: { token_endpoint: 'https://o.example.com/token', client_id: 'c', refresh_token: `${secret}r` } }));
    assert.equal(oauth.status, 0, oauth.stderr);
    assert.equal(JSON.parse(oauth.stdout).refreshable, true);
    const shown = await runCli(['vaults', 'get', vault.id, '--json'], admin);
    assert.deepEqual(JSON.parse(shown.stdout).credentials.map((c: any) => c.auth_scheme).sort(), ['oauth', 'static_bearer', 'static_headers']);
    for (const run of [bearer, header, oauth, shown]) assert.ok(!(run.stdout + run.stderr).includes(secret), 'the secret is never printed');

    const empty = await runCli(['vaults', 'add-credential', vault.id, '--target', 'https://api.example.com'], admin, '');
    assert.equal(empty.status, 2);
    oneLine(empty.stderr);
    assert.match(empty.stderr, /^subako: no secret on standard input: pipe in the bearer token .*never as a flag/);
    const notJson = await runCli(['vaults', 'add-credential', vault.id, '--target', 'https://o.example.com', '--scheme', 'oauth'], admin, secret);
    assert.equal(notJson.status, 2);
    assert.ok(!notJson.stderr.includes(secret), notJson.stderr);
    const scheme = await runCli(['vaults', 'add-credential', vault.id, '--target', 'https://o.example.com', '--scheme', 'basic'], admin, secret);
    assert.equal(scheme.status, 2);
    assert.match(scheme.stderr, /--scheme basic is not one: bearer, headers or oauth/);
  });

  it('packages create bundles a project exactly as pack does: a Rust target/ with hard links is not read', async () => {
    const dir = greetPackageDir('5.0.0');
    // What a cargo build leaves: sources, and target/ with hard links between its files.
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'lib.rs'), 'pub fn greet() {}\n');
    mkdirSync(join(dir, 'target', 'release', 'deps'), { recursive: true });
    writeFileSync(join(dir, 'target', 'release', 'deps', 'greet.wasm'), 'not a module');
    linkSync(join(dir, 'target', 'release', 'deps', 'greet.wasm'), join(dir, 'target', 'release', 'greet.wasm'));
    const out = join(tempDir('subako-packed-'), 'greet.tar.gz');
    const packed = await runCli(['pack', dir, '-o', out], admin);
    assert.equal(packed.status, 0, packed.stderr);
    const created = await runCli(['packages', 'create', dir, '--json'], admin);
    assert.equal(created.status, 0, created.stderr);
    const digest = createHash('sha256').update(readFileSync(out)).digest('hex');
    assert.equal(JSON.parse(created.stdout).digest.replace(/^sha256:/, ''), digest, 'the server got the very bundle pack writes');
  });

  it('push uses the subako login profile, as the other platform commands do', async () => {
    const home = tempDir('subako-push-home-');
    const login = await runCli(['login', '--server', server.url], { SUBAKO_HOME: home }, `${server.apiKey}\n`);
    assert.equal(login.status, 0, login.stderr);
    const pushed = await runCli(['push', greetPackageDir('6.0.0')], { SUBAKO_HOME: home });
    assert.equal(pushed.status, 0, pushed.stderr);
    assert.match(pushed.stdout, /^package greet@6\.0\.0 published\n/);
    const named = await runCli(['push', greetPackageDir('6.0.1'), '--profile', 'absent'], { SUBAKO_HOME: home });
    assert.equal(named.status, 1);
    oneLine(named.stderr);
    assert.match(named.stderr, /no API key for http:\/\/127\.0\.0\.1:7070: run subako login --server http:\/\/127\.0\.0\.1:7070 --profile absent/);
  });
});
