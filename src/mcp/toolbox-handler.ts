/**
 * A Toolbox (and the resources, templates and prompts beside its tools: served.ts) served as an MCP endpoint over Streamable HTTP, independent of where it is mounted: `serve` puts
 * it behind a capability URL, the platform server mounts one per session. Composed of three parts, each in
 * its own file: the MCP server of the toolbox (toolbox-server.ts), the one gate every request passes first —
 * Origin, body size, batch size (endpoint-admission.ts) — and two faces onto them: the web-standard one
 * (`handler(request)`, here) and `handler.handleNode(req, res)` for node:http (node-adapter.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Catalog } from './catalog.js';
import { partitionServed, type ServedToolbox } from './served.js';
import { staticCatalog } from './static-catalog.js';
import {
  BODY_TOO_LARGE, BodyReadError, DEFAULT_MAX_BATCH_MESSAGES, DEFAULT_MAX_BODY_BYTES, admitRequest, refusalBody,
  type AdmissionSettings, type BodyText, type Refusal,
} from './endpoint-admission.js';
import { nodeFace } from './node-adapter.js';
import { originCheck, type OriginPolicy } from './origin.js';
import { RequestStateSeal } from './request-state-seal.js';
import { toolboxServer } from './toolbox-server.js';
import type { TaskHost } from './task-protocol.js';
import type { InFlightCalls } from './in-flight-calls.js';
import type { ChangeFeed } from './change-feed.js';
import type { ListenGate } from './listen-bus.js';

export interface ToolboxHandlerOptions extends OriginPolicy {
  serverInfo?: { name: string; version: string };
  instructions?: string;
  /** Largest request body accepted, in bytes (default 4 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /** Tools (and resources, templates, prompts) per listing page (default 100). */
  pageSize?: number;
  /**
   * Resources, resource templates and prompts served beside the tools, from something that is not a definition
   * (a remote server's, a session's). Definitions can instead be entries of the toolbox, not both.
   */
  catalog?: Catalog;
  /** The caching hints `tools/list` answers with (the SDK's defaults, 0 ms and private, when absent). */
  toolsCache?: { ttlMs?: number; cacheScope?: 'public' | 'private' };
  /** The names `tools/list` shows (default: every tool); the others stay callable by name. */
  listed?: readonly string[];
  /** Names not served, each with why: a call to one is refused with that sentence. */
  withheld?: ReadonlyMap<string, string>;
  /** Keeps the tasks of the tasks extension: given, a long call of a client that declared it may become a task (task-protocol.ts). */
  tasks?: TaskHost;
  /**
   * The calls in flight by request id, which `notifications/cancelled` stops: give the previous handler's when this
   * one replaces it under the same clients (a new one when absent).
   */
  inFlight?: InFlightCalls;
  /**
   * How the `requestState` a tool, prompt or resource gives with its input requests travels: sealed (AES-256-GCM,
   * bound to the request it answers, good for 15 minutes: request-state-seal.ts) under this 32-byte key — a fresh
   * random one when absent, enough for a toolbox served by one process — and opened on the retry, a forged or
   * altered one refused with -32602; or `'verbatim'`, for a host whose tools seal their own states (a session's
   * input relay binds them to the session).
   */
  requestStateKey?: Buffer | 'verbatim';
  /**
   * Where the toolbox's list changes and resource updates are published (`feed.toolsChanged()`,
   * `feed.resourceUpdated(uri)`…): given, clients may open `subscriptions/listen` and hear them (change-feed.ts).
   */
  changes?: ChangeFeed;
  /** At most one list change of each kind per this many ms on each listen stream (default 0: unpaced). */
  listChangedPaceMs?: number;
  /** Decides whether a listen stream may open, and hears when it ends (a host's limits: a session's). */
  listenGate?: ListenGate;
  /** Messages a JSON-RPC batch may carry (default 8); larger batches are refused whole with 400. */
  maxBatchMessages?: number;
  /** Reports failures the client does not see (a tool that threw, a refused request). Never given a secret. */
  onerror?: (error: Error) => void;
}

export type ToolboxHandler = ((request: Request) => Promise<Response>) & {
  /** The same endpoint answered straight from node:http (same checks, same answers). */
  handleNode(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Aborts in-flight exchanges. */
  close(): Promise<void>;
};

/** A web request's body as text, or BODY_TOO_LARGE as soon as more than `limit` bytes have arrived. */
async function readWebBody(request: Request, limit: number): Promise<BodyText> {
  const reader = request.body!.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (error) {
      throw new BodyReadError(error);
    }
    if (chunk.done) break;
    received += chunk.value.byteLength;
    if (received > limit) {
      void reader.cancel().catch(() => undefined); // cancelling a stream that already failed
      return BODY_TOO_LARGE;
    }
    chunks.push(chunk.value);
  }
  return Buffer.concat(chunks, received).toString('utf8');
}

function refusalResponse(refusal: Refusal): Response {
  return new Response(refusalBody(refusal), {
    status: refusal.status,
    headers: { 'content-type': 'application/json', ...refusal.headers },
  });
}

export function createToolboxHandler(served: ServedToolbox, options: ToolboxHandlerOptions = {}): ToolboxHandler {
  const { toolbox, definitions } = partitionServed(served);
  if (definitions.length > 0 && options.catalog !== undefined) {
    throw new TypeError('give resources and prompts either as entries of the toolbox (defineResource, definePrompt) or as the catalog option, not both');
  }
  const catalog = options.catalog ?? (definitions.length > 0 ? staticCatalog(definitions, options.pageSize) : undefined);
  const settings: AdmissionSettings = {
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxBatchMessages: Math.max(1, options.maxBatchMessages ?? DEFAULT_MAX_BATCH_MESSAGES),
    isOriginAllowed: originCheck(options),
    report: options.onerror ?? (() => undefined),
  };
  const mcp = toolboxServer(toolbox, {
    serverInfo: options.serverInfo, instructions: options.instructions, pageSize: options.pageSize,
    ...(catalog !== undefined ? { catalog } : {}), ...(options.toolsCache !== undefined ? { toolsCache: options.toolsCache } : {}),
    ...(options.listed !== undefined ? { listed: options.listed } : {}), ...(options.withheld !== undefined ? { withheld: options.withheld } : {}),
    ...(options.tasks !== undefined ? { tasks: options.tasks } : {}),
    ...(options.inFlight !== undefined ? { inFlight: options.inFlight } : {}),
    ...(options.changes !== undefined ? { changes: options.changes } : {}),
    ...(options.listChangedPaceMs !== undefined ? { listChangedPaceMs: options.listChangedPaceMs } : {}),
    ...(options.listenGate !== undefined ? { listenGate: options.listenGate } : {}),
    ...(options.requestStateKey === 'verbatim' ? {} : { requestStateSeal: new RequestStateSeal(options.requestStateKey) }),
    maxBodyBytes: settings.maxBodyBytes, report: settings.report,
  });

  const handle = async (request: Request): Promise<Response> => {
    const hasBody = request.method.toUpperCase() === 'POST' && request.body !== null;
    const head = { origin: request.headers.get('origin'), contentLength: request.headers.get('content-length'), hasBody };
    const gate = await admitRequest(head, (limit) => readWebBody(request, limit), settings);
    if ('refused' in gate) return refusalResponse(gate.refused);
    if (!hasBody) return mcp.fetch(request);
    const { text, parsed } = gate.admitted;
    // The original's body is spent: the SDK gets the same request again, with the parsed value or the text.
    const again = new Request(request.url, { method: request.method, headers: request.headers, signal: request.signal, ...(parsed ? {} : { body: text }) });
    return mcp.fetch(again, parsed !== undefined ? { parsedBody: parsed.value } : undefined);
  };
  return Object.assign(handle, { handleNode: nodeFace(mcp, settings), close: () => mcp.close() });
}
