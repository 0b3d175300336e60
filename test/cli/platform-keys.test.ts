/**
 * `subako keys list|create|revoke` and `subako admin-key` against a real `subako serve`: read-only keys
 * refused on every write (by the CLI and the API), no secret in lists, the last admin key kept, and an
 * admin key minted offline that works.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeApi, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { jsonOf, runCli, serveForCli, stopServe } from './helpers/run-cli.js';

const oneLine = (text: string): void => assert.equal(text.trimEnd().split('\n').length, 1, `one line: ${text}`);

describe('subako keys and subako admin-key against a real subako serve', () => {
  let server: ChildServer;
  let dataDir: string;
  /** The environment of someone who has the server's admin key. */
  let admin: NodeJS.ProcessEnv;

  before(async () => {
    ({ server, dataDir, admin } = await serveForCli());
  });

  after(() => stopServe(server));

  it('keys: a read-only key reads but every write is refused, by the CLI and by the API; keys list shows no secret', async () => {
    const made = jsonOf(await runCli(['keys', 'create', '--name', 'prometheus', '--scope', 'read', '--json'], admin));
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

    const listed = await runCli(['keys', 'list'], admin);
    assert.match(listed.stdout, /^ID +NAME +PREFIX +SCOPE +CREATED +LAST USED +REVOKED$/m);
    assert.match(listed.stdout, new RegExp(`^${made.id} +prometheus +${made.prefix}… +read `, 'm'));
    assert.ok(!listed.stdout.includes(made.key) && !listed.stdout.includes(server.apiKey));
    const keys = jsonOf(await runCli(['keys', 'list', '--json'], admin));
    assert.ok(keys.every((k: any) => !('key' in k) && !('hash' in k)));
    assert.ok(keys.find((k: any) => k.id === made.id).last_used_at, 'the read key\'s last use is recorded');

    const revoked = jsonOf(await runCli(['keys', 'revoke', made.id, '--json'], admin));
    assert.ok(revoked.revoked_at);
    const after = await runCli(['packages', 'list'], reader);
    assert.equal(after.status, 1);
    assert.match(after.stderr, /refused the API key \(401\); run subako login/);
  });

  it('the last admin key cannot be revoked; subako admin-key mints one offline that works', async () => {
    const self = (await makeApi(server.url, server.apiKey).call('GET', '/v1/keys/current')).body;
    const last = await runCli(['keys', 'revoke', self.id], admin);
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
