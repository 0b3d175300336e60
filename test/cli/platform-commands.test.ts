/**
 * The platform from the command line, against a real `subako serve`: `subako login` and its 0600 profile,
 * `packages|agents|sessions|vaults|calls|keys` with tables and --json, `calls tail` following the live stream,
 * read-only keys refused on writes, refusals in one line that say what to do, and `subako admin-key`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import { greetPackageDir, spawnServe, tempDir, makeApi, type ChildServer } from '../server/helpers/harness.js';
import { jsonOf, runCli, startCli } from './helpers/run-cli.js';

const oneLine = (text: string): void => assert.equal(text.trimEnd().split('\n').length, 1, `one line: ${text}`);

describe('the platform commands against a real subako serve', () => {
  let server: ChildServer;
  let dataDir: string;
  let home: string;
  /** The environment of a command run by someone who logged in (the profile holds server and key). */
  let loggedIn: NodeJS.ProcessEnv;

  before(async () => {
    dataDir = tempDir();
    home = tempDir('subako-cli-home-');
    server = await spawnServe(dataDir);
    loggedIn = { SUBAKO_HOME: home };
  });

  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('subako login refuses a wrong key in one line and stores nothing', async () => {
    const run = await runCli(['login', '--server', server.url], { SUBAKO_HOME: home, SUBAKO_API_KEY: 'sk_thisIsNotAKeyOfThisServer000' });
    assert.equal(run.status, 1);
    oneLine(run.stderr);
    assert.match(run.stderr, /refused the API key \(401\); run subako login --server/);
    assert.equal(existsSync(join(home, 'profiles', 'default.json')), false);
  });

  it('subako login checks the key read from stdin and stores a profile at mode 0600', async () => {
    const run = await runCli(['login', '--server', server.url], { SUBAKO_HOME: home }, `${server.apiKey}\n`);
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /logged in to http:\/\/127\.0\.0\.1:\d+ with sk_.{4}… \(key_[0-9a-f]+, scope admin\)/);
    assert.ok(!run.stdout.includes(server.apiKey), 'the key is not printed back');
    const file = join(home, 'profiles', 'default.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(home, 'profiles')).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { server: server.url, apiKey: server.apiKey });
    const named = jsonOf(await runCli(['login', '--server', server.url, '--profile', 'ops', '--json'], { SUBAKO_HOME: home, SUBAKO_API_KEY: server.apiKey }));
    assert.equal(named.profile, 'ops');
    assert.equal(named.key.scope, 'admin');
    assert.ok(existsSync(join(home, 'profiles', 'ops.json')));
  });

  it('on a terminal subako login asks for the key and does not echo it', { skip: !existsSync('/usr/bin/script') && 'needs script(1) for a terminal' }, async () => {
    const ttyHome = tempDir('subako-cli-tty-');
    const bin = join(REPO_ROOT, 'bin', 'subako.js');
    // script(1) runs the command on a pseudo-terminal; what it prints is everything the terminal showed.
    const run = startCli([], {}, undefined, ['/usr/bin/script', '-qec', `'${process.execPath}' '${bin}' login --server ${server.url}`, '/dev/null'], { SUBAKO_HOME: ttyHome });
    for (let i = 0; i < 400 && !run.output().includes('API key for'); i++) await new Promise((r) => setTimeout(r, 25));
    run.child.stdin!.end(`${server.apiKey}\r`);
    const ended = await run.done;
    assert.equal(ended.status, 0, ended.stdout + ended.stderr);
    assert.match(ended.stdout, new RegExp(`API key for ${server.url.replace(/[.]/g, '\\.')}: `));
    assert.match(ended.stdout, /logged in to /);
    assert.ok(!ended.stdout.includes(server.apiKey), 'the key typed is not echoed');
    assert.equal(JSON.parse(readFileSync(join(ttyHome, 'profiles', 'default.json'), 'utf8')).apiKey, server.apiKey);
  });

  it('without a profile or SUBAKO_API_KEY a command says to run subako login', async () => {
    const run = await runCli(['agents', 'list'], { SUBAKO_HOME: tempDir('subako-cli-empty-') });
    assert.equal(run.status, 1);
    oneLine(run.stderr);
    assert.match(run.stderr, /no API key for http:\/\/127\.0\.0\.1:7070: run subako login --server/);
  });

  it('packages create, list, get and delete, as tables and as JSON', async () => {
    const created = jsonOf(await runCli(['packages', 'create', greetPackageDir('2.0.0'), '--json'], loggedIn));
    assert.equal(created.name, 'greet');
    assert.equal(created.version, '2.0.0');
    const table = await runCli(['packages', 'list'], loggedIn);
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /^NAME +VERSION +TOOLS +CREATED +DESCRIPTION\n/);
    assert.match(table.stdout, /^greet +2\.0\.0 +greet /m);
    assert.deepEqual(jsonOf(await runCli(['packages', 'list', '--json'], loggedIn)).map((p: any) => p.version), ['1.0.0', '2.0.0']);
    const summary = jsonOf(await runCli(['packages', 'get', 'greet', '--json'], loggedIn));
    assert.equal(summary.latest_version, '2.0.0');
    const version = await runCli(['packages', 'get', 'greet', '1.0.0'], loggedIn);
    assert.match(version.stdout, /^version +1\.0\.0$/m);
    assert.match(version.stdout, /^tools:\n {2}greet: /m);
    const deleted = await runCli(['packages', 'delete', 'greet', '2.0.0'], loggedIn);
    assert.equal(deleted.status, 0, deleted.stderr);
    assert.equal(deleted.stdout, 'deleted greet@2.0.0\n');
    const gone = await runCli(['packages', 'get', 'greet', '2.0.0'], loggedIn);
    assert.equal(gone.status, 1);
    oneLine(gone.stderr);
    assert.match(gone.stderr, /was not found \(HTTP 404, not_found\)/);
  });

  it('agents, vaults and sessions: create, list, get, delete', async () => {
    const vault = jsonOf(await runCli(['vaults', 'create', 'team', '--json'], loggedIn));
    assert.match(vault.id, /^vlt_/);
    assert.match((await runCli(['vaults', 'list'], loggedIn)).stdout, new RegExp(`^${vault.id} +team `, 'm'));
    const shown = jsonOf(await runCli(['vaults', 'get', vault.id, '--json'], loggedIn));
    assert.deepEqual(shown.credentials, []);

    const agent = jsonOf(await runCli(['agents', 'create', '--name', 'cli-agent', '--package', 'greet@1.0.0', '--json'], loggedIn));
    assert.match(agent.id, /^agt_/);
    assert.match((await runCli(['agents', 'list'], loggedIn)).stdout, new RegExp(`^${agent.id} +cli-agent +1 `, 'm'));
    assert.equal(jsonOf(await runCli(['agents', 'get', agent.id, '--json'], loggedIn)).spec.tools[0].package, 'greet');

    const started = await runCli(['sessions', 'create', '--agent', agent.id, '--vault', vault.id], loggedIn);
    assert.equal(started.status, 0, started.stderr);
    assert.match(started.stdout, /capability URL: http:\/\/127\.0\.0\.1:\d+\/mcp\/st_/);
    const sessionId = /^id +(ses_[0-9a-f]+)$/m.exec(started.stdout)![1];
    assert.deepEqual(jsonOf(await runCli(['sessions', 'list', '--agent', agent.id, '--json'], loggedIn)).map((s: any) => s.id), [sessionId]);
    assert.match((await runCli(['sessions', 'get', sessionId], loggedIn)).stdout, new RegExp(`^vaults +${vault.id}$`, 'm'));

    const inUse = await runCli(['vaults', 'delete', vault.id], loggedIn);
    assert.equal(inUse.status, 1, 'a vault a session uses is not deleted');
    oneLine(inUse.stderr);
    assert.equal((await runCli(['sessions', 'delete', sessionId], loggedIn)).stdout, `deleted ${sessionId}\n`);
    assert.equal((await runCli(['sessions', 'get', sessionId], loggedIn)).status, 1);
    assert.equal((await runCli(['agents', 'delete', agent.id, '--json'], loggedIn)).status, 0);
    assert.equal((await runCli(['vaults', 'delete', vault.id], loggedIn)).status, 0);
    assert.deepEqual(jsonOf(await runCli(['vaults', 'list', '--json'], loggedIn)), []);
  });

  it('calls tail follows the live stream with its filters; calls list and get read the log', async () => {
    const api = makeApi(server.url, server.apiKey);
    const session = (await api.call('POST', `/v1/agents/${server.agentId}/sessions`, {})).body;
    const other = (await api.call('POST', `/v1/agents/${server.agentId}/sessions`, {})).body;
    const tail = startCli(['calls', 'tail', '--session', session.id, '--status', 'ok', '--json'], loggedIn);
    let seen = '';
    tail.child.stdout!.on('data', (chunk) => { seen += chunk; });
    // Calls go on until the tail has printed one: those made before its stream opened are not followed.
    const madeIds: string[] = [];
    for (let i = 0; i < 200 && !seen.includes('\n'); i++) {
      await api.call('POST', `/v1/sessions/${other.id}/calls`, { tool: 'greet', arguments: { name: 'Other' } });
      madeIds.push((await api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'Ada' } })).body.call.id);
      await new Promise((r) => setTimeout(r, 50));
    }
    tail.child.kill('SIGINT');
    const ended = await tail.done;
    assert.equal(ended.status, 0, ended.stderr);
    const lines = ended.stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.ok(lines.length >= 1);
    for (const call of lines) {
      assert.equal(call.session_id, session.id, 'only the filtered session\'s calls');
      assert.equal(call.outcome, 'ok', 'only ended calls with the filtered outcome (not their running event)');
      assert.ok(madeIds.includes(call.id));
    }
    const made = { call: { id: lines[0].id } };

    const table = await runCli(['calls', 'list', '--session', session.id], loggedIn);
    assert.match(table.stdout, new RegExp(`^\\S+ +${made.call.id} +${session.id} +greet +api +ok `, 'm'));
    const call = jsonOf(await runCli(['calls', 'get', session.id, made.call.id, '--json'], loggedIn));
    assert.equal(call.model[0].text, '{"message":"Hello, Ada!"}');
    const shown = await runCli(['calls', 'get', session.id, made.call.id], loggedIn);
    assert.match(shown.stdout, /^outcome +ok$/m);
  });

  it('keys: a read-only key reads but every write is refused, by the CLI and by the API; keys list shows no secret', async () => {
    const made = jsonOf(await runCli(['keys', 'create', '--name', 'prometheus', '--scope', 'read', '--json'], loggedIn));
    assert.equal(made.scope, 'read');
    assert.match(made.key, /^sk_/);
    const reader = { SUBAKO_HOME: tempDir('subako-cli-reader-'), SUBAKO_SERVER: server.url, SUBAKO_API_KEY: made.key };
    assert.equal((await runCli(['packages', 'list'], reader)).status, 0);
    const write = await runCli(['vaults', 'create', 'nope'], reader);
    assert.equal(write.status, 1);
    oneLine(write.stderr);
    assert.match(write.stderr, /is read-only \(scope read\): it may only GET; changes take an admin key \(subako login --server \S+ with one\)/);
    const readOnly = makeApi(server.url, made.key);
    for (const [method, path, body] of [
      ['POST', '/v1/vaults', { name: 'nope' }], ['POST', '/v1/keys', { name: 'escalate', scope: 'admin' }],
      ['DELETE', `/v1/agents/${server.agentId}`, undefined], ['POST', `/v1/agents/${server.agentId}/sessions`, {}],
    ] as const) {
      const refused = await readOnly.call(method, path, body);
      assert.equal(refused.status, 403, `${method} ${path}`);
      assert.equal(refused.body.error.code, 'read_only_key');
    }
    assert.equal((await readOnly.call('GET', `/v1/agents/${server.agentId}`)).status, 200, 'the agent was not deleted');

    const listed = await runCli(['keys', 'list'], loggedIn);
    assert.match(listed.stdout, /^ID +NAME +PREFIX +SCOPE +CREATED +LAST USED +REVOKED$/m);
    assert.match(listed.stdout, new RegExp(`^${made.id} +prometheus +${made.prefix}… +read `, 'm'));
    assert.ok(!listed.stdout.includes(made.key) && !listed.stdout.includes(server.apiKey));
    const keys = jsonOf(await runCli(['keys', 'list', '--json'], loggedIn));
    assert.ok(keys.every((k: any) => !('key' in k) && !('hash' in k)));
    assert.ok(keys.find((k: any) => k.id === made.id).last_used_at, 'the read key\'s last use is recorded');

    const revoked = jsonOf(await runCli(['keys', 'revoke', made.id, '--json'], loggedIn));
    assert.ok(revoked.revoked_at);
    const after = await runCli(['packages', 'list'], reader);
    assert.equal(after.status, 1);
    assert.match(after.stderr, /refused the API key \(401\); run subako login/);
  });

  it('the last admin key cannot be revoked; subako admin-key mints one offline that works', async () => {
    const self = (await makeApi(server.url, server.apiKey).call('GET', '/v1/keys/current')).body;
    const last = await runCli(['keys', 'revoke', self.id], loggedIn);
    assert.equal(last.status, 1);
    oneLine(last.stderr);
    assert.match(last.stderr, /is the last admin key; create another admin key first/);

    const minted = await runCli(['admin-key', '--data-dir', dataDir], {});
    assert.equal(minted.status, 0, minted.stderr);
    const key = /^ {2}(sk_\S+)$/m.exec(minted.stdout)![1];
    const withIt = makeApi(server.url, key);
    assert.equal((await withIt.call('GET', '/v1/agents')).status, 200);
    assert.equal((await withIt.call('GET', '/v1/keys/current')).body.scope, 'admin');
    assert.equal((await withIt.call('POST', '/v1/vaults', { name: 'minted' })).status, 201, 'an admin key: it may write');
    const asJson = jsonOf(await runCli(['admin-key', '--data-dir', dataDir, '--json'], {}));
    assert.equal((await makeApi(server.url, asJson.key).call('GET', '/v1/agents')).status, 200);

    const nowhere = await runCli(['admin-key', '--data-dir', tempDir('subako-not-data-')], {});
    assert.equal(nowhere.status, 1);
    oneLine(nowhere.stderr);
    assert.match(nowhere.stderr, /holds no subako database \(subako\.db\); pass the --data-dir the server runs with/);
  });
});


describe('subako calls tail across a server restart', () => {
  it('reconnects to the restarted server, says the stream could not resume, and goes on printing calls', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = String((probe.address() as { port: number }).port);
    await new Promise((resolve) => probe.close(resolve));
    const dataDir = tempDir();
    const first = await spawnServe(dataDir, undefined, ['--port', port]);
    const env = { SUBAKO_HOME: tempDir('subako-cli-home-'), SUBAKO_SERVER: first.url, SUBAKO_API_KEY: first.apiKey };
    const tail = startCli(['calls', 'tail'], env);
    let seen = '';
    tail.child.stdout!.on('data', (chunk) => { seen += chunk; });
    let second: ChildServer | null = null;
    try {
      const session = (await first.call('POST', `/v1/agents/${first.agentId}/sessions`, {})).body;
      for (let i = 0; i < 200 && !/ ok /.test(seen); i++) {
        await first.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'Before' } });
        await new Promise((r) => setTimeout(r, 50));
      }
      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0);
      second = await spawnServe(dataDir, first.apiKey, ['--port', port]);
      const printed = seen.length;
      let made = '';
      for (let i = 0; i < 300 && !seen.slice(printed).includes(made || '\u0000'); i++) {
        made = (await second.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'After' } })).body.call.id;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(seen, /^STARTED +ID +SESSION +TOOL +VIA +OUTCOME +MS\n/, 'for people: a header line first');
      assert.match(seen.slice(printed), new RegExp(`${made} +${session.id} +greet +api +ok `), 'a call on the restarted server is printed');
    } finally {
      tail.child.kill('SIGINT');
      const ended = await tail.done;
      assert.equal(ended.status, 0, ended.stderr);
      assert.match(ended.stderr, /the stream could not resume where it left off \(the server restarted\?\)/);
      second?.child.kill('SIGTERM');
      if (second) await second.exited;
    }
  });
});
