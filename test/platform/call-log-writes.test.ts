/**
 * The call log's writes (issue 26, point 4): a quick call is written once, whole, as it ends; a call still running
 * `callRecordDelayMs` after its admission gets its `running` record then, and its end over it; the live stream hears
 * every call start and end either way. Where the record must come first it still does: with a delay of 0, for a call
 * with an idempotency key, and — so that a database out of reach refuses calls rather than run them unrecorded —
 * while the database has not taken an earlier call's end.
 *
 * A real platform on SQLite with TypeScript tools reached as a remote server's toolbox; the store is the real one,
 * its call writes counted by a proxy, which can also make them fail as a database out of reach would.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Platform, FunctionRuntime, StoreUnavailableError, CallNotStartedError, type CallEvent, type SessionTool } from '../../src/platform/index.js';
import { SqliteStore } from '../../src/platform/store/index.js';
import { EMPTY_CATALOG, defineTool } from '../../src/mcp/index.js';
import { tempDir } from '../server/helpers/harness.js';
import { eventually } from '../helpers/eventually.js';

const REMOTE = 'http://127.0.0.1:9/mcp';
type CallWrite = 'addCall' | 'finishCall' | 'recordEndedCall';

/** A platform on a real SQLite store whose call writes are counted (and, on demand, refused as a database down would). */
async function openPlatform(callRecordDelayMs?: number) {
  const dataDir = tempDir();
  const store = new SqliteStore(join(dataDir, 'subako.db'));
  const writes: CallWrite[] = [];
  const down = new Set<CallWrite>();
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'addCall' || prop === 'finishCall' || prop === 'recordEndedCall') {
        return async (...args: unknown[]) => {
          writes.push(prop);
          if (down.has(prop)) throw new StoreUnavailableError({ cause: new Error('connection refused') });
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  /** The slow tool's calls wait for this, once each; the tools see the session's records as they run. */
  const gates: (() => void)[] = [];
  const seen: string[][] = [];
  let sessionId = '';
  const recordsNow = async () => (await store.listCalls(sessionId, { limit: 50 })).items.map((c) => `${c.tool.replace(/^.*__/, '')}:${c.outcome}`);
  const tools = {
    quick: defineTool({ name: 'quick', description: 'Answers at once.', inputSchema: { type: 'object' }, handler: () => ({ content: [{ type: 'text' as const, text: 'done' }] }) }),
    look: defineTool({
      name: 'look', description: 'Answers what the call log holds as it runs.', inputSchema: { type: 'object' },
      handler: async () => { seen.push(await recordsNow()); return { content: [{ type: 'text' as const, text: 'looked' }] }; },
    }),
    slow: defineTool({
      name: 'slow', description: 'Answers once let go.', inputSchema: { type: 'object' },
      handler: async () => { await new Promise<void>((resolve) => gates.push(resolve)); return { content: [{ type: 'text' as const, text: 'slow done' }] }; },
    }),
  };
  const platform = await Platform.open({
    dataDir, runtime: new FunctionRuntime({ poolSize: 1 }), sealingKey: Buffer.alloc(32, 7), store: counted as SqliteStore,
    remote: { tools: async () => tools, catalog: async () => EMPTY_CATALOG },
    ...(callRecordDelayMs !== undefined ? { callRecordDelayMs } : {}),
  });
  const { agent } = await platform.agents.create({ name: 'writes', mcp_servers: [{ name: 't', url: REMOTE }] });
  const { session } = await platform.sessions.create(agent.id, {});
  sessionId = session.id;
  const box = await platform.toolboxes.forSession(session);
  const tool = (name: string): SessionTool => {
    const published = Object.keys(box.tools).find((n) => n.endsWith(name));
    assert.ok(published, `the session publishes ${name}: ${Object.keys(box.tools).join(', ')}`);
    return box.tools[published] as SessionTool;
  };
  const events: CallEvent[] = [];
  const unsubscribe = platform.calls.events.subscribe((event) => events.push(event))!;
  return {
    platform, store, writes, down, gates, seen, events, tool, recordsNow, sessionId,
    close: async () => {
      unsubscribe();
      await platform.close();
      store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe('the call log writes a quick call once, and a slow one as it starts and as it ends', () => {
  const opened: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const p of opened) await p.close();
  });

  it('a quick call is one write of its whole record; the live stream hears it start and end', async () => {
    const p = await openPlatform();
    opened.push(p);
    for (let n = 0; n < 5; n++) assert.deepEqual((await p.tool('quick').call({ n }, { via: 'api' })).content, [{ type: 'text', text: 'done' }]);
    assert.deepEqual(p.writes, Array(5).fill('recordEndedCall'), 'one write per call, none before it ran');
    const records = (await p.store.listCalls(p.sessionId, { limit: 10 })).items;
    assert.equal(records.length, 5);
    for (const record of records) {
      assert.equal(record.outcome, 'ok');
      assert.equal(typeof record.durationMs, 'number');
      assert.equal(record.via, 'api');
    }
    const byCall = new Map<string, string[]>();
    for (const event of p.events) byCall.set(event.call.id, [...(byCall.get(event.call.id) ?? []), event.call.outcome]);
    assert.deepEqual([...byCall.values()], Array(5).fill(['running', 'ok']), 'each call was announced as it started, then as it ended');
  });

  it('a call still running after the delay gets its running record then, and its end over it', async () => {
    const p = await openPlatform(50);
    opened.push(p);
    const call = p.tool('slow').call({}, { via: 'api' });
    await eventually('the slow call\'s running record', () => p.recordsNow(), (records) => records.includes('slow:running'), { everyMs: 10 });
    assert.deepEqual(p.writes, ['addCall']);
    p.gates.shift()!();
    assert.deepEqual((await call).content, [{ type: 'text', text: 'slow done' }]);
    assert.deepEqual(p.writes, ['addCall', 'finishCall']);
    assert.deepEqual(await p.recordsNow(), ['slow:ok']);
    assert.deepEqual(p.events.map((e) => e.call.outcome), ['running', 'ok'], 'announced once as it started, not again when recorded');
  });

  it('with a delay of 0, and for a call with an idempotency key, the running record is written before the tool runs', async () => {
    const strict = await openPlatform(0);
    opened.push(strict);
    await strict.tool('look').call({}, { via: 'api' });
    assert.deepEqual(strict.seen, [['look:running']], 'the tool found its own running record');
    assert.deepEqual(strict.writes, ['addCall', 'finishCall']);

    const keyed = await openPlatform();
    opened.push(keyed);
    await keyed.tool('look').call({}, { via: 'api', idempotencyKey: 'k-1' });
    assert.deepEqual(keyed.seen, [['look:running']]);
    assert.deepEqual(keyed.writes, ['addCall', 'finishCall']);
    await keyed.tool('look').call({}, { via: 'api' });
    assert.deepEqual(keyed.seen[1], ['look:ok'], 'without a key, the call ran before any record of it');
  });

  it('once the database failed to take an end, calls are recorded before they run — refused while it cannot — until the held end lands', async () => {
    const p = await openPlatform();
    opened.push(p);
    // The database goes away under a quick call: the caller still gets its outcome, and its end is held.
    p.down.add('recordEndedCall').add('finishCall').add('addCall');
    assert.deepEqual((await p.tool('quick').call({}, { via: 'api' })).content, [{ type: 'text', text: 'done' }]);
    assert.deepEqual(p.writes, ['recordEndedCall']);
    // Now a call must be recorded before it runs, and cannot be: it is refused, and the tool did not run.
    await assert.rejects(p.tool('look').call({}, { via: 'api' }), (err: unknown) => err instanceof CallNotStartedError);
    assert.equal(p.seen.length, 0, 'the tool did not run');
    assert.deepEqual(p.writes, ['recordEndedCall', 'addCall']);

    // Back: the next call is recorded first (the held end has not landed yet, or just has), and the held end lands.
    p.down.clear();
    await eventually('the held end lands', () => p.recordsNow(), (records) => records.includes('quick:ok'), { everyMs: 20 });
    await eventually('the outbox is empty', async () => p.platform.calls.flushEnds(10), (empty) => empty, { everyMs: 20 });
    p.writes.length = 0;
    await p.tool('look').call({}, { via: 'api' });
    assert.deepEqual(p.writes, ['recordEndedCall'], 'with nothing held, a quick call is one write again');
    assert.deepEqual(p.seen, [['quick:ok']], 'and it ran before any record of it');
  });
});
