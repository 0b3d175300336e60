/**
 * Finding 6: no limit on connections. About 20,000 unauthenticated connections trickling header lines filled
 * the server's file-descriptor table, and `/v1/health` was unreachable for 45 s.
 *
 * Bounded here by giving a real `subako serve` a table of 1,024 descriptors (`ulimit -n`) and flooding it with
 * 3,000 loopback connections that trickle header bytes and never end their headers (before the fix, this
 * made the health check fail: the server's accept hit EMFILE). With the limits: the flood's client address
 * gets at most its share of connections (the rest are closed as they arrive), the server holds no more than
 * half its table, `/v1/health` from another address answers during the flood, and the header timeout (one
 * second here) closes every flood connection, the ones that never send a byte included.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { serve, type Served } from './helpers/serve.js';

const FD_LIMIT = 1_024;
const FLOOD = 3_000;
const HEADERS_TIMEOUT_MS = 1_000;
const PER_ADDRESS = 256;

interface Flood {
  sockets: net.Socket[];
  /** Connections the server closed (we never close one before the end). */
  closedByServer(): number;
  end(): void;
}

/** Opens `count` connections from `from`, each sending the start of a request and then, if `trickle`, one more header line now and then. */
async function flood(port: number, from: string, count: number, trickle: boolean): Promise<Flood> {
  const sockets: net.Socket[] = [];
  let closed = 0;
  let ending = false;
  for (let i = 0; i < count; i++) {
    await new Promise<void>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
      // Read (and drop) whatever comes, so the server's end of the connection is seen as it happens: a
      // socket nobody reads may hold its end-of-stream back, and its close with it.
      socket.resume();
      socket.on('connect', () => {
        if (trickle) socket.write('GET /v1/health HTTP/1.1\r\nHost: flood\r\n');
        resolve();
      });
      socket.on('error', () => resolve());
      socket.on('close', () => { if (!ending) closed += 1; });
      sockets.push(socket);
    });
  }
  const timer = trickle
    ? setInterval(() => { for (const s of sockets) if (!s.destroyed) s.write('X-Trickle: 1\r\n'); }, 200)
    : null;
  return {
    sockets,
    closedByServer: () => closed,
    end() {
      ending = true;
      if (timer) clearInterval(timer);
      for (const s of sockets) s.destroy();
    },
  };
}

const openDescriptors = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

async function health(url: string): Promise<number> {
  const response = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(10_000) });
  await response.text();
  return response.status;
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe('a slow-header flood does not keep /v1/health from answering', () => {
  let server: Served;
  let port: number;

  before(async () => {
    server = await serve(['--no-examples', '--workers', '1', '--headers-timeout-ms', String(HEADERS_TIMEOUT_MS)], { fdLimit: FD_LIMIT });
    port = Number(new URL(server.url).port);
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
  });

  it(`3,000 trickling connections from one address: health answers during the flood, and the header timeout closes them all`, async () => {
    const baseline = openDescriptors(server.child.pid!);
    const attack = await flood(port, '127.0.0.2', FLOOD, true);
    try {
      // The flood's address holds its share and no more: the rest were closed as they arrived.
      const held = openDescriptors(server.child.pid!) - baseline;
      assert.ok(held <= PER_ADDRESS + 8, `the flood holds ${held} of the server's descriptors; one address may hold ${PER_ADDRESS}`);
      assert.equal(await health(server.url), 200);
      assert.ok(await until(() => attack.closedByServer() === FLOOD, 15_000), `the server closed ${attack.closedByServer()} of ${FLOOD}`);
    } finally {
      attack.end();
    }
    assert.equal(await health(server.url), 200);
  });

  it('connections that never send a byte are closed by the same timeout', async () => {
    const silent = await flood(port, '127.0.0.3', 100, false);
    try {
      assert.equal(await health(server.url), 200);
      // Each closes a second after it opened; the wait is long only for a machine busy with other tests.
      assert.ok(await until(() => silent.closedByServer() === 100, 30_000), `the server closed ${silent.closedByServer()} of 100`);
    } finally {
      silent.end();
    }
  });

  it('a flood from many addresses fills no more than the connection limit, and the server recovers', async () => {
    const baseline = openDescriptors(server.child.pid!);
    const floods = await Promise.all(['127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'].map((from) => flood(port, from, 200, true)));
    try {
      const held = openDescriptors(server.child.pid!) - baseline;
      assert.ok(held <= FD_LIMIT / 2 + 8, `the flood holds ${held} of the server's descriptors; its connection limit is ${FD_LIMIT / 2}`);
      assert.ok(await until(() => floods.every((f) => f.closedByServer() === 200), 15_000), 'the header timeout closes them');
    } finally {
      for (const f of floods) f.end();
    }
    assert.equal(await health(server.url), 200);
  });
});
