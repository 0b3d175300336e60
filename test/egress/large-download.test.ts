/**
 * A 200 MiB download to /volume/tmp completes with the host's memory flat: the body streams from the
 * socket to the file (backpressure end to end, nothing buffered whole, nothing through guest memory).
 */
import { ENTRY_COST_BYTES } from '../../src/wasi/index.js';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHttpBridge } from '../../src/egress/index.js';
import { callBridge, makeRun, mapLookup } from './helpers/servers.js';
import { makeTestCa } from './helpers/test-ca.js';

const MIB = 1024 * 1024;
const SIZE = 200 * MIB;
/**
 * Growth allowed over the baseline. After a warm-up download the heap has reached its steady size (about
 * 50 MiB of garbage between collections); streaming then costs nothing more, however long the body.
 */
const RSS_GROWTH_LIMIT = 32 * MIB;

let child: ChildProcess;
let port: number;
let volume: string;
const url = (path: string): string => `https://files.example.test:${port}${path}`;

before(async () => {
  const tls = makeTestCa();
  // The server runs in another process: the host's memory then holds only the egress side.
  child = spawn(process.execPath, [join(import.meta.dirname, 'helpers', 'byte-server-process.js')], {
    env: { ...process.env, TEST_CERT: tls.cert, TEST_KEY: tls.key },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
  });
  volume = mkdtempSync(join(tmpdir(), 'subako-egress-large-'));
});
after(() => {
  child.stdin!.end();
  child.kill();
  rmSync(volume, { recursive: true, force: true });
});

describe('large downloads', () => {
  it('200 MiB to /volume/tmp completes with RSS flat and the bytes counted against the write budget', async () => {
    const handler = createHttpBridge({
      policy: { allow: [`files.example.test:${port}`], grants: [], privateDestinations: 'allow' },
      credentials: [],
      volume: [{ guestPath: '/volume/tmp', hostPath: volume }],
      ca: makeTestCa().ca,
      log: [],
      lookup: mapLookup({ 'files.example.test': '127.0.0.1' }),
    });
    // Warm up TLS, the code paths and the heap's steady size so the baseline includes them.
    await callBridge(handler, { url: url(`/bytes?n=${64 * MIB}`), output: { type: 'file', path: '/volume/tmp/warm.bin' } }, makeRun({ remainingMs: 60_000 }));
    globalThis.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    const run = makeRun({ remainingMs: 120_000 });
    try {
      const answer = await callBridge(
        handler,
        { url: url(`/bytes?n=${SIZE}`), output: { type: 'file', path: '/volume/tmp/big/download.bin' } },
        run,
      );
      assert.deepEqual(answer.ok?.body, { type: 'file', path: '/volume/tmp/big/download.bin', bytes: SIZE }, JSON.stringify(answer));
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    assert.equal(statSync(join(volume, 'big', 'download.bin')).size, SIZE);
    assert.equal(run.writeBudget.used(), SIZE + 2 * ENTRY_COST_BYTES, 'the bytes, and the directory and file made (entries)');
    const growth = peak - baseline;
    assert.ok(growth < RSS_GROWTH_LIMIT, `RSS grew by ${(growth / MIB).toFixed(1)} MiB while downloading ${SIZE / MIB} MiB`);
  });
});
