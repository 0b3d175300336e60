/**
 * The platform from the command line, against a real `subako serve`: `subako login` and its 0600 profile,
 * `packages|agents|sessions|vaults` with tables and --json, refusals in one line that say what to do.
 * (platform-calls.test.ts: `calls`; platform-keys.test.ts: `keys` and `admin-key`.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import { greetPackageDir, spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
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
});
