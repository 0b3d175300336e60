/**
 * The client side of the MCP endpoint benchmark, run in its own process (bench/endpoint.ts forks it): the
 * official v2 client connects to the URL it is given, times calls one at a time (p50), then keeps 8 in
 * flight for a while (calls per second), and sends the figures back over IPC.
 *
 * Why a process of its own: the official client costs about as much CPU per call as the server does, and
 * in the server's process it would be charged to the server (both on one event loop). Apart, each has a
 * core of the machine's two, as a client and a server on one host would; the sandbox's workers share them.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { sample, summarize, type Summary } from './stats.js';

export interface EndpointClientTask {
  /** Measured one after the other, each with a client of its own. */
  urls: string[];
  /** Calls timed one at a time (after a warm-up). */
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

async function measure(url: string, task: EndpointClientTask): Promise<EndpointClientFigures> {
  const client = new Client({ name: 'subako-bench', version: '1' }, { versionNegotiation: { mode: 'auto' } } as never);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const latency = summarize(await sample(task.runs, 50, () => client.callTool({ name: 'echo', arguments: { x: 1 } })));
    let done = 0;
    const until = performance.now() + task.seconds * 1000;
    await Promise.all(Array.from({ length: task.inFlight }, async () => {
      while (performance.now() < until) {
        await client.callTool({ name: 'echo', arguments: { x: done } });
        done += 1;
      }
    }));
    return { latency, rate: done / task.seconds };
  } finally {
    await client.close();
  }
}

async function measureAll(task: EndpointClientTask): Promise<EndpointClientFigures[]> {
  const figures: EndpointClientFigures[] = [];
  for (const url of task.urls) figures.push(await measure(url, task));
  return figures;
}

process.once('message', (task: EndpointClientTask) => {
  measureAll(task).then(
    (figures) => process.send!({ ok: true, figures }, () => process.exit(0)),
    (error: unknown) => process.send!({ ok: false, error: String(error) }, () => process.exit(1)),
  );
});
