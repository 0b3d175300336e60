import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, fixture } from '../helpers/paths.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';
import { startServer, type TestServer } from '../egress/helpers/servers.js';

const PROBE = fixture('c', 'mcp', 'abi_probe.wasm');
const SECRET = 'Bearer cli-secret-7f3a9c21';
let server: TestServer;
let scratch: string;
let caFile: string;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'subako-cli-egress-'));
  caFile = join(scratch, 'ca.pem');
  writeFileSync(caFile, makeTestCa().ca);
  server = await startServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, authorized: req.headers.authorization === SECRET }));
  });
});
after(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs `subako call` as a real process that trusts the test CA the way users add one: NODE_EXTRA_CA_CERTS. */
function subako(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), ...args], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const request = (path: string) => JSON.stringify({ request: { url: server.url('localhost', path) } });
const answerOf = (out: { model: { text: string }[] }) => JSON.parse(out.model[0].text);

describe('subako call with an egress policy', () => {
  test('without an allowlist the function reaches nothing: host_not_allowed, and the log says so', async () => {
    const run = await subako('call', PROBE, 'http', request('/a'), '--json');
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.equal(answerOf(out).error.kind, 'host_not_allowed');
    assert.equal(server.arrivals.length, 0);
  });

  test('--allow admits the host, but loopback stays forbidden without --allow-private-destinations', async () => {
    const run = await subako('call', PROBE, 'http', request('/b'), '--json', '--allow', `localhost:${server.port}`);
    const out = JSON.parse(run.stdout);
    assert.equal(answerOf(out).error.kind, 'forbidden_destination');
    assert.equal(server.arrivals.length, 0);
  });

  test('--policy FILE gives allow, grants and vault; the credential reaches the server, never the output', async () => {
    const policy = join(scratch, 'policy.json');
    writeFileSync(policy, JSON.stringify({
      allow: [`localhost:${server.port}`],
      grants: [`https://localhost:${server.port}`],
      vault: [{ origin: `https://localhost:${server.port}`, headers: { authorization: SECRET } }],
      privateDestinations: 'allow',
    }));
    const run = await subako('call', PROBE, 'http', request('/c?q=1'), '--json', '--policy', policy);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    const answer = answerOf(out);
    assert.equal(answer.ok.status, 200);
    assert.deepEqual(JSON.parse(answer.ok.body.text), { path: '/c?q=1', authorized: true });
    assert.equal(out.egress.length, 1);
    assert.equal(out.egress[0].method, 'GET');
    assert.equal(out.egress[0].url, server.url('localhost', '/c?q=1'));
    assert.equal(out.egress[0].status, 200);
    assert.ok(!run.stdout.includes('cli-secret') && !run.stderr.includes('cli-secret'));
  });

  test('a policy file that is not valid is a usage error naming the problem', async () => {
    const policy = join(scratch, 'bad-policy.json');
    writeFileSync(policy, JSON.stringify({ allow: 'everything', vault: [{ origin: 'x', headers: { authorization: SECRET } }] }));
    const run = await subako('call', PROBE, 'http', request('/d'), '--policy', policy);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /allow must be an array of strings/);
    assert.ok(!run.stderr.includes('cli-secret'));
  });
});
