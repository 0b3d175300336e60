/**
 * The MCP endpoint: calls per second and p50 latency through Streamable HTTP with the official v2 client on
 * loopback, against calling the library directly, and against the client's own floor.
 *
 * The client runs in a process of its own (bench/endpoint-client.ts): real HTTP on loopback, the official
 * client, 8 calls in flight; its CPU is not charged to the server's event loop (the figure with the client in
 * the server's process is kept as a row of its own, for comparison). The client's floor is the same client
 * against a loopback server that answers every request with a fixed, well-formed result: what any MCP
 * endpoint costs that client, so the endpoint's own share is what lies above it. A TypeScript echo tool served
 * the same way separates the endpoint's cost from the sandbox's.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { FunctionHost, LoadedPackage } from '../src/function/host.js';
import { mcp } from '../src/mcp/index.js';
import type { Toolbox } from '../src/tool.js';
import type { EndpointClientFigures, EndpointClientTask } from './endpoint-client.js';
import type { Row } from './run.js';

const IN_FLIGHT = 8;
const SECONDS = 2;

function runClientProcess(task: EndpointClientTask): Promise<EndpointClientFigures[]> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('./endpoint-client.js', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message: { ok: boolean; figures?: EndpointClientFigures[]; error?: string }) => {
      if (message.ok) resolve(message.figures!);
      else reject(new Error(`the benchmark client failed: ${message.error}`));
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the benchmark client exited ${code}`));
    });
    child.send(task);
  });
}

/**
 * The floor: answers every POST with a fixed 2026-07-28 result of the endpoint's shape (the discover result
 * for server/discover, an echo-sized tool result for anything else), no MCP machinery at all.
 */
async function startFixedAnswerServer(): Promise<{ url: string; server: Server }> {
  const meta = { 'io.modelcontextprotocol/serverInfo': { name: 'subako', version: '0' } };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string | number; method: string };
      const result = message.method === 'server/discover'
        ? { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete', ttlMs: 0, cacheScope: 'private', _meta: meta }
        : { content: [{ type: 'text', text: '{"x":1}' }], resultType: 'complete', _meta: meta };
      const body = JSON.stringify({ result, jsonrpc: '2.0', id: message.id });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

/** The same load from a client in this process (the server's event loop also runs the client). */
async function inProcessRate(url: string): Promise<number> {
  const client = new Client({ name: 'subako-bench', version: '1' }, { versionNegotiation: { mode: 'auto' } } as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    let done = 0;
    const until = performance.now() + SECONDS * 1000;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < until) {
        await client.callTool({ name: 'echo', arguments: { x: done } });
        done += 1;
      }
    }));
    return done / SECONDS;
  } finally {
    await client.close();
  }
}

/** An echo tool in TypeScript: the endpoint with no sandbox behind it. */
const typeScriptEcho: Toolbox = {
  echo: {
    name: 'echo',
    inputSchema: { type: 'object' },
    call: async (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }),
  },
};

export async function endpointBench(host: FunctionHost, loaded: LoadedPackage, libraryP50: number): Promise<Row[]> {
  const tmpDir = mkdtempSync(join(tmpdir(), 'subako-bench-endpoint-'));
  const toolbox = host.toolbox(loaded, [{ name: 'echo', inputSchema: { type: 'object' } }], () => ({ tmpDir }));
  const runs = Number(process.env.BENCH_ENDPOINT_RUNS ?? 1000);
  const fixed = await startFixedAnswerServer();
  try {
    return await mcp.serve(typeScriptEcho, (typeScriptUrl) => mcp.serve(toolbox, async (url) => {
      const [floor, bare, endpoint] = await runClientProcess({ urls: [fixed.url, typeScriptUrl, url], runs, inFlight: IN_FLIGHT, seconds: SECONDS });
      const sameProcess = await inProcessRate(url);
      const { p50 } = endpoint.latency;
      const rate = endpoint.rate;
      return [
        { name: 'MCP client floor p50 (fixed answers)', value: floor.latency.p50, unit: 'ms' },
        { name: 'MCP endpoint p50, TypeScript echo tool', value: bare.latency.p50, unit: 'ms', against: { name: 'client floor', value: floor.latency.p50, ratio: bare.latency.p50 / floor.latency.p50 } },
        { name: 'MCP endpoint p50 (v2 client, loopback)', value: p50, unit: 'ms', against: { name: 'library p50', value: libraryP50, ratio: p50 / libraryP50 } },
        { name: '  endpoint p50 over floor + library p50', value: p50 - floor.latency.p50 - libraryP50, unit: 'ms' },
        { name: `MCP client floor, ${IN_FLIGHT} in flight`, value: floor.rate, unit: 'calls/s' },
        { name: `MCP endpoint, TypeScript echo, ${IN_FLIGHT} in flight`, value: bare.rate, unit: 'calls/s', against: { name: 'client floor', value: floor.rate, ratio: bare.rate / floor.rate } },
        { name: `MCP endpoint throughput, ${IN_FLIGHT} in flight`, value: rate, unit: 'calls/s', against: { name: 'client floor', value: floor.rate, ratio: rate / floor.rate }, target: { text: '≥ 1500 calls/s', met: rate >= 1500, by: rate < 1500 ? `${Math.round(1500 - rate)} calls/s` : undefined } },
        { name: `  same, client in the server's process`, value: sameProcess, unit: 'calls/s', against: { name: 'client apart', value: rate, ratio: sameProcess / rate } },
      ];
    }));
  } finally {
    fixed.server.closeAllConnections();
    await new Promise((resolve) => fixed.server.close(resolve));
    rmSync(tmpDir, { recursive: true, force: true });
  }
}
