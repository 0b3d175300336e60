/**
 * A real v2 SDK `McpServer` on loopback with a tool whose schema marks arguments with `x-mcp-header`
 * (SEP-2243): the SDK's own HTTP entry refuses a `tools/call` whose `Mcp-Param-*` headers are missing or
 * disagree (400, -32020), so a client that does not send them is seen failing or retrying. It records the
 * `Mcp-Param-*` headers each call arrived with.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

/** `route(region, count?, note?)`: `region` travels as Mcp-Param-Region, `count` as Mcp-Param-Count. */
export const ROUTE_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    count: { type: 'integer', 'x-mcp-header': 'Count' },
    note: { type: 'string' },
  },
  required: ['region'],
} as const;

export interface ParamHeaderServer {
  url: string;
  /** Per `tools/call` that reached the tool: the Mcp-Param-* headers it carried (lower-cased names). */
  calls: Array<Record<string, string>>;
  /** HTTP requests refused with -32020 before the tool ran. */
  refusals: number;
  stop(): Promise<void>;
}

export async function startParamHeaderServer(): Promise<ParamHeaderServer> {
  const calls: Array<Record<string, string>> = [];
  const state = { refusals: 0 };
  const handler = createMcpHandler(({ requestInfo }) => {
    const server = new McpServer({ name: 'param-header-test', version: '1.0.0' });
    const paramHeaders: Record<string, string> = {};
    requestInfo?.headers.forEach((value, name) => {
      if (name.startsWith('mcp-param-')) paramHeaders[name] = value;
    });
    server.registerTool(
      'route',
      { description: 'Says where it was routed.', inputSchema: fromJsonSchema(ROUTE_INPUT_SCHEMA as never) },
      async (args: unknown) => {
        calls.push(paramHeaders);
        return { content: [{ type: 'text', text: `routed to ${(args as { region: string }).region}` }] };
      },
    );
    return server;
  }, { onerror: (error) => { if (/param-header/.test(error.message)) state.refusals += 1; } });
  const node = toNodeHandler(handler);
  const http = createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    get refusals() {
      return state.refusals;
    },
    stop: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
