/**
 * The load generator of the MCP endpoint comparison, in a process of its own (bench/endpoint-peers.ts forks
 * it): autocannon sends one pre-formed HTTP request over keep-alive connections as fast as answers come, so
 * what it costs falls on this process, never on the servers measured. Each task it is sent over IPC is one
 * timed run against one URL; it answers with the rate, the latency p50 and what went wrong.
 */
import autocannon from 'autocannon';

export interface LoadTask {
  url: string;
  connections: number;
  seconds: number;
  body: string;
  headers: Record<string, string>;
  /** The one answer every request must get (the endpoints answer a fixed request the same way each time). */
  expectBody: string;
}

export interface LoadFigures {
  /** Answers per second (2xx only; the others are counted apart). */
  rate: number;
  p50Ms: number;
  errors: number;
  non2xx: number;
  /** 2xx answers that were not the expected one (a JSON-RPC error, such as a refusal, still comes as 200). */
  mismatches: number;
}

async function run(task: LoadTask): Promise<LoadFigures> {
  const result = await autocannon({
    url: task.url,
    method: 'POST',
    connections: task.connections,
    pipelining: 1,
    duration: task.seconds,
    headers: task.headers,
    body: task.body,
    expectBody: task.expectBody,
  });
  const ok = result['2xx'] - result.mismatches;
  return { rate: ok / task.seconds, p50Ms: result.latency.p50, errors: result.errors + result.timeouts, non2xx: result.non2xx, mismatches: result.mismatches };
}

process.on('message', (task: LoadTask) => {
  run(task).then(
    (figures) => process.send!({ ok: true, figures }),
    (error: unknown) => process.send!({ ok: false, error: String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
