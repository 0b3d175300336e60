/**
 * A Toolbox served as an MCP endpoint over Streamable HTTP, web-standard (`Request -> Response`), for both
 * eras: 2026-07-28 stateless (server/discover, per-request envelopes) and 2025-era clients (`initialize`,
 * served statelessly), both through the v2 server SDK's `createMcpHandler` and one server factory.
 *
 * Independent of where it is mounted: `serve` puts it behind a capability URL, the platform server mounts
 * one per session. Before the SDK sees a request, the Origin is checked (403) and a declared body size over
 * the limit is refused (413); the SDK enforces the same limit on bodies without a declared size.
 *
 * A JSON-RPC batch (an array body, which only 2025-03-26 clients send; later revisions removed batching) is
 * answered only when it carries at most `maxBatchMessages` messages; a larger one is refused whole (400,
 * -32600) before anything in it runs, so one POST cannot start more calls than a client may make at once.
 *
 * A tool that throws ToolCallRefusedError (the platform's per-session limits: too many calls waiting) is
 * answered with a JSON-RPC error (-32000, `data.retryAfterMs`) instead of a tool result: nothing ran, and a
 * model reading "try later" as the tool's own failure would be misled.
 *
 * Two faces, one endpoint: the web-standard one (`handler(request)`) and `handler.handleNode(req, res)` for
 * node:http, which reads the body once, hands the SDK the parsed JSON and writes a JSON answer in one piece
 * (see nodeFace below for why it does not go through a generic Node-to-fetch adapter).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server, ProtocolError, ProtocolErrorCode, createMcpHandler } from '@modelcontextprotocol/server';
import type { CallToolResult, Toolbox } from '../tool.js';
import { SubakoError } from '../errors.js';
import { SUBAKO_VERSION } from '../version.js';
import { errorResult } from './define-tool.js';
import { originCheck, type OriginPolicy } from './origin.js';

export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Messages one JSON-RPC batch may carry (2025-03-26 clients batch; later revisions do not). */
export const DEFAULT_MAX_BATCH_MESSAGES = 8;
/** The JSON-RPC error code of a call refused before it ran (a server error in JSON-RPC's reserved range). */
export const CALL_REFUSED_RPC_CODE = -32000;

/**
 * Thrown by a tool to refuse a call before anything ran (a rate or queue limit); the endpoint answers a
 * JSON-RPC error carrying `data` (e.g. `{ retryAfterMs, limit }`) rather than a tool result.
 */
export class ToolCallRefusedError extends SubakoError {
  constructor(message: string, readonly data: { retryAfterMs: number; [key: string]: unknown }, code = 'tool_call_refused') {
    super(code, message);
  }
}
const DEFAULT_PAGE_SIZE = 100;

export interface ToolboxHandlerOptions extends OriginPolicy {
  serverInfo?: { name: string; version: string };
  instructions?: string;
  /** Largest request body accepted, in bytes (default 4 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /** Tools per `tools/list` page (default 100). */
  pageSize?: number;
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

function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** The refusal of a batch larger than `max`, or null when `body` is no batch or a small enough one. */
function batchRefusal(body: unknown, max: number): string | null {
  if (!Array.isArray(body) || body.length <= max) return null;
  return `Invalid Request: a JSON-RPC batch may carry at most ${max} messages; this one carries ${body.length}. ` +
    'Send fewer per POST (protocol revisions after 2025-03-26 carry one message per POST)';
}

/** What the SDK's handler face takes besides the request: a body the caller already parsed. */
type McpFetch = (request: Request, options?: { parsedBody?: unknown }) => Promise<Response>;

const TOO_LARGE = Symbol('too large');

/**
 * The body as text, or TOO_LARGE as soon as more than `limit` bytes have arrived (reading stops there).
 * Rejects when the stream fails or closes before its end (the client went away mid-body).
 */
function readNodeBody(req: IncomingMessage, limit: number): Promise<string | typeof TOO_LARGE> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.byteLength;
      if (received > limit) {
        cleanup();
        req.resume(); // discard the rest; the 413 closes the connection
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, received).toString('utf8'));
    };
    const onError = (error?: Error) => {
      cleanup();
      reject(error ?? new Error('the request closed before its body ended'));
    };
    const onClose = () => onError();
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** A web request's body as text, or TOO_LARGE as soon as more than `limit` bytes have arrived. */
async function readWebBody(request: Request, limit: number): Promise<string | typeof TOO_LARGE> {
  const reader = request.body!.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > limit) {
      void reader.cancel().catch(() => undefined);
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, received).toString('utf8');
}

function writeJsonRpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  const code = status === 500 ? -32603 : message.startsWith('Parse error') ? -32700 : message.startsWith('Invalid Request') ? -32600 : -32000;
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Writes a web Response to node:http: a JSON answer in one write with its length, a stream (SSE) as it comes. */
async function writeResponse(res: ServerResponse, response: Response, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (response.body === null) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  if (/^application\/json\b/i.test(headers['content-type'] ?? '')) {
    const body = Buffer.from(await response.arrayBuffer());
    headers['content-length'] = String(body.byteLength);
    delete headers['transfer-encoding'];
    res.writeHead(response.status, headers);
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            signal.removeEventListener('abort', go);
            resolve();
          };
          res.on('drain', go);
          signal.addEventListener('abort', go, { once: true });
        });
      }
    }
  } catch {
    // the stream failed or was cancelled: end what was written
  } finally {
    signal.removeEventListener('abort', stop);
  }
  res.end();
}

function webRequest(req: IncomingMessage, method: string, signal: AbortSignal, body?: string): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!raw[i].startsWith(':')) headers.append(raw[i], raw[i + 1]);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method, headers, signal, ...(body ? { body } : {}) });
}

/** Reads `name` of `target` if it has it, else of the real object `fallback()` builds (methods bound to it). */
function withFallback<T extends object>(target: T, fallback: () => object): T {
  return new Proxy(target, {
    get(own, name) {
      if (name in own) return Reflect.get(own, name);
      const real = fallback();
      const value: unknown = Reflect.get(real, name, real);
      return typeof value === 'function' ? value.bind(real) : value;
    },
  });
}

/**
 * The request as the SDK sees it when it is given the parsed body: what it reads of a request then is the
 * method, header values (`headers.get`) and the abort signal. Building a real Request for that (URL parse,
 * Headers validation, a second signal that follows ours) cost a fifth of the endpoint's CPU per call. The
 * view answers those from node's request, with Headers' semantics (a repeated header's values joined by
 * ", "); anything else is read from a real, body-less Request built on first use, so it behaves as one.
 */
function requestView(req: IncomingMessage, method: string, signal: AbortSignal): Request {
  let real: Request | undefined;
  const build = () => (real ??= webRequest(req, method, signal));
  const value = (name: string): string | null => {
    const values = req.headersDistinct[name.toLowerCase()];
    return values === undefined ? null : values.join(', ');
  };
  const headers = withFallback({ get: value, has: (name: string) => value(name) !== null }, () => build().headers);
  return withFallback({ method, headers, signal }, build) as unknown as Request;
}

/**
 * The node:http face. A generic adapter (the SDK's toNodeHandler) turns the request into a web Request with a
 * body stream, which the SDK then clones (a tee) to read and parse, and turns the answer's stream back into
 * writes: most of the endpoint's cost for a small call. Here the body is read once into text and parsed
 * once; the SDK gets the parsed value (its `parsedBody` option) with a view of the request for headers and
 * the abort signal (requestView), and a JSON answer is written in one piece with its length. A body that is
 * empty or not JSON goes to the SDK as text, so its answers (parse error, legacy fallback) stay its own.
 */
function nodeFace(
  mcp: { fetch: McpFetch },
  settings: { maxBodyBytes: number; maxBatchMessages: number; isOriginAllowed: (origin: string | null | undefined) => boolean; report: (error: Error) => void },
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { maxBodyBytes, maxBatchMessages, isOriginAllowed, report } = settings;
  const tooLarge = `Request body larger than ${maxBodyBytes} bytes`;
  return async (req, res) => {
    if (!isOriginAllowed(req.headers.origin)) {
      report(new Error(`refused a request from a disallowed Origin`));
      req.resume();
      writeJsonRpcError(res, 403, 'Forbidden: Origin not allowed');
      return;
    }
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBodyBytes) {
      req.resume();
      writeJsonRpcError(res, 413, tooLarge, { connection: 'close' });
      return;
    }
    // The client going away aborts the exchange (and through it the tool call's signal).
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const method = (req.method ?? 'GET').toUpperCase();
    let text: string | undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      let body: string | typeof TOO_LARGE;
      try {
        body = await readNodeBody(req, maxBodyBytes);
      } catch {
        if (!res.headersSent && !res.destroyed) writeJsonRpcError(res, 400, 'Parse error: the request body could not be read');
        return;
      }
      if (body === TOO_LARGE) {
        writeJsonRpcError(res, 413, tooLarge, { connection: 'close' });
        return;
      }
      text = body;
    }
    let parsed: { value: unknown } | undefined;
    if (text !== undefined && text.length > 0) {
      try {
        parsed = { value: JSON.parse(text) };
      } catch {
        parsed = undefined;
      }
    }
    const refused = parsed === undefined ? null : batchRefusal(parsed.value, maxBatchMessages);
    if (refused) {
      report(new Error(refused));
      writeJsonRpcError(res, 400, refused);
      return;
    }
    let request: Request;
    try {
      request = parsed !== undefined ? requestView(req, method, abort.signal) : webRequest(req, method, abort.signal, text);
    } catch {
      writeJsonRpcError(res, 400, 'Bad Request');
      return;
    }
    let response: Response;
    try {
      response = await mcp.fetch(request, parsed !== undefined ? { parsedBody: parsed.value } : undefined);
    } catch (error) {
      report(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent) writeJsonRpcError(res, 500, 'Internal server error');
      return;
    }
    await writeResponse(res, response, abort.signal);
  };
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
  const maxBatchMessages = Math.max(1, options.maxBatchMessages ?? DEFAULT_MAX_BATCH_MESSAGES);
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
        if (err instanceof ToolCallRefusedError) throw new ProtocolError(CALL_REFUSED_RPC_CODE, err.message, err.data);
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

  const isOriginAllowed = originCheck(options);
  const handle = async (request: Request): Promise<Response> => {
    if (!isOriginAllowed(request.headers.get('origin'))) {
      report(new Error(`refused a request from a disallowed Origin`));
      return jsonRpcError(403, -32000, 'Forbidden: Origin not allowed');
    }
    const declared = request.headers.get('content-length');
    if (declared !== null && Number(declared) > maxBodyBytes) {
      return jsonRpcError(413, -32000, `Request body larger than ${maxBodyBytes} bytes`);
    }
    if (request.method.toUpperCase() !== 'POST' || request.body === null) return mcp.fetch(request);
    // The body is read here (bounded, as the SDK would) to see whether it is a batch too large to serve.
    const text = await readWebBody(request, maxBodyBytes);
    if (text === TOO_LARGE) return jsonRpcError(413, -32000, `Request body larger than ${maxBodyBytes} bytes`);
    let parsed: { value: unknown } | undefined;
    try {
      parsed = text.length > 0 ? { value: JSON.parse(text) } : undefined;
    } catch {
      parsed = undefined;
    }
    const refused = parsed === undefined ? null : batchRefusal(parsed.value, maxBatchMessages);
    if (refused) {
      report(new Error(refused));
      return jsonRpcError(400, -32600, refused);
    }
    // The original's body is spent: the SDK gets the same request again, with the parsed value or the text.
    const again = new Request(request.url, { method: request.method, headers: request.headers, signal: request.signal, ...(parsed ? {} : { body: text }) });
    return mcp.fetch(again, parsed !== undefined ? { parsedBody: parsed.value } : undefined);
  };
  const handleNode = nodeFace(mcp, { maxBodyBytes, maxBatchMessages, isOriginAllowed, report });
  return Object.assign(handle, { handleNode, close: () => mcp.close() });
}
