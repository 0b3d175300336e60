/**
 * PostgreSQL going away under a running server, on an instance of the test's own (never the machine's):
 * while it is down, requests get 503 `store_unavailable` with a message saying to retry; once it is back the
 * same server answers again, with no restart, and every record made before is there once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { Secret } from '../../src/common/index.js';
import { StoreUnavailableError } from '../../src/platform/errors.js';
import { PostgresStore } from '../../src/platform/store/postgres-store.js';
import { startServer } from '../../src/app.js';
import type { SubakoServer } from '../../src/server/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { startPostgresInstance, type PostgresInstance } from '../helpers/postgres-instance.js';
import { EXAMPLES, TEST_KEY, makeApi, tempDir, type Api } from '../server/helpers/harness.js';

describe('PostgreSQL stopped and started again under a running server', () => {
  let pg: PostgresInstance;
  let db: TestDatabase;
  let server: SubakoServer;
  let api: Api;
  let agentId: string;

  before(async () => {
    pg = await startPostgresInstance();
    db = await createTestDatabase(pg.port);
    const started = await startServer({
      dataDir: tempDir(), port: 0, workers: 2, examplesDir: EXAMPLES, env: { ...process.env, ...TEST_KEY },
      database: new Secret(db.url),
    });
    server = started.server;
    assert.ok(started.firstStart?.agentId);
    agentId = started.firstStart.agentId;
    api = makeApi(server.url, started.firstStart.apiKey);
  });
  after(async () => {
    await server?.close();
    pg?.destroy();
  });

  /** Asks until the server answers other than 503, for at most `ms`; returns that answer. */
  async function untilServed(ask: () => Promise<{ status: number; body: any }>, ms = 30_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const answer = await ask();
      if (answer.status !== 503 || Date.now() > deadline) return answer;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('answers 503 while it is down and recovers when it is back, losing and doubling no record', async () => {
    const session = (await api.call('POST', `/v1/agents/${agentId}/sessions`, {})).body;
    for (const name of ['Ada', 'Bo']) {
      const done = await api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name } });
      assert.equal(done.status, 200, JSON.stringify(done.body));
    }

    pg.stop();
    for (const [method, path, body] of [
      ['GET', `/v1/agents/${agentId}`, undefined],
      ['GET', `/v1/sessions/${session.id}/calls`, undefined],
      ['POST', `/v1/agents/${agentId}/sessions`, {}],
      ['POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'Cy' } }],
    ] as const) {
      const down = await api.call(method, path, body);
      assert.equal(down.status, 503, `${method} ${path}: ${JSON.stringify(down.body)}`);
      assert.equal(down.body.error.code, 'store_unavailable');
      assert.match(down.body.error.message, /database cannot be reached; retry/);
    }

    pg.start();
    const back = await untilServed(() => api.call('GET', `/v1/sessions/${session.id}/calls`));
    assert.equal(back.status, 200, JSON.stringify(back.body));
    const after = await api.call('POST', `/v1/sessions/${session.id}/calls`, { tool: 'greet', arguments: { name: 'Di' } });
    assert.equal(after.status, 200, JSON.stringify(after.body));
    const calls = (await api.call('GET', `/v1/sessions/${session.id}/calls`)).body.items as { arguments: { name: string }; outcome: string }[];
    // The call refused while the database was down left no record; the others are there once each.
    assert.deepEqual(calls.map((c) => [c.arguments.name, c.outcome]), [['Ada', 'ok'], ['Bo', 'ok'], ['Di', 'ok']]);
  });
});

describe('a database host that answers nothing', () => {
  it('is unavailable once the connect timeout passes, rather than holding the caller forever', async () => {
    // Accepts TCP connections and never says a word: what a half-dead host or a black-holing proxy looks like.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      await assert.rejects(PostgresStore.open(new Secret(`postgres://postgres@127.0.0.1:${port}/x`), { connectTimeoutMs: 300 }),
        (err: unknown) => err instanceof StoreUnavailableError && err.code === 'store_unavailable');
      assert.ok(sockets.length >= 1, 'it did connect, and then waited for an answer');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
