/**
 * Egress overhead: a `subako_http` GET to a loopback HTTPS server, made by a guest inside a call, against
 * Node's own `fetch` of the same URL. The call's own cost is taken out by timing the same guest's `echo`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import type { FunctionHost } from '../src/function/host.js';
import { fixture } from '../test/helpers/paths.js';
import { makeTestCa } from '../test/egress/helpers/test-ca.js';
import { startServer } from '../test/egress/helpers/servers.js';
import { sample, summarize } from './stats.js';
import type { Row } from './run.js';

export async function egressBench(host: FunctionHost, scratch: string): Promise<Row[]> {
  const tls = makeTestCa();
  const server = await startServer((_req, res) => { res.end('{"ok":true}'); }, { keepBody: false });
  const url = server.url('localhost', '/ping');
  const runs = Number(process.env.BENCH_EGRESS_RUNS ?? 300);
  try {
    const agent = new Agent({ connect: { ca: tls.ca } });
    const viaFetch = summarize(await sample(runs, 30, async () => {
      const res = await fetch(url, { dispatcher: agent });
      await res.text();
    }));
    await agent.close();

    const probe = await host.load({ name: 'probe', moduleBytes: readFileSync(fixture('c', 'mcp', 'abi_probe.wasm')), assetsDir: null });
    const tmpDir = join(scratch, 'egress');
    mkdirSync(tmpDir, { recursive: true });
    const egress = { allow: [`localhost:${server.port}`], grants: [], credentials: [], privateDestinations: 'allow' as const, ca: tls.ca };
    const plain = summarize(await sample(runs, 30, () => host.call(probe, 'echo', {}, { tmpDir })));
    const withHttp = summarize(await sample(runs, 30, async () => {
      const outcome = await host.call(probe, 'http', { request: { url } }, { tmpDir, egress });
      if (outcome.status !== 'ok' || !String(outcome.model[0]?.text).includes('"status":200')) {
        throw new Error(`the egress benchmark's request failed: ${JSON.stringify(outcome.model)}`);
      }
    }));
    const request = withHttp.p50 - plain.p50;
    const overhead = request - viaFetch.p50;
    return [
      { name: 'egress: Node fetch p50 (keep-alive)', value: viaFetch.p50, unit: 'ms' },
      { name: 'egress: subako_http GET inside a call p50', value: request, unit: 'ms', against: { name: 'fetch p50', value: viaFetch.p50, ratio: request / viaFetch.p50 } },
      {
        name: 'egress overhead per request',
        value: overhead,
        unit: 'ms',
        target: { text: '≤ 0.5 ms', met: overhead <= 0.5, by: overhead > 0.5 ? `${(overhead - 0.5).toFixed(3)} ms` : undefined },
      },
    ];
  } finally {
    await server.close();
  }
}
