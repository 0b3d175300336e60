/**
 * A remote MCP server (the official v2 SDK's McpServer, on loopback) that counts every run of its tools, so a
 * test can tell how many times a call really ran: `charge` answers at once; `hold` waits until the test lets it
 * finish (`release`), so a test can act while a call is running (stop the database, retry with the same key).
 */
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { serveMcpServer } from '../../mcp/helpers/servers.js';

export interface CountingUpstream {
  url: string;
  /** Every run, in order: the tool and the arguments it received. */
  runs: { tool: string; args: Record<string, unknown> }[];
  /** How many runs of `tool` there were with these arguments (all, without them). */
  count(tool: string, matches?: (args: Record<string, unknown>) => boolean): number;
  /** Resolves once `n` runs of `hold` have started (a generous ceiling, then it throws). */
  held(n: number): Promise<void>;
  /** Lets every `hold` run started so far, and every later one, finish. */
  release(): void;
  stop(): Promise<void>;
}

export async function serveCountingUpstream(): Promise<CountingUpstream> {
  const runs: CountingUpstream['runs'] = [];
  let open!: () => void;
  let released = new Promise<void>((resolve) => { open = resolve; });
  const heldWaiters: { n: number; wake: () => void }[] = [];
  const holds = () => runs.filter((r) => r.tool === 'hold').length;
  const server = await serveMcpServer(() => {
    const mcp = new McpServer({ name: 'ledger', version: '1.0.0' });
    mcp.registerTool('charge', { description: 'Charges an amount; answers which run this was.', inputSchema: z.object({ amount: z.number() }) }, async (args) => {
      runs.push({ tool: 'charge', args });
      return { content: [{ type: 'text', text: `charged ${args.amount} (run ${runs.length})` }] };
    });
    mcp.registerTool('hold', { description: 'Runs until the test releases it.', inputSchema: z.object({ id: z.string() }) }, async (args) => {
      runs.push({ tool: 'hold', args });
      for (const waiter of heldWaiters.filter((w) => holds() >= w.n)) waiter.wake();
      await released;
      return { content: [{ type: 'text', text: `held ${args.id} done (run ${runs.length})` }] };
    });
    return mcp;
  });
  return {
    url: server.url,
    runs,
    count: (tool, matches = () => true) => runs.filter((r) => r.tool === tool && matches(r.args)).length,
    held: (n) => new Promise<void>((resolve, reject) => {
      if (holds() >= n) return resolve();
      const timer = setTimeout(() => reject(new Error(`${n} runs of hold did not start (${holds()} did)`)), 60_000);
      heldWaiters.push({ n, wake: () => { clearTimeout(timer); resolve(); } });
    }),
    release: () => {
      open();
      released = Promise.resolve();
    },
    stop: server.stop,
  };
}
