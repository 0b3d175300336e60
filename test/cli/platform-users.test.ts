/**
 * `subako users list|create|show|delete`, and sessions and vaults for a user (`sessions create --user`,
 * `sessions list --user`, `vaults create --user`), against a real `subako serve`: tables and --json, refusals in one line.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildServer } from '../server/helpers/harness.js';
import { jsonOf, runCli, serveForCli, stopServe } from './helpers/run-cli.js';

describe('subako users against a real subako serve', () => {
  let server: ChildServer;
  let admin: NodeJS.ProcessEnv;
  let agentId: string;

  before(async () => {
    ({ server, admin } = await serveForCli());
    agentId = jsonOf(await runCli(['agents', 'create', '--name', 'for-users', '--json'], admin)).id;
  });
  after(() => stopServe(server));

  it('creates a user, a vault it owns and a session for it; show lists both; list shows the user', async () => {
    const made = await runCli(['users', 'create', 'auth0|ada', '--display-name', 'Ada Lovelace', '--email', 'ada@example.com'], admin);
    assert.equal(made.status, 0, made.stderr);
    assert.equal(made.stdout, 'user auth0|ada created\n');
    const vault = jsonOf(await runCli(['vaults', 'create', 'github', '--user', 'auth0|ada', '--json'], admin));
    assert.equal(vault.user_id, 'auth0|ada');
    const session = await runCli(['sessions', 'create', '--agent', agentId, '--user', 'auth0|ada'], admin);
    assert.equal(session.status, 0, session.stderr);
    assert.match(session.stdout, /^user +auth0\|ada$/m);
    assert.match(session.stdout, /capability URL: http:\/\/127\.0\.0\.1:\d+\/mcp\/st_/);
    const sessionId = /^id +(ses_\S+)$/m.exec(session.stdout)![1];

    const shown = await runCli(['users', 'show', 'auth0|ada'], admin);
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, /^name +Ada Lovelace$/m);
    assert.match(shown.stdout, new RegExp(`^${vault.id} +github `, 'm'));
    assert.match(shown.stdout, new RegExp(`^${sessionId} +${agentId} \\(version 1\\)`, 'm'));
    const json = jsonOf(await runCli(['users', 'show', 'auth0|ada', '--json'], admin));
    assert.deepEqual(json.vaults.map((v: { id: string }) => v.id), [vault.id]);
    assert.deepEqual(json.sessions.map((s: { id: string }) => s.id), [sessionId]);
    const got = await runCli(['sessions', 'get', sessionId], admin);
    assert.match(got.stdout, /^user +auth0\|ada$/m);
    assert.match(got.stdout, /^vaults +\(every vault of the user\)$/m);
    const byUser = jsonOf(await runCli(['sessions', 'list', '--user', 'auth0|ada', '--json'], admin));
    assert.deepEqual(byUser.map((s: { id: string }) => s.id), [sessionId]);

    const listed = await runCli(['users', 'list'], admin);
    assert.match(listed.stdout, /^ID +NAME +EMAIL +CREATED$/m);
    assert.match(listed.stdout, /^auth0\|ada +Ada Lovelace +ada@example\.com /m);
  });

  it('delete removes the user, its vaults and its sessions', async () => {
    assert.equal((await runCli(['users', 'create', 'bob'], admin)).status, 0);
    const vault = jsonOf(await runCli(['vaults', 'create', 'v', '--user', 'bob', '--json'], admin));
    const session = jsonOf(await runCli(['sessions', 'create', '--agent', agentId, '--user', 'bob', '--json'], admin));
    const deleted = await runCli(['users', 'delete', 'bob'], admin);
    assert.equal(deleted.status, 0, deleted.stderr);
    assert.equal(deleted.stdout, 'deleted user bob, its vaults and its sessions\n');
    for (const args of [['users', 'show', 'bob'], ['vaults', 'get', vault.id], ['sessions', 'get', session.id]]) {
      const run = await runCli(args, admin);
      assert.equal(run.status, 1, `${args.join(' ')}: ${run.stdout}`);
      assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
    }
  });

  it('refuses in one line: an id of the wrong form, an id taken, a session naming another user\'s vault, sessions list without --agent or --user', async () => {
    const bad = await runCli(['users', 'create', 'a b'], admin);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /^subako: .*"a b" is not a user id: use 1-128 characters of A-Z a-z 0-9/);
    assert.equal(bad.stderr.trimEnd().split('\n').length, 1);
    assert.equal((await runCli(['users', 'create', 'carol'], admin)).status, 0);
    const taken = await runCli(['users', 'create', 'carol'], admin);
    assert.equal(taken.status, 1);
    assert.match(taken.stderr, /user carol exists already/);
    assert.equal((await runCli(['users', 'create', 'dan'], admin)).status, 0);
    const dans = jsonOf(await runCli(['vaults', 'create', 'v', '--user', 'dan', '--json'], admin));
    const foreign = await runCli(['sessions', 'create', '--agent', agentId, '--user', 'carol', '--vault', dans.id], admin);
    assert.equal(foreign.status, 1);
    assert.match(foreign.stderr, /belongs to another user: a session uses only its own user's vaults and the operator's/);
    const neither = await runCli(['sessions', 'list'], admin);
    assert.equal(neither.status, 2);
    assert.match(neither.stderr, /--agent ID or --user ID/);
  });
});
