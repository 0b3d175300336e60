/**
 * Parsing the guest's `subako_http` request JSON into a typed request, pure. Only the fields the ABI page
 * lists are accepted; anything else is `invalid_request`, and a plain `http` URL is `forbidden_destination`.
 */
import { EgressError } from './errors.js';
import { CONNECTION_HEADERS, headerNameProblem, isValidHeaderValue } from './headers.js';

/** Requests larger than this are refused before parsing (the ABI page: "up to 8 MiB"). */
export const MAX_REQUEST_BYTES = 8 * 1024 * 1024;

/**
 * The largest `timeout_ms` accepted: one hour. Larger values are refused rather than clamped so a guest
 * learns its number is meaningless; the call's own deadline (normally much shorter) bounds every request.
 */
export const MAX_TIMEOUT_MS = 3_600_000;

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type RequestBody =
  /** `text` and `json` bodies, already encoded, with the content type sent unless the guest sets one. */
  | { type: 'text' | 'json'; bytes: Uint8Array; defaultContentType: string }
  /** A volume file, streamed from the host file at send time. */
  | { type: 'file'; path: string };

export type OutputSpec = { type: 'inline' } | { type: 'file'; path: string };

export interface HttpRequest {
  method: HttpMethod;
  /** An https URL without fragment or userinfo. */
  url: URL;
  /** Lowercase names, connection headers already dropped. */
  headers: Record<string, string>;
  body?: RequestBody;
  output: OutputSpec;
  followRedirects: boolean;
  /** Absent: only the call's own deadline applies. */
  timeoutMs?: number;
}

const REQUEST_FIELDS = new Set(['method', 'url', 'headers', 'body', 'output', 'follow_redirects', 'timeout_ms']);

function invalid(message: string): EgressError {
  return new EgressError('invalid_request', message);
}

/** A guest value quoted in a message, bounded so a huge value cannot bloat the answer. */
export function quote(value: string, max = 80): string {
  const shown = value.length > max ? `${value.slice(0, max)}…` : value;
  return JSON.stringify(shown);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Optional fields may be absent or `null` (some serializers write `null` for "not set"). */
function present(obj: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(obj, key) && obj[key] !== null;
}

/**
 * Parses an https URL of a request or a redirect. `http` is a forbidden destination (HTTPS only);
 * other schemes, userinfo and unparseable text are invalid requests.
 */
export function parseRequestUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = base ? new URL(text, base) : new URL(text);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    throw invalid(`url ${quote(text)} is not a valid absolute URL`);
  }
  if (url.protocol === 'http:') {
    throw new EgressError('forbidden_destination', `plain http is not allowed (${url.host}): use https`);
  }
  if (url.protocol !== 'https:') {
    throw invalid(`url scheme ${quote(url.protocol.replace(/:$/, ''))} is not supported: use https`);
  }
  if (url.username !== '' || url.password !== '') {
    throw invalid('url must not carry user information; send credentials in a header');
  }
  if (url.hostname === '') throw invalid('url has no host');
  url.hash = '';
  return url;
}

function parseMethod(value: unknown): HttpMethod {
  if (typeof value !== 'string' || !(HTTP_METHODS as readonly string[]).includes(value)) {
    const shown = typeof value === 'string' ? quote(value) : typeof value;
    throw invalid(`method ${shown} is not one of ${HTTP_METHODS.join(', ')}`);
  }
  return value as HttpMethod;
}

function parseHeaders(value: unknown): Record<string, string> {
  if (!isPlainObject(value)) throw invalid('headers must be an object of name to string value');
  const headers: Record<string, string> = {};
  for (const [name, headerValue] of Object.entries(value)) {
    const problem = headerNameProblem(name);
    if (problem === 'upper_case') throw invalid(`header name ${quote(name)} must be lowercase`);
    if (problem === 'not_token') throw invalid(`header name ${quote(name)} is not a valid HTTP field name`);
    if (typeof headerValue !== 'string') throw invalid(`header ${quote(name)} must have a string value`);
    if (!isValidHeaderValue(headerValue)) {
      throw invalid(`header ${quote(name)} has a value with control or non-Latin-1 characters`);
    }
    if (CONNECTION_HEADERS.has(name)) continue;
    headers[name] = headerValue;
  }
  return headers;
}

function onlyKeys(obj: Record<string, unknown>, allowed: string[], what: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) throw invalid(`${what} has an unknown field ${quote(key)}`);
  }
}

function parseBody(value: unknown): RequestBody {
  if (!isPlainObject(value)) throw invalid('body must be an object with a "type"');
  switch (value.type) {
    case 'text':
      onlyKeys(value, ['type', 'text'], 'body');
      if (typeof value.text !== 'string') throw invalid('a text body needs "text": a string');
      return { type: 'text', bytes: new TextEncoder().encode(value.text), defaultContentType: 'text/plain; charset=utf-8' };
    case 'json':
      onlyKeys(value, ['type', 'json'], 'body');
      if (!Object.hasOwn(value, 'json')) throw invalid('a json body needs "json": a JSON value');
      return {
        type: 'json',
        bytes: new TextEncoder().encode(JSON.stringify(value.json)),
        defaultContentType: 'application/json',
      };
    case 'file':
      onlyKeys(value, ['type', 'path'], 'body');
      if (typeof value.path !== 'string') throw invalid('a file body needs "path": a volume path');
      return { type: 'file', path: value.path };
    default:
      throw invalid('body type must be "text", "json" or "file"');
  }
}

function parseOutput(value: unknown): OutputSpec {
  if (!isPlainObject(value)) throw invalid('output must be an object with a "type"');
  switch (value.type) {
    case 'inline':
      onlyKeys(value, ['type'], 'output');
      return { type: 'inline' };
    case 'file':
      onlyKeys(value, ['type', 'path'], 'output');
      if (typeof value.path !== 'string') throw invalid('a file output needs "path": a volume path');
      return { type: 'file', path: value.path };
    default:
      throw invalid('output type must be "inline" or "file"');
  }
}

function parseTimeout(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
    throw invalid(`timeout_ms must be a positive integer of milliseconds, at most ${MAX_TIMEOUT_MS}`);
  }
  return value;
}

/** Parses the request bytes a guest handed to `subako_http.request`. Throws EgressError. */
export function parseHttpRequest(bytes: Uint8Array): HttpRequest {
  if (bytes.byteLength > MAX_REQUEST_BYTES) {
    throw invalid(`the request is ${bytes.byteLength} bytes; at most ${MAX_REQUEST_BYTES} are accepted`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: a fatal TextDecoder throws TypeError on bytes that are not UTF-8
    throw invalid('the request is not UTF-8 text');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
    throw invalid('the request is not valid JSON');
  }
  if (!isPlainObject(parsed)) throw invalid('the request must be a JSON object');
  for (const key of Object.keys(parsed)) {
    if (!REQUEST_FIELDS.has(key)) throw invalid(`unknown request field ${quote(key)}`);
  }
  if (typeof parsed.url !== 'string') throw invalid('url is required and must be a string');
  const url = parseRequestUrl(parsed.url);
  const request: HttpRequest = {
    method: present(parsed, 'method') ? parseMethod(parsed.method) : 'GET',
    url,
    headers: present(parsed, 'headers') ? parseHeaders(parsed.headers) : {},
    output: present(parsed, 'output') ? parseOutput(parsed.output) : { type: 'inline' },
    followRedirects: true,
  };
  if (present(parsed, 'body')) request.body = parseBody(parsed.body);
  if (present(parsed, 'follow_redirects')) {
    if (typeof parsed.follow_redirects !== 'boolean') throw invalid('follow_redirects must be true or false');
    request.followRedirects = parsed.follow_redirects;
  }
  if (present(parsed, 'timeout_ms')) request.timeoutMs = parseTimeout(parsed.timeout_ms);
  return request;
}
