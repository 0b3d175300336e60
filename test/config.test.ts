import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { defaultServerConfig, oauthDoorOf, readConfigFile, resolveServerConfig } from '../src/config.js';
import { ValidationError } from '../src/errors.js';
import { REPO_ROOT } from './helpers/paths.js';
import { serverStartOptions } from '../src/app.js';

const defaults = defaultServerConfig('/home/someone');
const flagNames = { port: '--port', workers: '--workers' };

describe('configuration: flags over environment over subako.config.json over defaults', () => {
  test('defaults alone', () => {
    const config = resolveServerConfig({ defaults });
    assert.equal(config.port, 7070);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.callTimeoutMs, 30_000);
    assert.equal(config.examples, true);
  });

  test('each source wins over the ones before it, key by key', () => {
    const config = resolveServerConfig({
      defaults,
      file: { path: 'subako.config.json', input: { port: 8000, host: '0.0.0.0', workers: 3, memoryMiB: 256 } },
      env: { SUBAKO_PORT: '8001', SUBAKO_WORKERS: '5' },
      flags: { input: { port: 8002, workers: undefined }, names: flagNames },
    });
    assert.deepEqual([config.port, config.host, config.workers, config.memoryMiB], [8002, '0.0.0.0', 5, 256]);
  });

  test('every bad setting is reported at once, naming where it came from and what it takes', () => {
    assert.throws(
      () => resolveServerConfig({
        defaults,
        file: { path: '/etc/subako.config.json', input: { port: 'eighty', colour: 'blue' } },
        env: { SUBAKO_CALL_TIMEOUT_MS: '5' },
        flags: { input: { workers: 0 }, names: flagNames },
      }),
      (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.deepEqual(err.problems.map((p) => p.message), [
          '"port" in /etc/subako.config.json is "eighty"; it takes a whole number from 0 to 65535',
          '"colour" in /etc/subako.config.json is not a setting; known settings: port, host, dataDir, workers, examples, accessLog, allowedOrigins, publicUrl, oauthIssuer, oauthAudience, oauthJwksUrl, ' +
            'oauthScope, oauthUserClaim, oauthUnknownUsers, callTimeoutMs, memoryMiB, ' +
            'sessionConcurrency, sessionQueue, agentConcurrency, agentQueue, maxConnections, maxConnectionsPerAddress, headersTimeoutMs, ' +
            'requestTimeoutMs, keepAliveTimeoutMs, sessionVolumeMiB, agentVolumeMiB, sandboxHeapMiB, instanceLeaseMs, callRecordDelayMs, remoteAnswerMiB, taskTtlMs, taskPollIntervalMs, sessionTaskLimit, allowPrivateDestinations, database, nats, natsPrefix, volumesDir, worker',
          'SUBAKO_CALL_TIMEOUT_MS is 5; it takes a whole number from 100 to 3600000',
          '--workers is 0; it takes a whole number from 1 to 256',
        ]);
        return true;
      },
    );
  });

  test('the fairness and connection limits come from the file, the environment and the flags, and are checked', () => {
    const config = resolveServerConfig({
      defaults,
      file: { path: 'subako.config.json', input: { sessionConcurrency: 2, agentQueue: 10, headersTimeoutMs: 4000 } },
      env: { SUBAKO_SESSION_QUEUE: '3', SUBAKO_MAX_CONNECTIONS_PER_ADDRESS: '0', SUBAKO_HEADERS_TIMEOUT_MS: '5000' },
      flags: { input: { maxConnections: 900 }, names: { maxConnections: '--max-connections' } },
    });
    assert.deepEqual(
      [config.sessionConcurrency, config.sessionQueue, config.agentQueue, config.maxConnections, config.maxConnectionsPerAddress, config.headersTimeoutMs],
      [2, 3, 10, 900, 0, 5000],
    );
    // Unset limits stay unset: the server sizes them (from the workers, from the open-file limit).
    assert.equal(resolveServerConfig({ defaults }).sessionConcurrency, undefined);
    assert.throws(
      () => resolveServerConfig({ defaults, env: { SUBAKO_SESSION_CONCURRENCY: '0', SUBAKO_KEEP_ALIVE_TIMEOUT_MS: 'soon' } }),
      (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.deepEqual(err.problems.map((p) => p.message), [
          'SUBAKO_SESSION_CONCURRENCY is 0; it takes a whole number from 1 to 1024',
          'SUBAKO_KEEP_ALIVE_TIMEOUT_MS is "soon"; it takes a whole number from 100 to 3600000',
        ]);
        return true;
      },
    );
  });

  test('a public URL must be an http(s) URL without query or fragment', () => {
    assert.equal(resolveServerConfig({ defaults, env: { SUBAKO_PUBLIC_URL: 'https://tools.example.com' } }).publicUrl, 'https://tools.example.com');
    assert.throws(() => resolveServerConfig({ defaults, env: { SUBAKO_PUBLIC_URL: 'ftp://x' } }), /SUBAKO_PUBLIC_URL is "ftp:\/\/x"; it takes an http\(s\) URL/);
  });

  test('OAuth at the door is off unless set; on with issuer, audience and keys, its defaults sub and refuse', () => {
    assert.equal(oauthDoorOf(resolveServerConfig({ defaults })), undefined);
    const config = resolveServerConfig({
      defaults,
      env: { SUBAKO_OAUTH_ISSUER: 'https://login.example.com/', SUBAKO_OAUTH_AUDIENCE: 'https://tools.example.com/mcp', SUBAKO_OAUTH_SCOPE: 'mcp:tools  profile' },
      file: { path: 'subako.config.json', input: { oauthJwksUrl: 'https://login.example.com/jwks.json' } },
    });
    assert.deepEqual(oauthDoorOf(config), {
      issuer: 'https://login.example.com/', audience: 'https://tools.example.com/mcp', jwksUrl: 'https://login.example.com/jwks.json',
      scopes: ['mcp:tools', 'profile'], userClaim: 'sub', unknownUsers: 'refuse',
    });
    const creating = resolveServerConfig({ defaults, flags: { input: { oauthUnknownUsers: 'create', oauthUserClaim: 'email' }, names: {} } });
    assert.deepEqual([creating.oauthUnknownUsers, creating.oauthUserClaim], ['create', 'email']);
  });

  test('OAuth at the door set half-way is refused in one line naming what is missing; a wrong mode or scope names what is taken', () => {
    const halfway = resolveServerConfig({ defaults, env: { SUBAKO_OAUTH_ISSUER: 'https://login.example.com/' } });
    assert.throws(() => oauthDoorOf(halfway), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.equal(err.problems.length, 1);
      assert.match(err.problems[0].message, /^OAuth at the door needs oauthIssuer, oauthAudience and oauthJwksUrl together: oauthIssuer set, oauthAudience and oauthJwksUrl not \(--oauth-audience .*SUBAKO_OAUTH_JWKS_URL.*\)$/);
      assert.doesNotMatch(err.problems[0].message, /\n/);
      return true;
    });
    assert.throws(() => resolveServerConfig({ defaults, env: { SUBAKO_OAUTH_UNKNOWN_USERS: 'allow' } }), /SUBAKO_OAUTH_UNKNOWN_USERS is "allow"; it takes "refuse" or "create"/);
    assert.throws(() => resolveServerConfig({ defaults, env: { SUBAKO_OAUTH_SCOPE: 'a "b"' } }), /SUBAKO_OAUTH_SCOPE is .*; it takes scopes separated by spaces/);
  });

  test('a missing default file is no error; a named file that is missing or not JSON is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'subako-config-'));
    try {
      assert.equal(readConfigFile(undefined, dir), undefined);
      assert.throws(() => readConfigFile('nope.json', dir), /cannot be read/);
      writeFileSync(join(dir, 'subako.config.json'), '{"port": 9}');
      assert.deepEqual(readConfigFile(undefined, dir)?.input, { port: 9 });
      writeFileSync(join(dir, 'bad.json'), '[1]');
      assert.throws(() => readConfigFile('bad.json', dir), /must hold a JSON object/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a default file that is there but cannot be read is refused, naming why, not taken for absent', () => {
    const dir = mkdtempSync(join(tmpdir(), 'subako-config-'));
    try {
      // A directory where the file should be: readFileSync fails with EISDIR (as root too, unlike a chmod).
      mkdirSync(join(dir, 'subako.config.json'));
      assert.throws(
        () => readConfigFile(undefined, dir),
        (error: unknown) => error instanceof ValidationError && /subako\.config\.json cannot be read \(EISDIR\)/.test(error.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('subako serve refuses a bad setting in one line, exit status 1, before starting anything', () => {
    const run = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'serve', '--port', 'eighty'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /--port is "eighty"; it takes a whole number from 0 to 65535/);
    const limit = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'serve', '--session-queue', 'many'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(limit.status, 1);
    assert.match(limit.stderr, /--session-queue is "many"; it takes a whole number from 0 to 10000/);
  });

  test('the cap on a remote MCP server\'s answer comes from the file, the environment or the flag, is checked, and is in serve --help', () => {
    assert.equal(resolveServerConfig({ defaults }).remoteAnswerMiB, undefined, 'unset: the pool\'s 8 MiB');
    assert.equal(resolveServerConfig({ defaults, file: { path: 'subako.config.json', input: { remoteAnswerMiB: 16 } } }).remoteAnswerMiB, 16);
    assert.equal(resolveServerConfig({ defaults, env: { SUBAKO_REMOTE_ANSWER_MIB: '32' } }).remoteAnswerMiB, 32);
    const flagged = resolveServerConfig({
      defaults, env: { SUBAKO_REMOTE_ANSWER_MIB: '32' }, flags: { input: { remoteAnswerMiB: 64 }, names: { remoteAnswerMiB: '--remote-answer-mib' } },
    });
    assert.equal(flagged.remoteAnswerMiB, 64);
    assert.throws(() => resolveServerConfig({ defaults, env: { SUBAKO_REMOTE_ANSWER_MIB: '0' } }), /SUBAKO_REMOTE_ANSWER_MIB is 0; it takes a whole number from 1 to 1024/);
    const bad = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'serve', '--remote-answer-mib', '4096'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /--remote-answer-mib is 4096; it takes a whole number from 1 to 1024/);
    const help = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'serve', '--help'], { encoding: 'utf8', timeout: 120_000 });
    assert.match(help.stdout.replace(/\s+/g, ' '), /--remote-answer-mib <n> the most read of one message a remote MCP server answers; past it the call fails \(default 8 MiB\); \$SUBAKO_REMOTE_ANSWER_MIB/);
  });

  test('the tasks\' time to live, poll interval and per-session cap come from the file, the environment or the flags, are checked, and reach the platform', () => {
    const unset = resolveServerConfig({ defaults });
    assert.deepEqual([unset.taskTtlMs, unset.taskPollIntervalMs, unset.sessionTaskLimit], [undefined, undefined, undefined], 'unset: the platform\'s defaults');
    assert.deepEqual(serverStartOptions(unset).tasks, {});
    const config = resolveServerConfig({
      defaults, file: { path: 'subako.config.json', input: { taskTtlMs: 60_000 } }, env: { SUBAKO_TASK_POLL_INTERVAL_MS: '250' },
      flags: { input: { sessionTaskLimit: 4 }, names: { sessionTaskLimit: '--session-task-limit' } },
    });
    assert.deepEqual(serverStartOptions(config).tasks, { ttlMs: 60_000, pollIntervalMs: 250, sessionTaskLimit: 4 });
    assert.throws(() => resolveServerConfig({ defaults, env: { SUBAKO_SESSION_TASK_LIMIT: '0' } }), /SUBAKO_SESSION_TASK_LIMIT is 0; it takes a whole number from 1 to 10000/);
    assert.throws(() => resolveServerConfig({ defaults, env: { SUBAKO_TASK_POLL_INTERVAL_MS: '5' } }), /SUBAKO_TASK_POLL_INTERVAL_MS is 5; it takes a whole number from 50 to 60000/);
  });
});
