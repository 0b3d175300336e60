/**
 * The scale-out settings (`nats`, `natsPrefix`, `volumesDir`) of `subako serve`, and `subako worker`'s whole
 * resolution: flags over environment over the deployment's one `subako.config.json` (its top-level shared
 * keys and its `worker` object) over defaults, every problem named by its source, the NATS URL a Secret.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { inspect } from 'node:util';
import { join } from 'node:path';
import { Secret } from '../src/common/index.js';
import { defaultServerConfig, defaultWorkerConfig, resolveServerConfig, resolveWorkerConfig } from '../src/config.js';
import { problemsOf } from './helpers/validation.js';
import { natsSubjects } from '../src/platform/index.js';
import { REPO_ROOT } from './helpers/paths.js';

const serverDefaults = defaultServerConfig('/home/someone');
const workerDefaults = { ...defaultWorkerConfig('/home/someone', 4), dataDir: '/home/someone/.subako/worker' };
const PASSWORD = 'nats-pass-never-shown';
const natsUrl = (host: string) => `nats://subako:${PASSWORD}@${host}:4222`;

describe('configuration: scale-out on subako serve', () => {
  test('absent by default: calls run in process, under <data-dir>/volumes, prefix subako', () => {
    const config = resolveServerConfig({ defaults: serverDefaults });
    assert.equal(config.nats, undefined);
    assert.equal(config.volumesDir, undefined);
    assert.equal(config.natsPrefix, 'subako');
  });

  test('flags over environment over the file, the NATS URL kept as a Secret that shows nothing', () => {
    const file = { path: 'subako.config.json', input: { nats: natsUrl('file'), natsPrefix: 'fromfile', volumesDir: '/mnt/file' } };
    const env = { SUBAKO_NATS_URL: natsUrl('env'), SUBAKO_NATS_PREFIX: 'fromenv', SUBAKO_VOLUMES_DIR: '/mnt/env' };
    const flags = { input: { nats: natsUrl('flag'), natsPrefix: undefined, volumesDir: 'relative/vols' }, names: { nats: '--nats' } };
    const fromFile = resolveServerConfig({ defaults: serverDefaults, file });
    assert.deepEqual([fromFile.nats?.reveal(), fromFile.natsPrefix, fromFile.volumesDir], [natsUrl('file'), 'fromfile', '/mnt/file']);
    const fromEnv = resolveServerConfig({ defaults: serverDefaults, file, env });
    assert.deepEqual([fromEnv.nats?.reveal(), fromEnv.natsPrefix, fromEnv.volumesDir], [natsUrl('env'), 'fromenv', '/mnt/env']);
    const config = resolveServerConfig({ defaults: serverDefaults, file, env, flags });
    assert.ok(config.nats instanceof Secret);
    assert.deepEqual([config.nats.reveal(), config.natsPrefix, config.volumesDir], [natsUrl('flag'), 'fromenv', join(process.cwd(), 'relative/vols')]);
    for (const shown of [JSON.stringify(config), inspect(config, { depth: 5 })]) assert.doesNotMatch(shown, new RegExp(PASSWORD));
  });

  test('a URL that is not NATS\'s and a prefix outside the rule are refused, the URL never repeated', () => {
    const problems = problemsOf(() => resolveServerConfig({
      defaults: serverDefaults,
      env: { SUBAKO_NATS_URL: `http://subako:${PASSWORD}@h:4222`, SUBAKO_NATS_PREFIX: 'has.dot' },
      flags: { input: { volumesDir: '' }, names: { volumesDir: '--volumes-dir' } },
    }));
    assert.deepEqual(problems, [
      'SUBAKO_NATS_URL is not valid (its value is not shown); it takes a nats:// (or tls://) URL',
      'SUBAKO_NATS_PREFIX is "has.dot"; it takes 1-64 of A-Z, a-z, 0-9, "_" and "-"',
      '--volumes-dir is ""; it takes a non-empty string',
    ]);
    assert.equal(resolveServerConfig({ defaults: serverDefaults, env: { SUBAKO_NATS_URL: 'tls://nats.internal:4222' } }).nats?.reveal(), 'tls://nats.internal:4222');
  });

  test('the prefix rule is natsSubjects\' own: the same prefixes pass and fail in both', () => {
    for (const prefix of ['subako', 'a', 'run_1-x', 'x'.repeat(64), 'x'.repeat(65), 'has.dot', 'with space', '', 'ünï', 'a*', 'a>']) {
      const configTakes = problemsOf(() => resolveServerConfig({ defaults: serverDefaults, env: { SUBAKO_NATS_PREFIX: prefix, SUBAKO_PORT: 'x' } })).length === 1;
      let subjectsTake = true;
      try { natsSubjects(prefix); } catch { subjectsTake = false; }
      // An empty variable is "not set" (the default stands), as for every other SUBAKO_ variable.
      assert.equal(configTakes, prefix === '' ? true : subjectsTake, prefix);
    }
  });

  test('serve checks the file\'s worker object too, naming each bad key in it', () => {
    const file = { path: '/etc/subako.config.json', input: { worker: { pool: 0, dataDir: '/var/lib/w', colour: 'blue' } } };
    assert.deepEqual(problemsOf(() => resolveServerConfig({ defaults: serverDefaults, file })), [
      '"worker.pool" in /etc/subako.config.json is 0; it takes a whole number from 1 to 256',
      '"worker.colour" in /etc/subako.config.json is not a setting; known settings: pool, dataDir, metricsPort, metricsHost',
    ]);
    assert.deepEqual(problemsOf(() => resolveServerConfig({ defaults: serverDefaults, file: { path: 'f.json', input: { worker: 3 } } })), [
      '"worker" in f.json is 3; it takes an object of subako worker\'s settings (pool, dataDir, metricsPort, metricsHost)',
    ]);
    // A good worker object is not serve's business: it is not in serve's configuration.
    assert.ok(!('worker' in resolveServerConfig({ defaults: serverDefaults, file: { path: 'f.json', input: { worker: { pool: 2 } } } })));
  });

  test('subako serve refuses a URL that is not NATS\'s in one line, exit status 1, without its password', () => {
    const run = spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'serve', '--nats-prefix', 'a.b'], {
      encoding: 'utf8', timeout: 120_000, env: { ...process.env, SUBAKO_NATS_URL: `http://subako:${PASSWORD}@nats:4222` },
    });
    assert.equal(run.status, 1);
    assert.equal(run.stderr,
      'subako serve: cannot start: a setting is not valid: SUBAKO_NATS_URL is not valid (its value is not shown); it takes a nats:// (or tls://) URL; ' +
      '--nats-prefix is "a.b"; it takes 1-64 of A-Z, a-z, 0-9, "_" and "-"\n');
  });
});

describe('configuration: subako worker', () => {
  test('the defaults: one slot per core (at least two), ~/.subako/worker, volumes under it, 30 s, 512 MiB, no metrics', () => {
    const config = resolveWorkerConfig({ defaults: workerDefaults, env: { SUBAKO_NATS_URL: 'nats://127.0.0.1:4222' } });
    assert.deepEqual({ ...config, nats: config.nats.reveal() }, {
      nats: 'nats://127.0.0.1:4222', natsPrefix: 'subako', pool: 4, dataDir: '/home/someone/.subako/worker',
      volumesDir: '/home/someone/.subako/worker/volumes', callTimeoutMs: 30_000, memoryMiB: 512, metricsHost: '127.0.0.1',
    });
    assert.equal(defaultWorkerConfig('/h', 1).pool, 2);
  });

  test('shared keys from the file\'s top level, its own from the worker object; serve\'s other keys are left to serve', () => {
    const file = {
      path: '/etc/subako.config.json',
      input: {
        port: 7070, dataDir: '/var/lib/subako-server', workers: 16, database: 'postgres://u:p@db/subako',
        nats: natsUrl('file'), natsPrefix: 'prod', volumesDir: '/mnt/volumes', callTimeoutMs: 60_000, memoryMiB: 256,
        worker: { pool: 6, dataDir: '/var/lib/subako-worker', metricsPort: 9464 },
      },
    };
    const config = resolveWorkerConfig({ defaults: workerDefaults, file });
    assert.deepEqual({ ...config, nats: config.nats.reveal() }, {
      nats: natsUrl('file'), natsPrefix: 'prod', pool: 6, dataDir: '/var/lib/subako-worker', volumesDir: '/mnt/volumes',
      callTimeoutMs: 60_000, memoryMiB: 256, metricsPort: 9464, metricsHost: '127.0.0.1',
    });
  });

  test('flags over environment over the file, key by key', () => {
    const file = { path: 'subako.config.json', input: { nats: natsUrl('file'), natsPrefix: 'file', worker: { pool: 3, dataDir: '/w/file' } } };
    const env = { SUBAKO_NATS_URL: natsUrl('env'), SUBAKO_WORKERS: '5', SUBAKO_WORKER_DATA_DIR: '/w/env', SUBAKO_MEMORY_MIB: '128', SUBAKO_WORKER_METRICS_PORT: '9000' };
    const flags = { input: { pool: 7, nats: undefined, metricsHost: '0.0.0.0' }, names: { pool: '--pool' } };
    const config = resolveWorkerConfig({ defaults: workerDefaults, file, env, flags });
    assert.deepEqual(
      [config.nats.reveal(), config.natsPrefix, config.pool, config.dataDir, config.volumesDir, config.memoryMiB, config.metricsPort, config.metricsHost],
      [natsUrl('env'), 'file', 7, '/w/env', '/w/env/volumes', 128, 9000, '0.0.0.0'],
    );
    assert.doesNotMatch(inspect(config, { depth: 5 }), new RegExp(PASSWORD));
  });

  test('every problem at once, each naming its source; the URL never shown; a missing URL names where to give it', () => {
    const file = { path: '/etc/subako.config.json', input: { nats: `nats//x:${PASSWORD}@h`, worker: { pool: 'many', colour: 1 } } };
    assert.deepEqual(problemsOf(() => resolveWorkerConfig({
      defaults: workerDefaults, file,
      env: { SUBAKO_WORKERS: '0', SUBAKO_NATS_PREFIX: 'a.b' },
      flags: { input: { callTimeoutMs: 5, metricsPort: 'ninety' }, names: { callTimeoutMs: '--call-timeout-ms', metricsPort: '--metrics-port' } },
    })), [
      '"nats" in /etc/subako.config.json is not valid (its value is not shown); it takes a nats:// (or tls://) URL',
      '"worker.pool" in /etc/subako.config.json is "many"; it takes a whole number from 1 to 256',
      '"worker.colour" in /etc/subako.config.json is not a setting; known settings: pool, dataDir, metricsPort, metricsHost',
      'SUBAKO_NATS_PREFIX is "a.b"; it takes 1-64 of A-Z, a-z, 0-9, "_" and "-"',
      'SUBAKO_WORKERS is 0; it takes a whole number from 1 to 256',
      '--call-timeout-ms is 5; it takes a whole number from 100 to 3600000',
      '--metrics-port is "ninety"; it takes a whole number from 0 to 65535',
    ]);
    assert.deepEqual(problemsOf(() => resolveWorkerConfig({ defaults: workerDefaults })), [
      'the NATS server the API replicas use is not set; give --nats URL, $SUBAKO_NATS_URL, or "nats" in subako.config.json',
    ]);
    assert.deepEqual(problemsOf(() => resolveWorkerConfig({ defaults: workerDefaults, file: { path: '/etc/s.json', input: { worker: [] } } })), [
      '"worker" in /etc/s.json is []; it takes an object of subako worker\'s settings (pool, dataDir, metricsPort, metricsHost)',
      'the NATS server the API replicas use is not set; give --nats URL, $SUBAKO_NATS_URL, or "nats" in /etc/s.json',
    ]);
  });
});
