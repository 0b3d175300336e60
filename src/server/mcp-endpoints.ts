/**
 * Each session's MCP endpoint: the session's tools as the platform built them (each call logged and admitted
 * there: see platform/agent-toolbox.ts), and its remote servers' resources and prompts, served over Streamable HTTP for both protocol eras by mcp/'s toolbox
 * handler. This file only adapts: handlers are kept per session, rebuilt when the session's toolbox is
 * (remote tool lists refresh), and dropped when the session goes. A handler replaced by a rebuild is closed
 * once the requests it is serving have been answered: closing it at once would abort them. The calls in flight by
 * request id go from a handler to the one that replaces it, so a `notifications/cancelled` reaches a call the old
 * one is still serving.
 *
 * A session's clients may listen (`subscriptions/listen`): its handlers, old and new, serve the session's one change
 * feed under its limits (platform/session-listens.ts), and a rebuild whose tools differ announces a tools change.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createToolboxHandler, InFlightCalls, type ToolboxHandler, type OriginPolicy } from '../mcp/index.js';
import type { AgentToolbox, Platform, SessionRecord } from '../platform/index.js';

interface Served {
  box: AgentToolbox;
  handler: ToolboxHandler;
  /** The session's calls in flight by request id, kept across rebuilds. */
  inFlightCalls: InFlightCalls;
  /** Requests this handler is serving now. */
  inFlight: number;
  /** Replaced by a rebuild: closed when its last request is answered. */
  retired: boolean;
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
      if (served) this.retire(served);
      const inFlightCalls = served?.inFlightCalls ?? new InFlightCalls();
      // A rebuilt toolbox whose tools differ is announced to the session's listeners (session-listens.ts).
      const listens = this.platform.listens.forSession(session.id, box);
      const handler = createToolboxHandler(box.entry('mcp'), {
        ...this.origins,
        serverInfo: { name: `subako agent ${session.agentId}`, version: String(session.agentVersion) },
        // The agent's remote servers' resources, templates and prompts, named per server, beside the tools.
        catalog: box.catalog, toolsCache: box.listHint,
        // Discovery "search" lists the entry tools and search_tools; a pinned tool whose definition changed is refused with why.
        withheld: box.withheld, ...(box.listed ? { listed: box.listed } : {}),
        // A long call of a client that declared the tasks extension becomes a task, kept in the store for every replica.
        // A remote server's own task passed through is reached by its tool in the session's toolbox as it is now.
        tasks: this.platform.tasks.forSession(session, async (tool) => {
          const tools = (await this.platform.toolboxes.forSession(session)).entry('mcp');
          return Object.hasOwn(tools, tool) ? tools[tool].upstreamTasks : undefined;
        }),
        inFlight: inFlightCalls,
        // The session's input relay and approvals seal their states themselves, bound to the session.
        requestStateKey: 'verbatim',
        // Its servers' changes and its own, renamed as the session names things, each stream paced.
        changes: listens.feed, listenGate: listens.gate, listChangedPaceMs: listens.paceMs,
      });
      served = { box, handler, inFlightCalls, inFlight: 0, retired: false };
      this.served.set(session.id, served);
    }
    const serving = served;
    serving.inFlight += 1;
    try {
      await serving.handler.handleNode(req, res);
    } finally {
      serving.inFlight -= 1;
      if (serving.retired && serving.inFlight === 0) void serving.handler.close().catch(() => undefined);
    }
  }

  private retire(served: Served): void {
    served.retired = true;
    if (served.inFlight === 0) void served.handler.close().catch(() => undefined);
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
