/**
 * `subako serve` that cannot start says why in one line naming the setting and how to change it, exits 1,
 * and shows a stack only with --debug. A first start that fails on a taken port creates no admin key: the
 * next start, on a free port, prints one that works.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../cli/helpers/run-cli.js';
import { TEST_KEY, spawnServe, tempDir } from './helpers/harness.js';

const oneLine = (text: string): void => assert.equal(text.trimEnd().split('\n').length, 1, `one line: ${text}`);
const noStack = (text: string): void => assert.doesNotMatch(text, /^\s+at /m, 'no stack trace');

describe('start-up errors', () => {
  it('a first start on a taken port exits 1 with one line; the next start on a free port prints a key that works', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;
    const dataDir = tempDir();
    try {
      const run = await runCli(['serve', '--port', String(port), '--data-dir', dataDir, '--workers', '1'], TEST_KEY);
      assert.equal(run.status, 1);
      oneLine(run.stderr);
      noStack(run.stderr);
      assert.equal(
        run.stderr,
        `subako serve: cannot start: port ${port} on 127.0.0.1 is already in use by another program; choose another with --port ` +
          '(or SUBAKO_PORT, or "port" in subako.config.json), or stop what holds it\n',
      );
      assert.doesNotMatch(run.stdout, /sk_/, 'no key was shown');
    } finally {
      holder.close();
    }
    const next = await spawnServe(dataDir);
    try {
      assert.match(next.stdout(), /First start: an admin API key was created/);
      assert.equal((await next.call('GET', '/v1/agents')).status, 200, 'the key printed by the second start works');
      assert.equal((await next.call('GET', '/v1/keys')).body.items.length, 1, 'the failed start created no key');
    } finally {
      next.child.kill('SIGTERM');
      await next.exited;
    }
  });

  it('a data directory that cannot be used is named with its setting; --debug adds the stack', async () => {
    const file = join(tempDir(), 'not-a-directory');
    writeFileSync(file, 'a file where the data directory should be');
    const run = await runCli(['serve', '--port', '0', '--data-dir', file, '--workers', '1'], TEST_KEY);
    assert.equal(run.status, 1);
    oneLine(run.stderr);
    noStack(run.stderr);
    assert.match(run.stderr, new RegExp(`^subako serve: cannot start: the data directory ${file} cannot be used \\((ENOTDIR|EEXIST) on ${file}[^)]*\\); point --data-dir \\(or SUBAKO_DATA_DIR, or "dataDir" in subako.config.json\\) at a directory this user can read and write\\n$`));
    const debug = await runCli(['serve', '--port', '0', '--data-dir', file, '--workers', '1', '--debug'], TEST_KEY);
    assert.equal(debug.status, 1);
    assert.match(debug.stderr, /^subako serve: cannot start: the data directory /);
    assert.match(debug.stderr, /^\s+at /m, 'the stack follows with --debug');
  });

  it('a bad value in the config file is named with the file, in one line', async () => {
    const dir = tempDir();
    const config = join(dir, 'subako.config.json');
    writeFileSync(config, JSON.stringify({ port: 'eighty', workers: 1 }));
    const run = await runCli(['serve', '--config', config, '--data-dir', join(dir, 'data')], TEST_KEY);
    assert.equal(run.status, 1);
    oneLine(run.stderr);
    noStack(run.stderr);
    assert.match(run.stderr, /^subako serve: cannot start: a setting is not valid: .*port.*"eighty"/);
    assert.ok(run.stderr.includes(config) || run.stderr.includes('subako.config.json'), run.stderr);
  });

  it('an OTLP protocol subako does not export in (grpc) stops the start in one line saying what to set', async () => {
    const dir = tempDir();
    const run = await runCli(['serve', '--port', '0', '--data-dir', join(dir, 'data'), '--workers', '1'], {
      ...TEST_KEY, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    assert.equal(run.status, 1);
    oneLine(run.stderr);
    noStack(run.stderr);
    assert.equal(run.stderr, 'subako serve: cannot start: OTEL_EXPORTER_OTLP_PROTOCOL="grpc" is not an OTLP protocol subako exports in: ' +
      'set http/protobuf (the default) or http/json, with the endpoint at the collector\'s OTLP/HTTP port (4318 by default)\n');
    assert.doesNotMatch(run.stdout, /sk_/, 'no key was shown');
  });
});

