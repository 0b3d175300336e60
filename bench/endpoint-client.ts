/**
 * The client side of the MCP endpoint benchmark, run in its own process (bench/endpoint.ts forks it): the
 * official v2 client connects to each URL it is given, times calls one at a time (p50, the URLs in turns),
 * then keeps 8 in flight for a while on each URL (calls per second), and sends the figures back over IPC.
 *
 * Why a process of its own: the official client costs about as much CPU per call as the server does, and
 * in the server's process it would be charged to the server (both on one event loop). Apart, each has a
 * core of the machine's two, as a client and a server on one host would; the sandbox's workers share them.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { summarize, type Summary } from './stats.js';

export interface EndpointClientTask {
  /** Each measured with a client of its own. */
  urls: string[];
  /** Calls timed one at a time per URL (after a warm-up). */
  runs: number;
  /** Calls kept in flight for the throughput figure. */
  inFlight: number;
  /** How long the throughput run lasts. */
  seconds: number;
}

export interface EndpointClientFigures {
  latency: Summary;
  /** Calls per second with `inFlight` in flight. */
  rate: number;
}

type Connected = Client;

async function connect(url: string): Promise<Connected> {
  const client = new Client({ name: 'subako-bench', version: '1' }, { versionNegotiation: { mode: 'auto' } } as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const echo = (client: Connected, x: number) => client.callTool({ name: 'echo', arguments: { x } });

/**
 * Latency samples taken in turns (one call to each URL, then again), so that the machine's drift during
 * the run (these machines are shared) falls on every URL alike and their ratios hold.
 */
async function latencies(clients: Connected[], runs: number): Promise<Summary[]> {
  for (let i = 0; i < 50; i += 1) for (const client of clients) await echo(client, i);
  const samples = clients.map((): number[] => []);
  for (let i = 0; i < runs; i += 1) {
    for (const [k, client] of clients.entries()) {
      const start = performance.now();
      await echo(client, i);
      samples[k].push(performance.now() - start);
    }
  }
  return samples.map(summarize);
}

async function rate(client: Connected, task: EndpointClientTask): Promise<number> {
  let done = 0;
  const until = performance.now() + task.seconds * 1000;
  await Promise.all(Array.from({ length: task.inFlight }, async () => {
    while (performance.now() < until) {
      await echo(client, done);
      done += 1;
    }
  }));
  return done / task.seconds;
}

async function measureAll(task: EndpointClientTask): Promise<EndpointClientFigures[]> {
  const clients = await Promise.all(task.urls.map(connect));
  try {
    const summaries = await latencies(clients, task.runs);
    const figures: EndpointClientFigures[] = [];
    for (const [k, client] of clients.entries()) figures.push({ latency: summaries[k], rate: await rate(client, task) });
    return figures;
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

process.once('message', (task: EndpointClientTask) => {
  measureAll(task).then(
    (figures) => process.send!({ ok: true, figures }, () => process.exit(0)),
    (error: unknown) => process.send!({ ok: false, error: String(error) }, () => process.exit(1)),
  );
});
