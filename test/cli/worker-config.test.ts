/**
 * `subako worker` refuses a start it cannot make good in one line on stderr, exit status 1, before it
 * connects to anything: a bad setting in the config file (named by file and key), a missing NATS URL, a
 * missing or malformed SUBAKO_SECRET_KEY; and never shows a NATS URL's password.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_KEY } from '../server/helpers/harness.js';
import { runCli } from './helpers/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'subako-worker-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const PASSWORD = 'worker-pass-never-shown';
// No SUBAKO_ setting of the parent reaches the command; each test gives its own.
const env = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  SUBAKO_HOME: dir, SUBAKO_NATS_URL: '', SUBAKO_NATS_PREFIX: '', SUBAKO_WORKERS: '', SUBAKO_SECRET_KEY: '', ...extra,
});

function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line, not: ${stderr}`);
  return lines[0];
}

describe('subako worker: refusals at start', () => {
  test('a bad value in --config FILE: exit 1, one line naming the file and the key, the URL not shown', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ nats: `http://subako:${PASSWORD}@nats:4222`, port: 7070, worker: { pool: 0 } }));
    const run = await runCli(['worker', '--config', file], env(TEST_KEY));
    assert.equal(run.status, 1);
    assert.equal(oneLine(run.stderr),
      `subako worker: cannot start: "nats" in ${file} is not valid (its value is not shown); it takes a nats:// (or tls://) URL; ` +
      `"worker.pool" in ${file} is 0; it takes a whole number from 1 to 256`);
    assert.doesNotMatch(run.stderr + run.stdout, new RegExp(PASSWORD));
  });

  test('no NATS URL anywhere: exit 1, one line naming the three places it may be given', async () => {
    const run = await runCli(['worker'], env({ ...TEST_KEY, SUBAKO_HOME: join(dir, 'none') }));
    assert.equal(run.status, 1);
    assert.equal(oneLine(run.stderr), 'subako worker: cannot start: the NATS server the API replicas use is not set; give --nats URL, $SUBAKO_NATS_URL, or "nats" in subako.config.json');
  });

  test('no SUBAKO_SECRET_KEY: exit 1, one line saying where the replicas\' key is; a malformed one is named too', async () => {
    const missing = await runCli(['worker', '--nats', 'nats://127.0.0.1:4222', '--data-dir', join(dir, 'w')], env({}));
    assert.equal(missing.status, 1);
    assert.equal(oneLine(missing.stderr),
      "subako worker: cannot start: SUBAKO_SECRET_KEY is not set; give every worker the API replicas' sealing key: their SUBAKO_SECRET_KEY, or the base64 line of secret.key in serve's data directory");
    const malformed = await runCli(['worker', '--nats', 'nats://127.0.0.1:4222'], env({ SUBAKO_SECRET_KEY: 'c2hvcnQ=' }));
    assert.equal(malformed.status, 1);
    assert.match(oneLine(malformed.stderr), /^subako worker: cannot start: SUBAKO_SECRET_KEY must hold the base64 encoding of exactly 32 bytes: the same key as the API replicas'$/);
  });

  test('a NATS server that is not there: exit 1, one line without the URL\'s password', async () => {
    const run = await runCli(['worker', '--nats', `nats://subako:${PASSWORD}@127.0.0.1:1`], env(TEST_KEY));
    assert.equal(run.status, 1);
    assert.match(oneLine(run.stderr), /^subako worker: cannot start: cannot reach the NATS server at nats:\/\/127\.0\.0\.1:1 \(.*\); start it with JetStream/);
    assert.doesNotMatch(run.stderr, new RegExp(PASSWORD));
  });
});
