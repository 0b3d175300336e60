/**
 * Finding 1 (critical): a `subako_http` file body or output on a path whose directory a second call of the
 * same session swaps for a relative symlink (`d -> ../../..`) in the gap between the check and the open.
 * The attack runs for real: a racer thread renames `/volume/tmp/d` between a real directory and the link
 * while requests read `/volume/tmp/d/secret.txt` and write `/volume/tmp/d/out.bin` through the egress
 * bridge, against a real loopback HTTPS server, and then from a real guest's `subako_http` calls. On the
 * code before the fix the read leaked the host's secret within 11-218 tries (under a second) and the write
 * escaped within 3-5; now no byte leaves and nothing appears outside, over many more tries than that took.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FunctionHost } from '../../src/function/host.js';
import { probe } from '../function/guests.js';
import { callBridge, makeRun, startServer, type TestServer } from '../egress/helpers/servers.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { startSwapRacer } from './helpers/swap-racer.js';
import { volumeBridge } from './helpers/volume-bridge.js';

const HOST_SECRET = 'HOST-SECRET-8d1f0c5b7a';
const INSIDE = 'inside-the-volume';
const MARKER = 'downloaded-marker';
/** Tries per attack; the code before the fix gave in after a few dozen reads and the first write. */
const TRIES = 600;
/** Requests in flight at once, as several calls of one session would make them. */
const PARALLEL = 4;
/** Calls of the real guest (each one request), half reading and half writing. */
const GUEST_CALLS = 200;
/** A hang guard per attack, not a margin: the count ends an attack (three attacks stay within the file's ceiling). */
const TIME_BOUND_MS = 80_000;

let base: string;
let tmp: string;
let server: TestServer;

before(async () => {
  // base/secret.txt is the host file; base/vol/ses/tmp is the volume, so `../../..` from tmp is base.
  base = mkdtempSync(join(tmpdir(), 'subako-hostile-race-'));
  writeFileSync(join(base, 'secret.txt'), HOST_SECRET);
  tmp = join(base, 'vol', 'ses', 'tmp');
  mkdirSync(tmp, { recursive: true });
  server = await startServer((req, res) => {
    res.end(req.url === '/marker' ? MARKER : 'ok');
  });
});
after(async () => {
  await server.close();
  rmSync(base, { recursive: true, force: true });
});

const bridge = () => volumeBridge(tmp, server.port);

interface Tally {
  tries: number;
  ok: number;
  refused: number;
  firstBreach: number | null;
  ms: number;
}

/** Runs `attempt` TRIES times, PARALLEL at once, within the time bound; `attempt` says whether it breached. */
async function attack(attempt: (n: number) => Promise<'ok' | 'refused' | 'breach'>): Promise<Tally> {
  const tally: Tally = { tries: 0, ok: 0, refused: 0, firstBreach: null, ms: 0 };
  const started = Date.now();
  let next = 0;
  async function lane(): Promise<void> {
    while (next < TRIES && Date.now() - started < TIME_BOUND_MS) {
      const n = ++next;
      const outcome = await attempt(n);
      tally.tries++;
      if (outcome === 'ok') tally.ok++;
      else if (outcome === 'refused') tally.refused++;
      else tally.firstBreach ??= n;
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, lane));
  tally.ms = Date.now() - started;
  return tally;
}

describe('finding 1: a directory swapped for a relative symlink during a file body or output', () => {
  it('a file body never sends a byte of a host file', async () => {
    const handler = bridge();
    const racer = await startSwapRacer({ parent: tmp, name: 'd', linkTarget: '../../..', files: { 'secret.txt': INSIDE } });
    let tally: Tally;
    let cycles: number;
    try {
      tally = await attack(async () => {
        const before = server.arrivals.length;
        const answer = await callBridge(handler, {
          method: 'POST', url: server.url('api.example.test', '/sink'), body: { type: 'file', path: '/volume/tmp/d/secret.txt' },
        }, makeRun());
        const sent = server.arrivals.slice(before).map((a) => a.body.toString('utf8'));
        if (sent.some((body) => body.includes(HOST_SECRET))) return 'breach';
        if (answer.ok) return 'ok';
        assert.equal(answer.error?.kind, 'bad_path', JSON.stringify(answer));
        return 'refused';
      });
    } finally {
      cycles = await racer.stop();
    }
    const all = server.arrivals.map((a) => a.body.toString('utf8'));
    assert.equal(all.some((body) => body.includes(HOST_SECRET)), false,
      `the host secret was sent (first at try ${tally.firstBreach} of ${tally.tries}, ${tally.ms} ms)`);
    // The race was really contested: honest reads went through and swapped states were refused.
    assert.ok(tally.ok > 0 && tally.refused > 0, `ok ${tally.ok}, refused ${tally.refused}, racer cycles ${cycles}`);
    assert.ok(tally.tries >= 200, `only ${tally.tries} tries in ${tally.ms} ms`);
    console.log(`# file body: ${tally.tries} tries in ${tally.ms} ms (${tally.ok} ok, ${tally.refused} refused), ${cycles} swaps`);
  });

  it('an output never creates or writes a file outside the volume', async () => {
    const handler = bridge();
    const racer = await startSwapRacer({ parent: tmp, name: 'd', linkTarget: '../../..', clearStray: true });
    const escaped = join(base, 'out.bin');
    let tally: Tally;
    let cycles: number;
    try {
      tally = await attack(async () => {
        const answer = await callBridge(handler, {
          url: server.url('api.example.test', '/marker'), output: { type: 'file', path: '/volume/tmp/d/out.bin' },
        }, makeRun());
        if (existsSync(escaped)) return 'breach';
        if (answer.ok) return 'ok';
        assert.equal(answer.error?.kind, 'bad_path', JSON.stringify(answer));
        return 'refused';
      });
    } finally {
      cycles = await racer.stop();
    }
    assert.equal(existsSync(escaped), false,
      `a file appeared outside the volume (first at try ${tally.firstBreach} of ${tally.tries}, ${tally.ms} ms)`);
    assert.ok(tally.ok > 0 && tally.refused > 0, `ok ${tally.ok}, refused ${tally.refused}, racer cycles ${cycles}`);
    assert.ok(tally.tries >= 200, `only ${tally.tries} tries in ${tally.ms} ms`);
    console.log(`# output: ${tally.tries} tries in ${tally.ms} ms (${tally.ok} ok, ${tally.refused} refused), ${cycles} swaps`);
  });

  it('from a real guest: its file bodies and outputs, racing its own swaps, never reach outside', async () => {
    const host = new FunctionHost({ poolSize: 2, limits: { callTimeoutMs: 10_000, memoryBytes: 64 << 20 } });
    const racer = await startSwapRacer({ parent: tmp, name: 'g', linkTarget: '../../..', files: { 'secret.txt': INSIDE }, clearStray: true });
    const escaped = join(base, 'out.bin');
    const egress = {
      allow: [`localhost:${server.port}`], grants: [], credentials: [], privateDestinations: 'allow' as const, ca: makeTestCa().ca,
    };
    const before = server.arrivals.length;
    let calls = 0;
    let cycles: number;
    try {
      const loaded = await host.load(probe());
      const started = Date.now();
      const lane = async (): Promise<void> => {
        while (calls < GUEST_CALLS && Date.now() - started < TIME_BOUND_MS) {
          calls++;
          const request = calls % 2 === 0
            ? { method: 'POST', url: server.url('localhost', '/sink'), body: { type: 'file', path: '/volume/tmp/g/secret.txt' } }
            : { url: server.url('localhost', '/marker'), output: { type: 'file', path: '/volume/tmp/g/out.bin' } };
          const outcome = await host.call(loaded, 'http', { request }, { tmpDir: tmp, egress });
          assert.equal(outcome.status, 'ok', JSON.stringify(outcome.crash));
        }
      };
      await Promise.all([lane(), lane()]);
    } finally {
      cycles = await racer.stop();
      await host.close();
    }
    const sent = server.arrivals.slice(before).map((a) => a.body.toString('utf8'));
    assert.equal(sent.some((body) => body.includes(HOST_SECRET)), false, 'the host secret was sent');
    assert.equal(existsSync(escaped), false, 'a file appeared outside the volume');
    assert.ok(sent.length > 0 && cycles > 0, `${sent.length} requests arrived, racer cycles ${cycles}`);
    console.log(`# guest: ${calls} calls, ${sent.length} requests arrived, ${cycles} swaps`);
  });
});
