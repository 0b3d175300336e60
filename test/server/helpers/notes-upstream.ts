/**
 * The `notes` upstream of the listen tests: a v2 low-level Server on loopback (createMcpHandler with its event bus)
 * whose tools grow on request, whose resources can be announced as updated (its bus tells the listen streams open on
 * it), and whose prompt `confirmed` asks a person to confirm first (an input request with a state of its own).
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryServerEventBus, Server, createMcpHandler, inputRequired } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

/** The `notes` upstream: its tools grow on request, its resources can be updated, its bus tells listeners. */
export interface Notes {
  url: string;
  bus: InMemoryServerEventBus;
  tools: string[];
  /** prompts/get requests it answered, and whether they carried answers. */
  prompts: { answered: boolean; state: unknown }[];
  stop(): Promise<void>;
}

export async function serveNotes(): Promise<Notes> {
  const bus = new InMemoryServerEventBus();
  const notes: Notes = { url: '', bus, tools: ['jot'], prompts: [], stop: async () => undefined };
  const handler = createMcpHandler(() => {
    const server = new Server({ name: 'notes', version: '1.0.0' }, {
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true, subscribe: true }, prompts: { listChanged: true } },
    });
    server.setRequestHandler('tools/list', async () => ({ tools: notes.tools.map((name) => ({ name, description: `the ${name} tool`, inputSchema: { type: 'object' } })) }) as never);
    server.setRequestHandler('tools/call', async (request) => ({ content: [{ type: 'text', text: `${request.params.name} done` }] }) as never);
    server.setRequestHandler('resources/list', async () => ({ resources: [{ uri: 'notes://a', name: 'a' }, { uri: 'notes://b', name: 'b' }] }) as never);
    server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [] }) as never);
    server.setRequestHandler('resources/read', async (request) => ({ contents: [{ uri: request.params.uri, text: 'note' }] }) as never);
    server.setRequestHandler('prompts/list', async () => ({ prompts: [{ name: 'confirmed', description: 'Needs a person to confirm first.' }] }) as never);
    server.setRequestHandler('prompts/get', async (_request, ctx) => {
      const mcpReq = ctx.mcpReq as unknown as { inputResponses?: Record<string, unknown>; requestState(): unknown };
      notes.prompts.push({ answered: mcpReq.inputResponses !== undefined, state: mcpReq.requestState() });
      if (mcpReq.inputResponses?.confirm === undefined) {
        return inputRequired({
          inputRequests: { confirm: inputRequired.elicit({ message: 'Go on?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } as never }) },
          requestState: 'notes-prompt-state',
        }) as never;
      }
      return { messages: [{ role: 'user', content: { type: 'text', text: 'confirmed prompt' } }] } as never;
    });
    return server;
  }, { bus });
  const node = toNodeHandler(handler);
  const http: HttpServer = createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  notes.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  notes.stop = () => new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
  return notes;
}

