/**
 * The MCP endpoint against the official SDK's own server, measured the same way in the same run: one
 * TypeScript echo tool served by the official v2 `McpServer` (`createMcpHandler` + `toNodeHandler` from
 * @modelcontextprotocol/node on node:http), by subako's `mcp.serve`, and by a `subako serve` session URL (an
 * in-process platform on a scratch data directory, the tool reaching the session as a remote MCP server's
 * toolbox, so the whole session pipeline runs: token lookup, admission, the call log, redaction); plus the C
 * echo function package through `mcp.serve` and through a session URL.
 *
 * Load: autocannon in a process of its own (bench/load-generator.ts) sends one pre-formed 2026-07-28
 * `tools/call` (MCP-Protocol-Version, Mcp-Method and Mcp-Name headers, the request `_meta`) over keep-alive
 * connections, 8 and then 32 at a time. Contestants are taken in turns, in rounds, the order rotated each
 * round; each figure is reported as the median of its per-round ratios to the official server (the machines
 * are shared: absolute rates drift, ratios taken moments apart hold).
 *
 * `node dist/bench/endpoint-peers.js` runs it alone. BENCH_ENDPOINT_ROUNDS (3), BENCH_ENDPOINT_SECONDS (3)
 * and BENCH_ENDPOINT_CONNECTIONS ("8,32") make a quicker run; BENCH_ENDPOINT_ONLY="session URL" keeps only the
 * contestants whose name holds it (beside the official server), for a profile of one. BENCH_BASELINE=<another
 * checkout, built> adds that tree's session URL serving the echo package, in this process and in the same turns:
 * a before/after of the platform's path as one ratio of one run.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';
import { createLogger } from '../src/common/index.js';
import { FunctionHost, type LoadedPackage } from '../src/function/index.js';
import { EMPTY_CATALOG, defineTool, mcp } from '../src/mcp/index.js';
import { packBundle } from '../src/package/index.js';
import { FunctionRuntime, Platform } from '../src/platform/index.js';
import { SubakoServer } from '../src/server/index.js';
import type { Toolbox } from '../src/tool.js';
import { fixture } from '../test/helpers/paths.js';
import type { LoadFigures, LoadTask } from './load-generator.js';
import type { Row } from './run.js';
import { median } from './stats.js';

const ROUNDS = Number(process.env.BENCH_ENDPOINT_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_ENDPOINT_SECONDS ?? 3);
const CONNECTIONS = (process.env.BENCH_ENDPOINT_CONNECTIONS ?? '8,32').split(',').map(Number);
/** Only the contestants whose name holds this (and the official server), e.g. for a profile of one. */
const ONLY = process.env.BENCH_ENDPOINT_ONLY;
const OFFICIAL = 'official SDK v2 server, TypeScript echo';
const BASELINE = process.env.BENCH_BASELINE;
const BASELINE_SESSION = 'session URL, echo package, BENCH_BASELINE';
/** The URL the platform is told the TypeScript echo's remote server has; the bench's RemoteMcp answers it. */
const TS_ECHO_REMOTE = 'http://127.0.0.1:9/mcp';

interface Contestant {
  name: string;
  url: string;
  /** What it answers the bench's request (filled in by `checkAnswers`); every answer under load must be it. */
  answer?: string;
  /** The tool's name as this endpoint publishes it (a session's names come from tool-names.ts). */
  tool: string;
}

/** One tools/call, formed once: what a 2026-07-28 client sends for `echo {text: "hello"}`. */
export function request(tool: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: {
      name: tool, arguments: { text: 'hello' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'subako-bench', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  return {
    body,
    headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': tool,
    },
  };
}

/** The echo tool in TypeScript, checked against its schema before it runs, as the official server's is. */
const typeScriptEcho = (): Toolbox => ({
  echo: defineTool({
    name: 'echo', description: 'Echoes its text.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    handler: ({ text }: { text: string }) => ({ content: [{ type: 'text', text }] }),
  }),
});

/** The official SDK's server for the same tool, as its documentation wires it on node:http. */
async function startOfficial(): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'bench-official', version: '1' });
    server.registerTool('echo', { description: 'Echoes its text.', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    return server;
  });
  const node = toNodeHandler(handler);
  const server = createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await handler.close();
    },
  };
}

/**
 * A platform as `subako serve` builds it (app.ts), on a scratch data directory: the echo package uploaded
 * through the ordinary path, one agent granted it, one agent whose remote MCP server is the TypeScript echo,
 * and a session of each.
 */
export async function startPlatform(dataDir: string): Promise<{ packageSession: Contestant; typeScriptSession: Contestant; close: () => Promise<void> }> {
  const runtime = new FunctionRuntime({ poolSize: 2, preparedCacheDir: join(dataDir, 'cache', 'prepared') });
  const echo = typeScriptEcho();
  const platform = await Platform.open({
    dataDir, runtime, sealingKey: randomBytes(32),
    // The access log is written as `subako serve` writes it, into a sink: the bench's own output stays readable.
    logger: createLogger({ level: 'info', destination: { write: () => undefined } }),
    // A session may run as many calls at once as mcp.serve's host does (by default it runs half the pool, so
    // that one session cannot take every worker), and hold the 32 connections' calls waiting: the same work.
    admission: { sessionConcurrency: 2, sessionQueue: 64, agentConcurrency: 2, agentQueue: 128 },
    remote: {
      tools: async (url) => { if (url === TS_ECHO_REMOTE) return echo; throw new Error(`no such bench server: ${url}`); },
      catalog: async () => EMPTY_CATALOG,
    },
  });
  const server = await SubakoServer.start({ platform, port: 0 });
  const packageDir = join(dataDir, 'echo-package');
  mkdirSync(packageDir);
  writeFileSync(join(packageDir, 'subako-package.json'), JSON.stringify({ abi: 1, name: 'echo', description: 'Echoes its arguments.', version: '1.0.0' }));
  copyFileSync(fixture('c', 'mcp', 'echo.wasm'), join(packageDir, 'module.wasm'));
  await platform.packages.upload(await packBundle(packageDir));
  const session = async (name: string, input: Parameters<Platform['agents']['create']>[0]): Promise<Contestant> => {
    const { agent } = await platform.agents.create(input);
    const { session: record, token } = await platform.sessions.create(agent.id, {});
    const box = await platform.toolboxes.forSession(record);
    const tool = Object.keys(box.tools).find((published) => published.endsWith('echo'));
    if (!tool) throw new Error(`the ${name} session has no echo tool (${Object.keys(box.tools).join(', ')}; ${box.warnings.join('; ')})`);
    return { name, url: `${server.url}/mcp/${token}`, tool };
  };
  return {
    packageSession: await session('session URL, echo package', { name: 'bench-package', tools: [{ package: 'echo' }] }),
    typeScriptSession: await session('session URL, TypeScript echo', { name: 'bench-typescript', mcp_servers: [{ name: 'ts', url: TS_ECHO_REMOTE }] }),
    close: () => server.close(5_000),
  };
}

/** The load generator's process, and one timed run through it. */
export function loadGenerator(): { run: (task: LoadTask) => Promise<LoadFigures>; close: () => void } {
  const child: ChildProcess = fork(new URL('./load-generator.js', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return {
    run: (task) => new Promise((resolve, reject) => {
      child.once('message', (message: { ok: boolean; figures?: LoadFigures; error?: string }) => {
        if (message.ok) resolve(message.figures!);
        else reject(new Error(`the load generator failed: ${message.error}`));
      });
      child.send(task);
    }),
    close: () => child.disconnect(),
  };
}

/** One call by hand before any load: each endpoint must answer the pre-formed request with the echo. */
async function checkAnswers(contestant: Contestant): Promise<Contestant> {
  const { body, headers } = request(contestant.tool);
  const response = await fetch(contestant.url, { method: 'POST', headers, body });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('hello') || text.includes('"isError":true')) {
    throw new Error(`${contestant.name} did not answer the bench's tools/call: ${response.status} ${text.slice(0, 300)}`);
  }
  return { ...contestant, answer: text };
}

/** Rates per contestant and connection count, each round's run of every contestant taken back to back. */
export { checkAnswers };

export async function measure(contestants: Contestant[], run: (task: LoadTask) => Promise<LoadFigures>): Promise<Map<string, Measured[]>> {
  const figures = new Map<string, Measured[]>();
  const task = (c: Contestant, connections: number, seconds: number): LoadTask => ({ url: c.url, connections, seconds, ...request(c.tool), expectBody: c.answer! });
  for (const c of contestants) await run(task(c, 8, 1)); // warm up: JIT, pools, caches
  for (let round = 0; round < ROUNDS; round += 1) {
    // Rotate the order, so that no contestant always runs right after the same neighbour.
    const order = contestants.map((_, i) => contestants[(i + round) % contestants.length]);
    for (const connections of CONNECTIONS) {
      for (const c of order) {
        const cpu = process.cpuUsage();
        const loaded = await run(task(c, connections, SECONDS));
        const used = process.cpuUsage(cpu);
        const result = { ...loaded, cpuMicros: (used.user + used.system) / Math.max(1, loaded.rate * SECONDS) };
        if (result.errors > 0 || result.non2xx > 0 || result.mismatches > 0) {
          throw new Error(`${c.name} at ${connections} connections: ${result.errors} errors, ${result.non2xx} answers not 2xx, ${result.mismatches} answers not the echo`);
        }
        const key = `${c.name}@${connections}`;
        figures.set(key, [...(figures.get(key) ?? []), result]);
      }
    }
  }
  return figures;
}

/**
 * A run's figures, and the CPU this process (every server measured lives in it) spent per answer: on a loaded
 * machine the rates swing with what else runs, CPU per call far less. A package's guest runs in the sandbox
 * process, whose CPU is not counted here: for packages it is the endpoint's and the platform's share.
 */
type Measured = LoadFigures & { cpuMicros: number };

function rows(contestants: Contestant[], figures: Map<string, Measured[]>): Row[] {
  const out: Row[] = [];
  /** The median over rounds of `a`'s rate over `b`'s, both at `connections`. */
  const ratio = (a: string, b: string, connections: number): number => {
    const as = figures.get(`${a}@${connections}`)!;
    const bs = figures.get(`${b}@${connections}`)!;
    return median(as.map((x, i) => x.rate / bs[i].rate));
  };
  const rate = (name: string, connections: number) => median(figures.get(`${name}@${connections}`)!.map((x) => x.rate));
  const p50 = (name: string, connections: number) => median(figures.get(`${name}@${connections}`)!.map((x) => x.p50Ms));
  for (const connections of CONNECTIONS) {
    const official = rate(OFFICIAL, connections);
    out.push({ name: `endpoint: ${OFFICIAL}, ${connections} conn.`, value: official, unit: 'calls/s' });
    for (const c of contestants) {
      if (c.name === OFFICIAL) continue;
      const r = ratio(c.name, OFFICIAL, connections);
      const target = c.name === 'mcp.serve, TypeScript echo'
        ? { text: '≥ 2× official', met: r >= 2, ...(r < 2 ? { by: `${((1 - r / 2) * 100).toFixed(0)}%` } : {}) }
        : c.name === 'session URL, echo package'
          ? { text: '≥ 1.5× official', met: r >= 1.5, ...(r < 1.5 ? { by: `${((1 - r / 1.5) * 100).toFixed(0)}%` } : {}) }
          : undefined;
      out.push({
        name: `endpoint: ${c.name}, ${connections} conn.`, value: rate(c.name, connections), unit: 'calls/s',
        against: { name: 'official', value: official, ratio: r }, ...(target ? { target } : {}),
      });
    }
    // The platform's own cost: a session URL against mcp.serve of the same tool (issue 17, point 4: ≥ ×1 for the
    // TypeScript echo; issue 26, point 4: ≥ ×0.8 for the package, whose run crosses to the sandbox process).
    for (const [session, served, floor] of [['session URL, TypeScript echo', 'mcp.serve, TypeScript echo', 1], ['session URL, echo package', 'mcp.serve, echo package', 0.8]] as const) {
      if (!figures.has(`${session}@${connections}`) || !figures.has(`${served}@${connections}`)) continue;
      const r = ratio(session, served, connections);
      out.push({
        name: `  ${session} / mcp.serve, ${connections} conn.`, value: r, unit: '×',
        target: { text: `≥ ${floor}×`, met: r >= floor, ...(r < floor ? { by: `${((1 - r / floor) * 100).toFixed(0)}%` } : {}) },
      });
    }
    if (figures.has(`${BASELINE_SESSION}@${connections}`) && figures.has(`session URL, echo package@${connections}`)) {
      const r = ratio('session URL, echo package', BASELINE_SESSION, connections);
      out.push({ name: `  session URL, echo package: this tree / BENCH_BASELINE, ${connections} conn.`, value: r, unit: '×' });
    }
    const cpu = (name: string) => median(figures.get(`${name}@${connections}`)!.map((x) => x.cpuMicros));
    for (const c of contestants) {
      out.push({ name: `  server CPU per call at ${connections} conn., ${c.name}`, value: cpu(c.name), unit: 'µs', ...(c.name === OFFICIAL ? {} : { against: { name: 'official', value: cpu(OFFICIAL), ratio: cpu(c.name) / cpu(OFFICIAL) } }) });
    }
    for (const c of contestants) {
      out.push({ name: `  p50 at ${connections} conn., ${c.name}`, value: p50(c.name, connections), unit: 'ms', ...(c.name === OFFICIAL ? {} : { against: { name: 'official', value: p50(OFFICIAL, connections), ratio: p50(c.name, connections) / p50(OFFICIAL, connections) } }) });
    }
  }
  return out;
}

/** `host` and `loaded`: the echo package in the bench's FunctionHost, for the `mcp.serve` row of the package. */
export async function endpointPeersBench(host: FunctionHost, loaded: LoadedPackage): Promise<Row[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'subako-bench-peers-'));
  const tmpDir = join(scratch, 'tmp');
  mkdirSync(tmpDir);
  const official = await startOfficial();
  const platform = await startPlatform(join(scratch, 'data'));
  const load = loadGenerator();
  const packageBox = host.toolbox(loaded, [{ name: 'echo', inputSchema: { type: 'object' } }], () => ({ tmpDir }));
  // The other tree's own platform code, loaded beside ours (its modules are its own files: nothing is shared).
  const baseline = BASELINE
    ? await (await import(pathToFileURL(join(BASELINE, 'dist', 'bench', 'endpoint-peers.js')).href) as { startPlatform: typeof startPlatform }).startPlatform(join(scratch, 'baseline'))
    : null;
  try {
    return await mcp.serve(typeScriptEcho(), (typeScriptUrl) => mcp.serve(packageBox, async (packageUrl) => {
      const contestants: Contestant[] = [
        { name: OFFICIAL, url: official.url, tool: 'echo' },
        { name: 'mcp.serve, TypeScript echo', url: typeScriptUrl, tool: 'echo' },
        platform.typeScriptSession,
        { name: 'mcp.serve, echo package', url: packageUrl, tool: 'echo' },
        platform.packageSession,
        ...(baseline ? [{ ...baseline.packageSession, name: BASELINE_SESSION }] : []),
      ].filter((c) => c.name === OFFICIAL || ONLY === undefined || c.name.includes(ONLY));
      const checked: Contestant[] = [];
      for (const c of contestants) checked.push(await checkAnswers(c));
      return rows(checked, await measure(checked, load.run));
    }));
  } finally {
    load.close();
    await baseline?.close();
    await platform.close();
    await official.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const host = new FunctionHost({ poolSize: 2 });
  const { readFileSync } = await import('node:fs');
  const loaded = await host.load({ name: 'echo', moduleBytes: readFileSync(fixture('c', 'mcp', 'echo.wasm')), assetsDir: null });
  try {
    for (const row of await endpointPeersBench(host, loaded)) {
      const against = row.against ? `  ×${row.against.ratio.toFixed(2)} vs ${row.against.name}` : '';
      const target = row.target ? `  target ${row.target.text}: ${row.target.met ? 'met' : `MISSED by ${row.target.by}`}` : '';
      console.log(`${row.name.padEnd(62)} ${row.value.toFixed(2).padStart(10)} ${row.unit}${against}${target}`);
    }
  } finally {
    await host.close();
  }
}
