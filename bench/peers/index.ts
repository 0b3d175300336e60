/**
 * Peers, side by side: each contestant (contestant.ts) in a warm process of its own, taken in turns for
 * several rounds; each round measures p50 (calls one after another) and calls/s at 8 in flight, and each
 * figure is reported as the median over rounds of its ratio to subako's figure in the same round. Noise on a
 * shared machine moves every contestant in a round alike; the per-round ratio cancels most of it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Row } from '../run.js';

interface Contestant {
  name: string;
  label: string;
  /** V8 flags its process needs. */
  execArgv?: string[];
  /** Off the main thread, like ours: a contestant whose calls/s we must beat. */
  mustBeat?: boolean;
}

// node:wasi with a new WASI per call segfaults Node 20 within a few thousand instances unless fast API calls
// are off (nodejs/node#46777).
const NODE_WASI_FLAGS = ['--no-turbo-fast-api-calls'];
const CONTESTANTS: Contestant[] = [
  { name: 'subako', label: 'subako FunctionHost, 2 workers' },
  { name: 'floor@2', label: 'floor (warm worker, no-op host), 2 workers' },
  { name: 'node-wasi@main', label: 'node:wasi, main thread', execArgv: NODE_WASI_FLAGS },
  { name: 'node-wasi@2', label: 'node:wasi, 2 workers', execArgv: NODE_WASI_FLAGS, mustBeat: true },
  { name: 'shim@2', label: '@bjorn3/browser_wasi_shim, 2 workers', mustBeat: true },
  { name: 'extism-fresh@main', label: 'Extism JS, new plugin per call', mustBeat: true },
  { name: 'extism-reused@main', label: 'Extism JS, one plugin reused' },
];

class Process {
  private readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  constructor(readonly contestant: Contestant) {
    this.child = fork(new URL('./contestant.js', import.meta.url), [contestant.name], {
      execArgv: [...(contestant.execArgv ?? []), '--no-warnings'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.ready = this.next().then(() => undefined);
  }
  private next(): Promise<{ value?: number; error?: string }> {
    return new Promise((resolve, reject) => {
      // One answer or the exit, whichever comes first; the other listener goes with it (an exit listener
      // left per question would pile up over the rounds).
      const onMessage = (m: unknown): void => {
        this.child.off('exit', onExit);
        resolve(m as { value?: number; error?: string });
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        this.child.off('message', onMessage);
        reject(new Error(`${this.contestant.name} exited (${signal ?? code})`));
      };
      this.child.once('message', onMessage);
      this.child.once('exit', onExit);
    });
  }
  async ask(message: object): Promise<number> {
    await this.ready;
    const answer = this.next();
    this.child.send(message);
    const { value, error } = await answer;
    if (error !== undefined || value === undefined) throw new Error(`${this.contestant.name}: ${error}`);
    return value;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function peersBench(): Promise<Row[]> {
  const rounds = Number(process.env.BENCH_PEER_ROUNDS ?? 5);
  const calls = Number(process.env.BENCH_PEER_CALLS ?? 500);
  const seconds = Number(process.env.BENCH_PEER_SECONDS ?? 1);
  const processes = CONTESTANTS.map((c) => new Process(c));
  const p50: number[][] = CONTESTANTS.map(() => []);
  const rate: number[][] = CONTESTANTS.map(() => []);
  try {
    for (let round = 0; round < rounds; round += 1) {
      for (const [i, p] of processes.entries()) {
        p50[i].push(await p.ask({ op: 'latency', calls }));
        rate[i].push(await p.ask({ op: 'rate', seconds, inFlight: 8 }));
      }
    }
  } finally {
    await Promise.allSettled(processes.map((p) => p.ask({ op: 'close' })));
  }
  const rows: Row[] = [];
  const ours = { p50: p50[0], rate: rate[0] };
  for (const [i, c] of CONTESTANTS.entries()) {
    const p50Ratio = median(p50[i].map((x, r) => x / ours.p50[r]));
    const rateRatio = median(rate[i].map((x, r) => x / ours.rate[r]));
    rows.push({ name: `peer p50: ${c.label}`, value: median(p50[i]), unit: 'ms', against: i === 0 ? undefined : { name: 'subako', value: median(ours.p50), ratio: p50Ratio } });
    rows.push({
      name: `peer calls/s at 8 in flight: ${c.label}`, value: median(rate[i]), unit: 'calls/s',
      against: i === 0 ? undefined : { name: 'subako', value: median(ours.rate), ratio: rateRatio },
      target: c.mustBeat ? { text: 'subako faster', met: rateRatio < 1, by: rateRatio >= 1 ? `×${rateRatio.toFixed(2)}` : undefined } : undefined,
    });
  }
  return rows;
}
