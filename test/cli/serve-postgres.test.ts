/**
 * `subako serve --database postgres://…` against the machine's PostgreSQL (a database of its own, dropped
 * after): it starts, serves a session's call, and a restart on the same database still has every record, none
 * of it in a SQLite file. The URL (with a password in it) shows in nothing the server prints.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { REPO_ROOT } from '../helpers/paths.js';
import { TEST_KEY, spawnServe, tempDir, type ChildServer } from '../server/helpers/harness.js';
import { POSTGRES_HOST, POSTGRES_PORT, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

// Trust auth ignores the password, so it can be one no output may show.
const PASSWORD = 'pw-that-must-never-show-9f3a';

describe('subako serve on PostgreSQL', () => {
  let db: TestDatabase;
  let url: string;
  const servers: ChildServer[] = [];
  before(async () => {
    db = await createTestDatabase();
    url = `postgres://postgres:${PASSWORD}@${POSTGRES_HOST}:${POSTGRES_PORT}/${db.name}`;
  });
  after(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await db.drop();
  });
  const stop = async (server: ChildServer): Promise<void> => {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  };

  it('serves a session call, and keeps every record across a restart on the same database', async () => {
    const dataDir = tempDir();
    const first = await spawnServe(dataDir, undefined, ['--database', url]);
    servers.push(first);
    assert.match(first.stdout(), /^records: PostgreSQL$/m);
    assert.ok(first.agentId, 'the first start made its demo agent');
    const session = (await first.call('POST', `/v1/agents/${first.agentId}/sessions`, {})).body;
    const client = new Client({ name: 'pg-test', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(session.mcp.capability_url)));
    try {
      const result = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } });
      assert.deepEqual(result.structuredContent, { message: 'Hello, Ada!' });
    } finally {
      await client.close();
    }
    const rest = await first.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'Bo' } });
    assert.equal(rest.status, 200, JSON.stringify(rest.body));
    const before = (await first.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
    await stop(first);
    assert.equal(existsSync(join(dataDir, 'subako.db')), false, 'no SQLite file: the records are in PostgreSQL');

    const second = await spawnServe(dataDir, first.apiKey, ['--database', url]);
    servers.push(second);
    assert.doesNotMatch(second.stdout(), /First start/, 'the database already has its admin key');
    assert.equal((await second.call('GET', `/v1/agents/${first.agentId}`)).status, 200);
    assert.equal((await second.call('GET', `/v1/sessions/${session.id}`)).status, 200);
    const calls = (await second.call('GET', `/v1/sessions/${session.id}/calls`)).body.items;
    assert.deepEqual(calls, before);
    assert.deepEqual(calls.map((c: { via: string; outcome: string }) => [c.via, c.outcome]), [['mcp', 'ok'], ['api', 'ok']]);
    await stop(second);

    for (const server of servers) {
      assert.equal(server.stdout().includes(PASSWORD) || server.stderr().includes(PASSWORD), false, 'the URL\'s password is never printed');
    }
  });

  it('says in one line, without the URL, that a database it cannot reach at start is not there', async () => {
    // Port 1 on loopback: nothing listens there.
    const run = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'serve', '--port', '0', '--data-dir', tempDir(),
      '--workers', '1', '--database', `postgres://postgres:${PASSWORD}@127.0.0.1:1/nothing`], { encoding: 'utf8', env: { ...process.env, ...TEST_KEY } });
    assert.equal(run.status, 1, run.stderr);
    assert.deepEqual(run.stderr.trim().split('\n'), [
      'subako serve: cannot start: the database cannot be reached (ECONNREFUSED); start it, or correct --database (or SUBAKO_DATABASE, or "database" in subako.config.json)',
    ]);
    assert.equal((run.stdout + run.stderr).includes(PASSWORD), false);
  });
});
