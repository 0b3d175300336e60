/**
 * The bus with per-role permissions (docs/operating.md, "NATS configuration"): a NATS server of this test's own
 * runs the configuration the operator's page shows, for this run's prefix. A replica and a worker, each with its role's
 * credentials in its `--nats` URL, serve calls end to end; a client without credentials cannot connect; a
 * worker's credentials cannot send a call or a record, nor read the records; a replica's cannot take calls.
 * (test/hostile/bus-attacks.test.ts shows the open bus, where sealing alone holds.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startServer } from '../../src/app.js';
import { packBundle } from '../../src/package/index.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { OwnNatsServer, spawnWorker, type ChildWorker } from '../helpers/nats.js';
import { makeApi, probePackageDir, tempDir, TEST_KEY, type Api } from '../server/helpers/harness.js';

const PREFIX = 'permtest';
const REPLICA = { user: 'replica', pass: randomBytes(12).toString('hex') };
const WORKER = { user: 'worker', pass: randomBytes(12).toString('hex') };

/** The operator's page's configuration for the prefix `subako`, made this run's: its prefix and passwords. */
function documentedConfiguration(): string {
  const page = readFileSync(join(REPO_ROOT, 'docs', 'operating.md'), 'utf8');
  const block = /<!-- nats-permissions:[^\n]*-->\n\s*```conf\n([\s\S]*?)\n\s*```/.exec(page);
  assert.ok(block, 'docs/operating.md shows the nats-server configuration under its nats-permissions marker');
  return block[1]
    .replaceAll('subako.', `${PREFIX}.`).replaceAll('subako_', `${PREFIX}_`)
    .replace('$REPLICA_PASSWORD', JSON.stringify(REPLICA.pass)).replace('$WORKER_PASSWORD', JSON.stringify(WORKER.pass));
}

const urlFor = (server: OwnNatsServer, who: { user: string; pass: string }): string => `nats://${who.user}:${who.pass}@127.0.0.1:${server.port}`;

/** The first error the server tells this connection of (a permissions violation comes as one), within 10 s. */
async function firstError(nc: NatsConnection): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => { timer = setTimeout(() => resolve('no error within 10 s'), 10_000); });
  const heard = (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'error') return String((status as { error?: unknown }).error);
    }
    return 'the connection closed';
  })();
  const what = await Promise.race([heard, timeout]);
  clearTimeout(timer);
  return what;
}

describe('a bus with per-role permissions, as docs/operating.md configures it', () => {
  let nats: OwnNatsServer;
  const dataDir = tempDir();
  const volumesDir = join(dataDir, 'volumes');
  let api: Api;
  let close: (() => Promise<void>) | undefined;
  let worker: ChildWorker | undefined;

  before(async () => {
    nats = await OwnNatsServer.start({ config: documentedConfiguration(), user: REPLICA });
    const { server, firstStart } = await startServer({
      dataDir, port: 0, examplesDir: null, env: { ...process.env, ...TEST_KEY }, nats: { url: urlFor(nats, REPLICA), prefix: PREFIX }, volumesDir,
    });
    api = makeApi(server.url, firstStart!.apiKey);
    close = () => server.close(5_000);
    worker = await spawnWorker({ url: urlFor(nats, WORKER), prefix: PREFIX, volumesDir, pool: 1, env: TEST_KEY, repoRoot: REPO_ROOT });
  });
  after(async () => {
    await close?.();
    await worker?.stop();
    await nats?.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a replica and a worker with their roles\' credentials serve a call end to end, the worker breaking no permission', async () => {
    assert.equal((await api.call('POST', '/v1/packages', await packBundle(probePackageDir()))).status, 201);
    const agent = await api.call('POST', '/v1/agents', { name: 'perm', tools: [{ package: 'probe' }] });
    const session = await api.call('POST', `/v1/agents/${agent.body.id}/sessions`, {});
    const answer = await api.call('POST', `/v1/sessions/${session.body.id}/calls`, { tool: 'echo', arguments: { through: 'permissions' } });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(JSON.parse(answer.body.result.content[0].text), { through: 'permissions' });
    assert.doesNotMatch(worker!.stderr(), /[Pp]ermission/, 'the worker was refused nothing');
  });

  it('a client without credentials cannot connect', async () => {
    await assert.rejects(connect({ servers: nats.url, reconnect: false }), /Authorization Violation/);
  });

  it('a worker\'s credentials cannot send a call or a record, nor hear the records; a replica\'s cannot take calls', async () => {
    const attempts: [who: { user: string; pass: string }, act: (nc: NatsConnection) => void, expected: RegExp][] = [
      [WORKER, (nc) => nc.publish(`${PREFIX}.calls.wkr_other.call`, new Uint8Array([1])), /Permissions Violation for Publish to "permtest\.calls\.wkr_other\.call"/],
      [WORKER, (nc) => nc.publish(`${PREFIX}.calls.wkr_other.ctl`, new Uint8Array([1])), /Permissions Violation for Publish to "permtest\.calls\.wkr_other\.ctl"/],
      [WORKER, (nc) => nc.publish(`${PREFIX}.events`, new Uint8Array([1])), /Permissions Violation for Publish to "permtest\.events"/],
      [WORKER, (nc) => nc.publish('$O.permtest_packages.C.x', new Uint8Array([1])), /Permissions Violation for Publish to "\$O\.permtest_packages\.C\.x"/],
      [WORKER, (nc) => nc.subscribe(`${PREFIX}.events`), /Permissions Violation for Subscription to "permtest\.events"/],
      [REPLICA, (nc) => nc.subscribe(`${PREFIX}.calls.*.*`), /Permissions Violation for Subscription to "permtest\.calls\.\*\.\*"/],
    ];
    for (const [who, act, expected] of attempts) {
      const nc = await connect({ servers: nats.url, reconnect: false, ...who });
      try {
        const refused = firstError(nc);
        act(nc);
        await nc.flush().catch(() => undefined);
        assert.match(await refused, expected);
      } finally {
        await nc.close().catch(() => undefined);
      }
    }
  });
});
