/**
 * A Toolbox served as an MCP endpoint over Streamable HTTP, web-standard (`Request -> Response`), for both
 * eras: 2026-07-28 stateless (server/discover, per-request envelopes) and 2025-era clients (`initialize`,
 * served statelessly), both through the v2 server SDK's `createMcpHandler` and one server factory.
 *
 * Independent of where it is mounted: `serve` puts it behind a capability URL, the platform server mounts
 * one per session. Before the SDK sees a request, the Origin is checked (403) and a declared body size over
 * the limit is refused (413); the SDK enforces the same limit on bodies without a declared size.
 */
import { Server, ProtocolError, ProtocolErrorCode, createMcpHandler } from '@modelcontextprotocol/server';
import type { CallToolResult, Toolbox } from '../tool.js';
import { SUBAKO_VERSION } from '../version.js';
import { errorResult } from './define-tool.js';
import { isOriginAllowed, type OriginPolicy } from './origin.js';

export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const DEFAULT_PAGE_SIZE = 100;

export interface ToolboxHandlerOptions extends OriginPolicy {
  serverInfo?: { name: string; version: string };
  instructions?: string;
  /** Largest request body accepted, in bytes (default 4 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /** Tools per `tools/list` page (default 100). */
  pageSize?: number;
  /** Reports failures the client does not see (a tool that threw, a refused request). Never given a secret. */
  onerror?: (error: Error) => void;
}

export type ToolboxHandler = ((request: Request) => Promise<Response>) & {
  /** Aborts in-flight exchanges. */
  close(): Promise<void>;
};

function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

function decodeCursor(cursor: string): number | undefined {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

export function createToolboxHandler(toolbox: Toolbox, options: ToolboxHandlerOptions = {}): ToolboxHandler {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const pageSize = Math.max(1, options.pageSize ?? DEFAULT_PAGE_SIZE);
  const serverInfo = options.serverInfo ?? { name: 'subako', version: SUBAKO_VERSION };
  const report = options.onerror ?? (() => undefined);
  // A snapshot: the served tool set does not change under a client (the spec asks for a stable listing).
  const names = Object.keys(toolbox);
  const byName = new Map(names.map((name) => [name, toolbox[name]]));
  const descriptors = names.map((name) => {
    const tool = byName.get(name)!;
    return {
      name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: tool.inputSchema,
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    };
  });

  const factory = () => {
    const server = new Server(serverInfo, {
      capabilities: { tools: {} },
      ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
    });
    server.setRequestHandler('tools/list', async (request) => {
      const cursor = request.params?.cursor;
      const offset = cursor === undefined ? 0 : decodeCursor(cursor);
      if (offset === undefined || offset > descriptors.length) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor');
      }
      const page = descriptors.slice(offset, offset + pageSize);
      const next = offset + pageSize < descriptors.length ? encodeCursor(offset + pageSize) : undefined;
      return { tools: page as never, ...(next !== undefined ? { nextCursor: next } : {}) };
    });
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const name = request.params.name;
      const tool = byName.get(name);
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      let result: CallToolResult;
      try {
        // Each source checks arguments its own way: defineTool and remote tools against the schema before
        // any work, function packages in the guest (the ABI page: Subako does not check them). Checking here
        // too would change what a function's own validation says, and keep refused calls out of the call log.
        result = await tool.call(args, { signal: ctx.mcpReq.signal });
      } catch (err) {
        if (err instanceof Error) report(err);
        result = errorResult(err);
      }
      return server.projectCallToolResult(result as never, tool.outputSchema) as never;
    });
    return server;
  };

  const mcp = createMcpHandler(factory, {
    maxRequestBodySize: maxBodyBytes,
    onerror: (error) => report(error),
  });

  const handle = async (request: Request): Promise<Response> => {
    const origin = request.headers.get('origin');
    if (!isOriginAllowed(origin, options)) {
      report(new Error(`refused a request from a disallowed Origin`));
      return jsonRpcError(403, -32000, 'Forbidden: Origin not allowed');
    }
    const declared = request.headers.get('content-length');
    if (declared !== null && Number(declared) > maxBodyBytes) {
      return jsonRpcError(413, -32000, `Request body larger than ${maxBodyBytes} bytes`);
    }
    return mcp.fetch(request);
  };
  return Object.assign(handle, { close: () => mcp.close() });
}
