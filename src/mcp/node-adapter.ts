/**
 * The node:http face of an MCP endpoint: the gate (endpoint-admission.ts), then the SDK's handler, answered
 * straight from node:http.
 *
 * Ours, not the SDK's `toNodeHandler` (@modelcontextprotocol/node), because it is faster where it counts: the
 * SDK's adapter, even handed the parsed body, builds a full web Request (URL parse, Headers, the body
 * serialized again) and streams the answer back chunk by chunk. Here the SDK gets the parsed value with a view
 * of the request for headers and the abort signal (requestView), and a JSON answer is written in one piece
 * with its length. Measured with `node dist/bench/node-adapter.js` (a 2026-07-28 tools/call of a TypeScript
 * echo tool, 8 in flight on keep-alive loopback, the client in its own process, both behind the same gate; a
 * shared 2-core machine, median of 6 rounds, 4 runs): ours 202-222 µs of server CPU per call, the SDK's
 * 247-280 µs (about a fifth more); calls per second ours 1415-3091, the SDK's 1311-2261, ours ahead in 3 of
 * the 4 runs. Revisit when the SDK's adapter changes: if it comes within noise, use it and delete this file's
 * writeResponse and requestView.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BODY_TOO_LARGE, BodyReadError, admitRequest, refusalBody, type AdmissionSettings, type BodyText, type Refusal } from './endpoint-admission.js';
import type { McpFetchHandler } from './toolbox-server.js';

/**
 * The body as text, or BODY_TOO_LARGE as soon as more than `limit` bytes have arrived (reading stops there).
 * Rejects with BodyReadError when the stream fails or closes before its end (the client went away mid-body).
 */
function readNodeBody(req: IncomingMessage, limit: number): Promise<BodyText> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.byteLength;
      if (received > limit) {
        cleanup();
        req.resume(); // discard the rest; the 413 closes the connection
        resolve(BODY_TOO_LARGE);
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
      reject(new BodyReadError(error));
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

function writeRefusal(res: ServerResponse, refusal: Refusal): void {
  if (res.headersSent || res.destroyed) return;
  const body = refusalBody(refusal);
  res.writeHead(refusal.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...refusal.headers });
  res.end(body);
}

/** Writes a web Response to node:http: a JSON answer in one write with its length, a stream (SSE) as it comes. */
async function writeResponse(res: ServerResponse, response: Response, signal: AbortSignal, report: (error: Error) => void): Promise<void> {
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
  const stop = () => void reader.cancel().catch(() => undefined); // cancelling a stream that already failed
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
  } catch (error) {
    // Cancelled because the client went away: expected. Any other failure of the SDK's stream is reported;
    // either way what was written is ended.
    if (!signal.aborted) report(error instanceof Error ? error : new Error(String(error)));
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

/** The node:http face of `mcp`, behind the gate. */
export function nodeFace(mcp: McpFetchHandler, settings: AdmissionSettings): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { report } = settings;
  return async (req, res) => {
    const method = (req.method ?? 'GET').toUpperCase();
    const head = { origin: req.headers.origin, contentLength: req.headers['content-length'], hasBody: method !== 'GET' && method !== 'HEAD' };
    // The client going away aborts the exchange (and through it the tool call's signal).
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const gate = await admitRequest(head, (limit) => readNodeBody(req, limit), settings);
    if ('refused' in gate) {
      req.resume();
      writeRefusal(res, gate.refused);
      return;
    }
    const { text, parsed } = gate.admitted;
    let request: Request;
    try {
      request = parsed !== undefined ? requestView(req, method, abort.signal) : webRequest(req, method, abort.signal, text);
    } catch (error) {
      // A request node accepted that fetch's Request does not (a header value it refuses): not for the SDK.
      if (!(error instanceof TypeError)) throw error;
      writeRefusal(res, { status: 400, rpcCode: -32000, message: 'Bad Request', headers: {} });
      return;
    }
    let response: Response;
    try {
      response = await mcp.fetch(request, parsed !== undefined ? { parsedBody: parsed.value } : undefined);
    } catch (error) {
      report(error instanceof Error ? error : new Error(String(error)));
      writeRefusal(res, { status: 500, rpcCode: -32603, message: 'Internal server error', headers: {} });
      return;
    }
    await writeResponse(res, response, abort.signal, report);
  };
}
