/**
 * The MCP endpoint: calls per second and p50 latency through Streamable HTTP with the official v2 client on
 * loopback, against calling the library directly.
 */
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { FunctionHost, LoadedPackage } from '../src/function/host.js';
import { mcp } from '../src/mcp/index.js';
import { sample, summarize } from './stats.js';
import type { Row } from './run.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function endpointBench(host: FunctionHost, loaded: LoadedPackage, libraryP50: number): Promise<Row[]> {
  const tmpDir = mkdtempSync(join(tmpdir(), 'subako-bench-endpoint-'));
  const toolbox = host.toolbox(loaded, [{ name: 'echo', inputSchema: { type: 'object' } }], () => ({ tmpDir }));
  const runs = Number(process.env.BENCH_ENDPOINT_RUNS ?? 1000);
  return mcp.serve(toolbox, async (url) => {
    const client = new Client({ name: 'subako-bench', version: '1' }, { versionNegotiation: { mode: 'auto' } } as never);
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const latency = summarize(await sample(runs, 50, () => client.callTool({ name: 'echo', arguments: { x: 1 } })));
      const seconds = 2;
      let done = 0;
      const until = performance.now() + seconds * 1000;
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (performance.now() < until) {
          await client.callTool({ name: 'echo', arguments: { x: done } });
          done += 1;
        }
      }));
      const rate = done / seconds;
      return [
        { name: 'MCP endpoint p50 (v2 client, loopback)', value: latency.p50, unit: 'ms', against: { name: 'library p50', value: libraryP50, ratio: latency.p50 / libraryP50 } },
        { name: 'MCP endpoint throughput, 8 in flight', value: rate, unit: 'calls/s', target: { text: '≥ 1500 calls/s', met: rate >= 1500, by: rate < 1500 ? `${Math.round(1500 - rate)} calls/s` : undefined } },
      ];
    } finally {
      await client.close();
    }
  });
}
