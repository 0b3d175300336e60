/**
 * `node dist/bench/node-adapter.js`: our node:http face of the MCP endpoint (src/mcp/node-adapter.ts)
 * against the SDK's own adapter (`toNodeHandler` from @modelcontextprotocol/node) behind the same gate and
 * handed the same parsed body. Both serve one TypeScript echo tool; a client in a child process sends
 * 2026-07-28 tools/call POSTs over keep-alive loopback, 8 in flight, for a few seconds per round, the two
 * adapters alternating over several rounds (the machines are shared: compare within a run, not across).
 * Prints calls per second and the server process's CPU per call. Not a test.
 */
import { fork } from 'node:child_process';
import { createServer, request, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createToolboxHandler } from '../src/mcp/toolbox-handler.js';
import { toolboxServer } from '../src/mcp/toolbox-server.js';
import { admitRequest, DEFAULT_MAX_BATCH_MESSAGES, DEFAULT_MAX_BODY_BYTES, refusalBody, type AdmissionSettings } from '../src/mcp/endpoint-admission.js';
import { originCheck } from '../src/mcp/origin.js';
import { defineTool } from '../src/mcp/define-tool.js';
import type { Toolbox } from '../src/tool.js';

const IN_FLIGHT = 8;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const BODY = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'tools/call',
  params: {
    name: 'echo', arguments: { text: 'hello' },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
const HEADERS = {
  'content-type': 'application/json', accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo',
};

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

function toolbox(): Toolbox {
  return { echo: defineTool({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, handler: ({ text }: { text: string }) => ({ text }) }) };
}

/** Ours: the ToolboxHandler's node face. */
function ours(): { handle: NodeHandler; close: () => Promise<void> } {
  const handler = createToolboxHandler(toolbox());
  return { handle: (req, res) => handler.handleNode(req, res), close: () => handler.close() };
}

/** The SDK's adapter, after the same gate, given the parsed body (its fastest path: no second read). */
function sdks(): { handle: NodeHandler; close: () => Promise<void> } {
  const settings: AdmissionSettings = {
    maxBodyBytes: DEFAULT_MAX_BODY_BYTES, maxBatchMessages: DEFAULT_MAX_BATCH_MESSAGES, isOriginAllowed: originCheck(), report: () => undefined,
  };
  const mcp = toolboxServer(toolbox(), { maxBodyBytes: settings.maxBodyBytes, report: settings.report });
  const adapter = toNodeHandler(mcp, { maxRequestBodySize: settings.maxBodyBytes });
  const readBody = (req: IncomingMessage) => async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  return {
    handle: async (req, res) => {
      const gate = await admitRequest({ origin: req.headers.origin, contentLength: req.headers['content-length'], hasBody: req.method !== 'GET' }, readBody(req), settings);
      if ('refused' in gate) {
        res.writeHead(gate.refused.status, { 'content-type': 'application/json' }).end(refusalBody(gate.refused));
        return;
      }
      await adapter(req, res, gate.admitted.parsed?.value);
    },
    close: () => mcp.close(),
  };
}

/** The child: POSTs as fast as answers come, IN_FLIGHT at a time, for SECONDS; sends back the count. */
async function client(url: string): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const one = () => new Promise<void>((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...HEADERS, 'content-length': Buffer.byteLength(BODY) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => (res.statusCode === 200 && text.includes('hello') ? resolve() : reject(new Error(`${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(BODY);
  });
  for (let i = 0; i < 200; i++) await one(); // warm up
  process.send!({ warm: true });
  await new Promise((resolve) => process.once('message', resolve));
  let calls = 0;
  const until = Date.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (Date.now() < until) {
      await one();
      calls += 1;
    }
  }));
  process.send!({ calls });
  agent.destroy();
}

async function round(name: string, face: { handle: NodeHandler; close: () => Promise<void> }): Promise<{ name: string; perSecond: number; cpuMicros: number }> {
  const server = createServer((req, res) => void face.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const child = fork(new URL(import.meta.url), ['--client', url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((resolve) => child.once('message', resolve));
  const cpu = process.cpuUsage();
  child.send('go');
  const { calls } = await new Promise<{ calls: number }>((resolve) => child.once('message', resolve as never));
  const used = process.cpuUsage(cpu);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await face.close();
  return { name, perSecond: calls / SECONDS, cpuMicros: (used.user + used.system) / calls };
}

if (process.argv[2] === '--client') {
  await client(process.argv[3]);
} else {
  const results: Record<string, { perSecond: number[]; cpuMicros: number[] }> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, make] of [['ours (node-adapter.ts)', ours], ['SDK toNodeHandler', sdks]] as const) {
      const figures = await round(name, make());
      (results[name] ??= { perSecond: [], cpuMicros: [] }).perSecond.push(figures.perSecond);
      results[name].cpuMicros.push(figures.cpuMicros);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [name, { perSecond, cpuMicros }] of Object.entries(results)) {
    console.log(`${name.padEnd(24)} ${median(perSecond).toFixed(0).padStart(7)} calls/s  ${median(cpuMicros).toFixed(0).padStart(5)} µs server CPU per call  (rounds: ${perSecond.map((x) => x.toFixed(0)).join(', ')})`);
  }
}
