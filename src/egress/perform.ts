/**
 * Performing one parsed `subako_http` request: the hop loop. Every hop — the first and each redirect — is
 * checked the same way (scheme, allowlist, credentials, forbidden destinations) before anything is sent;
 * the whole request is bounded by `timeout_ms` and by the call's own deadline.
 */
import type { Readable } from 'node:stream';
import type { RunContext } from '../sandbox/index.js';
import { markFailed, SpanKind, startSpan, type Traced } from '../common/index.js';
import { DEFAULT_HTTPS_PORT, matchesAllowlist, type AllowEntry } from './allowlist.js';
import type { HttpOk } from './answer.js';
import { assertNoCredentialHeader, credentialForOrigin, originOfUrl, type CredentialPolicy } from './credentials.js';
import { resolveDestination, type DestinationPolicy } from './destination.js';
import { EgressError } from './errors.js';
import { authorityPartition, type HttpsConnectionPool } from './connection-pool.js';
import { sendToDestination, type IncomingResponse } from './fetch.js';
import { BODY_HEADERS, CROSS_ORIGIN_DROPPED_HEADERS, normalizeResponseHeaders } from './headers.js';
import { urlForLog, type EgressLogEntry } from './log.js';
import { readInlineBody, writeBodyToVolume } from './output.js';
import type { HttpMethod, HttpRequest, RequestBody } from './request.js';
import type { TlsTrust } from './trust.js';
import { openVolumeFileForRead, resolveVolumePath, type VolumeMount } from './volume-path.js';

/** Redirects followed at most (the ABI page: "up to 10 hops"). */
export const MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface EgressSettings {
  allow: readonly AllowEntry[];
  credentials: CredentialPolicy;
  destination: DestinationPolicy;
  volume: readonly VolumeMount[];
  trust: TlsTrust;
  /** Where connections come from; each is reused only for the same name, port, addresses, trust and authority. */
  connections: HttpsConnectionPool;
  log: EgressLogEntry[];
  /** The call's trace context: each hop is a span under it, sent as the hop's `traceparent` when its request has none of its own. */
  traceparent?: string;
}

/** Maps anything thrown during a request to its error kind, using only safe data for the message. */
function classify(error: unknown, deadline: AbortSignal, host: string): EgressError {
  if (error instanceof EgressError) return error;
  if (deadline.aborted) return new EgressError('timeout', `the request to ${host} did not complete in time`);
  const code = (error as { code?: unknown } | undefined)?.code;
  const safeCode = typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? ` (${code})` : '';
  return new EgressError('connection', `the exchange with ${host} failed${safeCode}`);
}

/** The redirect target: unusable text is the server's fault (`connection`), anything but https is forbidden. */
function redirectTarget(location: string, from: URL): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    throw new EgressError('connection', `${from.host} answered a redirect with an unusable location`);
  }
  if (next.protocol !== 'https:') {
    throw new EgressError('forbidden_destination', `a redirect leads to ${next.protocol.replace(/:$/, '')}, only https is allowed`);
  }
  next.username = '';
  next.password = '';
  next.hash = '';
  return next;
}

function hostLabel(url: URL): string {
  return url.port === '' ? url.hostname : url.host;
}

interface HopState {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body?: RequestBody;
}

/** Opens the hop's body and says how many bytes it carries. */
async function openBody(
  body: RequestBody | undefined,
  volume: readonly VolumeMount[],
): Promise<{ payload?: Uint8Array | Readable; length: number; contentType?: string }> {
  if (body === undefined) return { length: 0 };
  if (body.type === 'file') {
    const { handle, size } = await openVolumeFileForRead(body.path, volume);
    const stream = handle.createReadStream({ autoClose: true });
    stream.on('error', () => {}); // surfaced by the exchange failing; never uncaught
    return { payload: stream, length: size };
  }
  return { payload: Buffer.from(body.bytes), length: body.bytes.byteLength, contentType: body.defaultContentType };
}

/** Sends one hop after checking it; resolves with the response headers in. */
async function sendHop(
  hop: HopState,
  settings: EgressSettings,
  signal: AbortSignal,
  entry: EgressLogEntry,
  traceparent: string | undefined,
): Promise<IncomingResponse> {
  const port = hop.url.port === '' ? DEFAULT_HTTPS_PORT : Number(hop.url.port);
  if (!matchesAllowlist(hop.url.hostname, port, settings.allow)) {
    throw new EgressError('host_not_allowed', `${hostLabel(hop.url)} is not in this function's network allowlist`);
  }
  const origin = originOfUrl(hop.url);
  const credential = credentialForOrigin(origin, settings.credentials);
  if (credential) assertNoCredentialHeader(hop.headers, credential, origin);
  const destination = await resolveDestination(hop.url, settings.destination, signal);

  const body = await openBody(hop.body, settings.volume);
  const headers: Record<string, string> = { ...hop.headers };
  if (body.contentType !== undefined && headers['content-type'] === undefined) headers['content-type'] = body.contentType;
  if (hop.body?.type === 'file') headers['content-length'] = String(body.length);
  if (traceparent !== undefined && headers.traceparent === undefined) headers.traceparent = traceparent;
  Object.assign(headers, credential ?? {});
  const authority = credential ? [...CROSS_ORIGIN_DROPPED_HEADERS, ...Object.keys(credential)] : CROSS_ORIGIN_DROPPED_HEADERS;
  try {
    const response = await sendToDestination(
      destination,
      { method: hop.method, path: `${hop.url.pathname}${hop.url.search}`, headers, body: body.payload },
      { pool: settings.connections, trust: settings.trust, partition: authorityPartition(headers, authority) },
      signal,
    );
    entry.bytesOut = body.length;
    return response;
  } finally {
    if (body.payload !== undefined && !(body.payload instanceof Uint8Array)) body.payload.destroy();
  }
}

/** A redirect body up to this size is read and dropped, so its connection can be reused. */
const REUSABLE_REDIRECT_BODY_BYTES = 16 * 1024;

/**
 * Drops a redirect's body. A short one (declared so, or chunked and ending within the limit) is read to its
 * end, which leaves the connection reusable: a same-origin redirect then costs no new handshake. A longer
 * one is destroyed, closing its connection. Never throws: the redirect is followed either way, and the
 * request's deadline bounds the read.
 */
async function discardRedirectBody(response: IncomingResponse): Promise<void> {
  const declared = response.headers['content-length'];
  if (declared !== undefined && !(typeof declared === 'string' && /^\d{1,9}$/.test(declared) && Number(declared) <= REUSABLE_REDIRECT_BODY_BYTES)) {
    response.body.destroy();
    return;
  }
  let read = 0;
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      read += chunk.length;
      if (read > REUSABLE_REDIRECT_BODY_BYTES) break; // leaves it unfinished, so dispose() closes it
    }
  } catch {
    // The body failed; dispose() sees it unfinished and closes the connection.
  }
}

/** The next hop after a redirect, with the method, body and header rules applied. */
function nextHop(hop: HopState, status: number, target: URL, firstOrigin: string, leftOrigin: boolean): HopState {
  const next: HopState = { method: hop.method, url: target, headers: { ...hop.headers }, body: hop.body };
  const toGet = (status === 303 && hop.method !== 'HEAD') || ((status === 301 || status === 302) && hop.method === 'POST');
  if (toGet) {
    next.method = 'GET';
    next.body = undefined;
    for (const name of BODY_HEADERS) delete next.headers[name];
  }
  if (leftOrigin || originOfUrl(target) !== firstOrigin) {
    for (const name of CROSS_ORIGIN_DROPPED_HEADERS) delete next.headers[name];
  }
  return next;
}

/**
 * A hop's span, as OpenTelemetry's HTTP client conventions name it: the method, and the URL as the egress log
 * keeps it (no query, no credentials).
 */
function hopSpan(hop: HopState, traceparent: string | undefined): Traced {
  const port = hop.url.port === '' ? DEFAULT_HTTPS_PORT : Number(hop.url.port);
  return startSpan(hop.method, traceparent, {
    'http.request.method': hop.method, 'url.full': urlForLog(hop.url), 'server.address': hop.url.hostname, 'server.port': port,
  }, SpanKind.CLIENT);
}

/** Performs the request; resolves with the `ok` answer or throws an EgressError. */
export async function performHttpRequest(request: HttpRequest, settings: EgressSettings, run: RunContext): Promise<HttpOk> {
  if (request.body?.type === 'file') resolveVolumePath(request.body.path, settings.volume);
  if (request.output.type === 'file') resolveVolumePath(request.output.path, settings.volume);

  const remaining = run.remainingMs();
  // A run without a finite deadline leaves only timeout_ms; NaN is read as "no deadline", not "none left".
  const limitMs = Math.min(request.timeoutMs ?? Number.POSITIVE_INFINITY, Number.isNaN(remaining) ? Number.POSITIVE_INFINITY : remaining);
  const deadline = new AbortController();
  const abort = (): void => deadline.abort(new EgressError('timeout', 'the request ran out of time'));
  if (run.signal.aborted || limitMs <= 0) abort();
  const timer = setTimeout(abort, Math.max(0, Math.min(limitMs, 2 ** 31 - 1)));
  run.signal.addEventListener('abort', abort, { once: true });

  const firstOrigin = originOfUrl(request.url);
  let hop: HopState = { method: request.method, url: request.url, headers: { ...request.headers }, body: request.body };
  let leftOrigin = false;
  try {
    for (let redirects = 0; ; redirects++) {
      const entry: EgressLogEntry = { method: hop.method, url: urlForLog(hop.url), bytesIn: 0, bytesOut: 0, durationMs: 0 };
      const started = performance.now();
      // Each hop is a request of its own, a child of the guest's run: the server hears this span as its parent.
      const span = hopSpan(hop, settings.traceparent);
      let response: IncomingResponse | undefined;
      try {
        if (deadline.signal.aborted) throw deadline.signal.reason;
        response = await sendHop(hop, settings, deadline.signal, entry, span.traceparent);
        entry.status = response.status;
        span.span.setAttribute('http.response.status_code', response.status);
        const location = response.headers.location;
        const target = Array.isArray(location) ? location[0] : location;
        if (request.followRedirects && REDIRECT_STATUSES.has(response.status) && typeof target === 'string') {
          await discardRedirectBody(response);
          if (redirects >= MAX_REDIRECTS) {
            throw new EgressError('too_many_redirects', `more than ${MAX_REDIRECTS} redirects, starting at ${hostLabel(request.url)}`);
          }
          const next = nextHop(hop, response.status, redirectTarget(target, hop.url), firstOrigin, leftOrigin);
          leftOrigin ||= originOfUrl(next.url) !== firstOrigin;
          hop = next;
          continue;
        }
        const result =
          request.output.type === 'file'
            ? await writeBodyToVolume(response.body, request.output.path, settings.volume, run.writeBudget)
            : await readInlineBody(response.body);
        entry.bytesIn = result.bytesIn;
        return { status: response.status, headers: normalizeResponseHeaders(response.headers), body: result.body };
      } catch (error) {
        const failure = classify(error, deadline.signal, hostLabel(hop.url));
        entry.error = failure.kind;
        markFailed(span.span, failure.kind);
        throw failure;
      } finally {
        span.span.end();
        response?.dispose();
        entry.durationMs = Math.round(performance.now() - started);
        settings.log.push(entry);
      }
    }
  } finally {
    clearTimeout(timer);
    run.signal.removeEventListener('abort', abort);
  }
}
