/**
 * ABI 1's stderr-tail rule through a call dispatched over NATS to a `subako worker` (a process of its own, on
 * the machine's NATS under this run's prefix): each row of the table (test/function/stderr-tail-rows.ts), over
 * REST through the replica — the answer, its record, the call log.
 */
import { after, before, describe, test } from 'node:test';
import { rmSync } from 'node:fs';
import { startServer } from '../../src/app.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { SHARED_NATS_URL, removeBuckets, runName, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { makeApi, tempDir, TEST_KEY, type Api } from './helpers/harness.js';
import { rowName, STDERR_ROWS, TABLE_LIMITS } from '../function/stderr-tail-rows.js';
import { restRow, sessionsOfTail } from './helpers/stderr-tail.js';

describe('the stderr tail through a call dispatched over NATS to a worker', { concurrency: 2 }, () => {
  const prefix = runName('subako_tail');
  const dataDir = tempDir();
  const volumesDir = tempDir('subako-tail-volumes-');
  let api: Api;
  let close: (() => Promise<void>) | undefined;
  let worker: ChildWorker | undefined;
  let sessions: { id: string }[];
  before(async () => {
    worker = await spawnWorker({
      url: SHARED_NATS_URL, prefix, volumesDir, pool: 2, repoRoot: REPO_ROOT,
      env: { ...TEST_KEY, SUBAKO_MEMORY_MIB: String(TABLE_LIMITS.memoryBytes >> 20), SUBAKO_CALL_TIMEOUT_MS: String(TABLE_LIMITS.callTimeoutMs) },
    });
    const { server, firstStart } = await startServer({
      dataDir, port: 0, examplesDir: null, limits: TABLE_LIMITS, env: { ...process.env, ...TEST_KEY },
      nats: { url: SHARED_NATS_URL, prefix }, volumesDir,
    });
    api = makeApi(server.url, firstStart!.apiKey);
    close = () => server.close(5_000);
    sessions = await sessionsOfTail(api, 'tail-nats');
  });
  after(async () => {
    await close?.();
    await worker?.stop();
    await removeBuckets(prefix);
    for (const path of [dataDir, volumesDir]) rmSync(path, { recursive: true, force: true });
  });
  STDERR_ROWS.forEach((row, i) => {
    test(rowName(row), () => restRow(api, sessions[i % 2].id, row));
  });
});
