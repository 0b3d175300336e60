/**
 * A 2025-era MCP server (the v1 SDK's sessionful StreamableHTTPServerTransport with an event store, as SEP-1699
 * servers are deployed) whose tool `slow` closes the POST's SSE stream before answering: the priming event
 * carries an id and `retry: 100`, the result is stored and replayed on the client's `GET` with `Last-Event-ID`.
 * With `serveResumption: false` every such GET is answered 503, so the stream can never be resumed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface ClosingStreamServer {
  url: string;
  /** GETs that carried Last-Event-ID (resumption attempts), and how many of them were answered 503. */
  resumes: number;
  refusedResumes: number;
  /** Times the tool closed its POST stream early. */
  closedEarly: number;
  stop(): Promise<void>;
}

export async function startClosingStreamServer(options: { serveResumption: boolean }): Promise<ClosingStreamServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const state = { resumes: 0, refusedResumes: 0, closedEarly: 0 };

  const makeServer = () => {
    const server = new Server({ name: 'closing-stream', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: 'slow', description: 'Answers after closing its stream.', inputSchema: { type: 'object', properties: {} } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
      // Let the priming event reach the client, then drop the stream, then answer into the event store.
      await new Promise((resolve) => setTimeout(resolve, 20));
      extra.closeSSEStream?.();
      state.closedEarly += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { content: [{ type: 'text', text: 'done after resumption' }] };
    });
    return server;
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.headers['last-event-id'] !== undefined) {
      state.resumes += 1;
      if (!options.serveResumption) {
        state.refusedResumes += 1;
        res.writeHead(503).end('resumption unavailable');
        return;
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new InMemoryEventStore(),
        retryInterval: 100,
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      transport = created;
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  };

  const http = createServer((req, res) => void onRequest(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get resumes() {
      return state.resumes;
    },
    get refusedResumes() {
      return state.refusedResumes;
    },
    get closedEarly() {
      return state.closedEarly;
    },
    stop: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
