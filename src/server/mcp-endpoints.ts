/**
 * Each session's MCP endpoint: the session's toolbox, every call logged (and admitted: see call-admission.ts),
 * served over Streamable HTTP for both protocol eras by mcp/'s toolbox handler. Handlers are kept per session and rebuilt when the session's
 * toolbox is (remote tool lists refresh), and dropped when the session goes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createToolboxHandler, ToolCallRefusedError, type ToolboxHandler, type OriginPolicy } from '../mcp/index.js';
import { CallRefusedError, type AgentToolbox, type Platform, type SessionRecord } from '../platform/index.js';
import type { Tool, Toolbox } from '../tool.js';

interface Served {
  box: AgentToolbox;
  handler: ToolboxHandler;
}

export class SessionMcpEndpoints {
  private readonly served = new Map<string, Served>();

  constructor(private readonly platform: Platform, private readonly origins: OriginPolicy = {}) {
    platform.sessions.onGone((id) => this.drop(id));
  }

  async serve(session: SessionRecord, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const box = await this.platform.toolboxes.forSession(session);
    let served = this.served.get(session.id);
    if (!served || served.box !== box) {
      if (served) void served.handler.close().catch(() => undefined);
      const handler = createToolboxHandler(this.logged(session, box), {
        ...this.origins,
        serverInfo: { name: `subako agent ${session.agentId}`, version: String(session.agentVersion) },
      });
      served = { box, handler };
      this.served.set(session.id, served);
    }
    await served.handler.handleNode(req, res);
  }

  drop(sessionId: string): void {
    const served = this.served.get(sessionId);
    this.served.delete(sessionId);
    if (served) void served.handler.close().catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    const all = [...this.served.values()];
    this.served.clear();
    await Promise.all(all.map((s) => s.handler.close().catch(() => undefined)));
  }

  /** The toolbox as served: each call goes through the call log. */
  private logged(session: SessionRecord, box: AgentToolbox): Toolbox {
    const out: Toolbox = {};
    for (const [name, tool] of Object.entries(box.tools)) {
      const wrapped: Tool = {
        name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        source: tool.source,
        call: async (args, ctx) => {
          try {
            return (await this.platform.calls.run(session, 'mcp', name, tool, args, box.secrets, ctx?.signal)).result;
          } catch (err) {
            // Refused before it ran (the session's or agent's queue is full): a JSON-RPC error with the retry
            // hint, as REST answers 429; not a tool result the model would read as the tool failing.
            if (err instanceof CallRefusedError) throw new ToolCallRefusedError(err.message, { retryAfterMs: err.retryAfterMs, limit: err.limit }, err.code);
            throw err;
          }
        },
      };
      Object.defineProperty(out, name, { value: wrapped, enumerable: true });
    }
    return out;
  }
}
