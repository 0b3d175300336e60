/**
 * Each session's MCP endpoint: the session's tools as the platform built them (each call logged and admitted
 * there: see platform/agent-toolbox.ts), served over Streamable HTTP for both protocol eras by mcp/'s toolbox
 * handler. This file only adapts: handlers are kept per session, rebuilt when the session's toolbox is
 * (remote tool lists refresh), and dropped when the session goes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createToolboxHandler, type ToolboxHandler, type OriginPolicy } from '../mcp/index.js';
import type { AgentToolbox, Platform, SessionRecord } from '../platform/index.js';

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
      const handler = createToolboxHandler(box.entry('mcp'), {
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
}
