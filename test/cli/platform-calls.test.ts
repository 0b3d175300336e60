/**
 * `subako calls list|get|tail` against a real `subako serve`: the tail follows the live stream with its
 * filters, and keeps following through a server restart.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { makeApi, spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { jsonOf, runCli, serveForCli, startCli, stopServe } from './helpers/run-cli.js';

describe('subako calls against a real subako serve', () => {
  let server: ChildServer;
  let dataDir: string;
  /** The environment of someone who has the server's admin key. */
  let admin: NodeJS.ProcessEnv;

  before(async () => {
    ({ server, dataDir, admin } = await serveForCli());
  });

  after(() => stopServe(server));

  it('calls tail follows the live stream with its filters; calls list and get read the log', async () => {
    const api = makeApi(server.url, server.apiKey);
    const session = (await api.call('POST', `/v1/agents/${server.agentId}/sessions`, {})).body;
    const other = (await api.call('POST', `/v1/agents/${server.agentId}/sessions`, {})).body;
    const tail = startCli(['calls', 'tail', '--session', session.id, '--status', 'ok', '--json'], admin);
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

    const direct = await runCli(['calls', 'create', '--session', session.id, 'greet', '{"name":"Cli"}'], admin);
    assert.equal(direct.status, 0, direct.stderr);
    assert.equal(direct.stdout, '{"message":"Hello, Cli!"}\n', 'what the model saw');
    assert.match(direct.stderr, /^call_[0-9a-f]+: ok in \d+ ms\n$/);
    const directJson = jsonOf(await runCli(['calls', 'create', '--session', session.id, 'greet', '{"name":"Json"}', '--json'], admin));
    assert.equal(directJson.call.outcome, 'ok');
    assert.equal(directJson.call.via, 'api');
    const badArgs = await runCli(['calls', 'create', '--session', session.id, 'greet', '[1]'], admin);
    assert.equal(badArgs.status, 2, 'arguments that are not an object are a usage error');
    const table = await runCli(['calls', 'list', '--session', session.id], admin);
    assert.match(table.stdout, new RegExp(`^\\S+ +${made.call.id} +${session.id} +greet +api +ok `, 'm'));
    const call = jsonOf(await runCli(['calls', 'get', session.id, made.call.id, '--json'], admin));
    assert.equal(call.model[0].text, '{"message":"Hello, Ada!"}');
    const shown = await runCli(['calls', 'get', session.id, made.call.id], admin);
    assert.match(shown.stdout, /^outcome +ok$/m);
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
