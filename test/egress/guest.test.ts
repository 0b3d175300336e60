/**
 * subako_http from a real C guest (test/fixtures/c/egress/http_probe.c) run through SandboxPool with the
 * egress bridge: the answer the guest prints, the ABI misuse codes, a file output that never passes through
 * guest memory, and a credential that reaches its server but never the guest's memory or output.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHttpBridge, type EgressLogEntry, type HttpBridgeOptions } from '../../src/egress/index.js';
import { SandboxPool } from '../../src/sandbox/pool.js';
import type { CompiledModule, RunLimits } from '../../src/sandbox/types.js';
import { fixture } from '../helpers/paths.js';
import { testRoutes } from './helpers/routes.js';
import { mapLookup, startServer, type Route, type TestServer } from './helpers/servers.js';
import { makeTestCa } from './helpers/test-ca.js';

const MIB = 1024 * 1024;
const SECRET_TOKEN = 'vault-secret-4b1d7e2a9c';
const MARKER = 'answer-marker-5e3f0a';

let pool: SandboxPool;
let probe: CompiledModule;
let server: TestServer;
let volume: string;
let origin: string;

const routes: Route = (req, res, arrival) => {
  if (req.url === '/marker') {
    res.setHeader('content-type', 'text/plain');
    res.end(MARKER);
    return;
  }
  return testRoutes(req, res, arrival);
};

before(async () => {
  pool = new SandboxPool({ size: 1 });
  probe = await pool.compile(readFileSync(fixture('c', 'egress', 'http_probe.wasm')), { memoryBytes: 64 * MIB });
  server = await startServer(routes);
  origin = `https://api.example.test:${server.port}`;
  volume = mkdtempSync(join(tmpdir(), 'subako-egress-guest-'));
});
after(async () => {
  await pool.close();
  await server.close();
  rmSync(volume, { recursive: true, force: true });
});

function bridgeOptions(log: EgressLogEntry[]): HttpBridgeOptions {
  return {
    policy: { allow: [`api.example.test:${server.port}`], grants: [origin], privateDestinations: 'allow' },
    credentials: [{ origin, headers: { authorization: `Bearer ${SECRET_TOKEN}` } }],
    volume: [{ guestPath: '/volume/tmp', hostPath: volume }],
    ca: makeTestCa().ca,
    log,
    lookup: mapLookup({ 'api.example.test': '127.0.0.1' }),
  };
}

const limits: RunLimits = { timeoutMs: 20_000, memoryBytes: 64 * MIB, stdoutBytes: MIB, stderrTailBytes: 4096, writeBudgetBytes: 1024 * MIB };

async function runProbe(stdin: string, args: string[] = [], log: EgressLogEntry[] = []): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const handle = pool.run(probe, {
    args: ['http_probe', ...args],
    env: [],
    preopens: [{ guestPath: '/volume/tmp', hostPath: volume, readOnly: false }],
    limits,
    stdin: Buffer.from(stdin),
    onStdout: (chunk) => out.push(Buffer.from(chunk)),
    onStderr: (chunk) => err.push(Buffer.from(chunk)),
    bridge: { http: createHttpBridge(bridgeOptions(log)) },
  });
  handle.closeStdin();
  const result = await handle.result;
  return {
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
    code: result.outcome.kind === 'exit' ? result.outcome.code : null,
  };
}

describe('subako_http from a C guest', () => {
  it('the guest reads the answer it was sent, and the credential reaches the server', async () => {
    const before = server.arrivals.length;
    const log: EgressLogEntry[] = [];
    const run = await runProbe(JSON.stringify({ url: `${origin}/marker` }), [], log);
    assert.equal(run.code, 0, run.stderr);
    const answer = JSON.parse(run.stdout);
    assert.equal(answer.ok.status, 200);
    assert.deepEqual(answer.ok.body, { type: 'inline', text: MARKER });
    assert.equal(server.arrivals[before].headers.authorization, `Bearer ${SECRET_TOKEN}`);
    assert.deepEqual(log.map((e) => [e.url, e.status]), [[`${origin}/marker`, 200]]);
  });

  it("the credential value never appears in the guest's memory, output or the log", async () => {
    const log: EgressLogEntry[] = [];
    const run = await runProbe(JSON.stringify({ url: `${origin}/marker`, headers: { accept: 'text/plain' } }), ['dump'], log);
    assert.equal(run.code, 0, run.stderr);
    const memory = readFileSync(join(volume, 'memory.bin'));
    assert.ok(memory.length >= 65536);
    assert.ok(memory.includes(MARKER), 'the dump is the memory that held the answer');
    assert.ok(!memory.includes(SECRET_TOKEN), 'the secret is not in guest memory');
    assert.ok(!run.stdout.includes(SECRET_TOKEN) && !run.stderr.includes(SECRET_TOKEN));
    assert.ok(!JSON.stringify(log).includes(SECRET_TOKEN));
  });

  it('a guest that sets the credential header itself gets credential_header', async () => {
    const run = await runProbe(JSON.stringify({ url: `${origin}/marker`, headers: { authorization: 'Bearer guess' } }));
    assert.equal(JSON.parse(run.stdout).error.kind, 'credential_header');
  });

  it('a file output lands in the volume without passing through the guest', async () => {
    const run = await runProbe(JSON.stringify({ url: `${origin}/bytes?n=3000000`, output: { type: 'file', path: '/volume/tmp/dl/blob.bin' } }));
    assert.deepEqual(JSON.parse(run.stdout).ok.body, { type: 'file', path: '/volume/tmp/dl/blob.bin', bytes: 3_000_000 });
    assert.ok(readFileSync(join(volume, 'dl', 'blob.bin')).equals(Buffer.alloc(3_000_000, 0x61)));
  });

  it('the ABI misuse codes: -2 nothing held, -1 a range outside memory, -3 a length that does not match', async () => {
    const run = await runProbe(`MISUSE${JSON.stringify({ url: `${origin}/quiet` })}`);
    assert.equal(run.stdout.trim(), 'nothing_held=-2 out_of_range=-1 length_mismatch=-3 ok=0');
  });
});
