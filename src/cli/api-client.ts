/**
 * The platform's API from the command line: where the server is and which key to send (flags, the
 * environment, then the profile `subako login` stored), one request function over undici's fetch that turns
 * every failure into one line saying what to do, and a reader of the Server-Sent Events stream
 * (`subako calls tail`). Every `subako packages|agents|sessions|vaults|calls|keys` command goes through here, naming
 * the answer's type from the API's own schemas (server/api/): the types are not written again here.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync, chmodSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fetch, type Response } from 'undici';
import type { Command } from 'commander';
import { subakoHome, systemErrorCode } from '../common/index.js';
import { UsageError } from '../errors.js';
import type { ErrorBody, Page } from '../server/api/index.js';
import { CommandFailure } from './command-context.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:7070';
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** Pages followed by a list before it stops (at the API's 200 per page, 2,000 items). */
const MAX_PAGES = 10;

/** A request the server refused, or a server that could not be reached: one line, with what to do. */
export class ApiError extends CommandFailure {
  constructor(code: string, message: string, readonly status: number | null = null) {
    super(code, message);
  }
}

export interface Profile {
  server: string;
  apiKey: string;
}

/** The flags every platform command takes. */
export interface ConnectionFlags {
  profile?: string;
  server?: string;
  json?: boolean;
}

/** Adds --profile, --server and --json to a platform command. */
export function platformCommand(command: Command): Command {
  return command
    .option('--profile <name>', 'the profile `subako login` stored (default $SUBAKO_PROFILE or "default")')
    .option('--server <url>', 'the server, over the profile\'s ($SUBAKO_SERVER)')
    .option('--json', 'print the API\'s JSON instead of a table');
}

export function profileName(flags: { profile?: string }, env: NodeJS.ProcessEnv = process.env): string {
  const name = flags.profile ?? env.SUBAKO_PROFILE ?? 'default';
  if (!PROFILE_NAME.test(name)) throw new UsageError(`--profile ${JSON.stringify(name)} is not a profile name: letters, digits, - and _, at most 64`);
  return name;
}

function profilesDir(env: NodeJS.ProcessEnv): string {
  return join(subakoHome(env), 'profiles');
}

export function profilePath(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(profilesDir(env), `${name}.json`);
}

/** The stored profile, or null when there is none. */
export function readProfile(name: string, env: NodeJS.ProcessEnv = process.env): Profile | null {
  const path = profilePath(name, env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT') return null;
    if (code === undefined) throw error;
    throw new ApiError('profile_unreadable', `the profile ${path} cannot be read (${code}); run subako login again`);
  }
  let value: Partial<Profile>;
  try {
    value = JSON.parse(text) as Partial<Profile>;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error; // expected: not JSON
    throw new ApiError('profile_unreadable', `the profile ${path} is not JSON; run subako login again`);
  }
  if (typeof value.server !== 'string' || typeof value.apiKey !== 'string') {
    throw new ApiError('profile_unreadable', `the profile ${path} lacks a server or key; run subako login again`);
  }
  return { server: value.server, apiKey: value.apiKey };
}

/** Writes the profile at mode 0600 (in a 0700 folder), whole or not at all. */
export function writeProfile(name: string, profile: Profile, env: NodeJS.ProcessEnv = process.env): string {
  const dir = profilesDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = profilePath(name, env);
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(temporary, 0o600); // the umask cannot widen 0600, but be explicit
  renameSync(temporary, path);
  return path;
}

export function normalizeServer(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    throw new UsageError(`--server ${server} is not a URL (e.g. http://127.0.0.1:7070)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--server ${server} must be an http:// or https:// URL`);
  return url.href.replace(/\/+$/, '');
}

/** The client a command uses: the server from --server, $SUBAKO_SERVER or the profile; the key from $SUBAKO_API_KEY or the profile. */
export function clientFor(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): ApiClient {
  const name = profileName(flags, env);
  const profile = readProfile(name, env);
  const server = normalizeServer(flags.server ?? env.SUBAKO_SERVER ?? profile?.server ?? DEFAULT_SERVER);
  const fromEnv = env.SUBAKO_API_KEY !== undefined && env.SUBAKO_API_KEY !== '' ? env.SUBAKO_API_KEY : undefined;
  // A profile's key goes only to the server it was stored for.
  const apiKey = fromEnv ?? (profile && normalizeServer(profile.server) === server ? profile.apiKey : undefined);
  if (apiKey === undefined) {
    throw new ApiError('no_api_key', `no API key for ${server}: run subako login --server ${server}${name === 'default' ? '' : ` --profile ${name}`} (or set SUBAKO_API_KEY)`);
  }
  return new ApiClient(server, apiKey);
}

export interface RequestOptions {
  json?: unknown;
  body?: Uint8Array;
  contentType?: string;
  query?: Record<string, string | undefined>;
}

export class ApiClient {
  constructor(readonly server: string, private readonly apiKey: string) {}

  /** One request; the parsed JSON answer (null for 204). Refusals and failures throw ApiError. */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.answer<T>(method, path, options)).body;
  }

  /** As request(), with the answer's status (201 created, 200 already there). */
  async answer<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<{ status: number; body: T }> {
    const response = await this.send(method, path, options, {});
    if (response.status === 204) return { status: 204, body: null as T };
    const text = await response.text();
    const answer = parseJson(text);
    if (!response.ok) throw refusal(response.status, answer, this.server);
    return { status: response.status, body: answer as T };
  }

  /**
   * Every item of a paged list (following next_cursor, at most MAX_PAGES pages of `pageSize`: 200, the API's
   * most per page, but for lists whose items are large and whose pages are smaller, such as held calls' 32).
   */
  async list<T>(path: string, query: Record<string, string | undefined> = {}, pageSize = 200): Promise<T[]> {
    const items: T[] = [];
    let after: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await this.request<Page<T>>('GET', path, { query: { ...query, limit: String(pageSize), after } });
      items.push(...answer.items);
      if (!answer.next_cursor) break;
      after = answer.next_cursor;
    }
    return items;
  }

  /**
   * Follows a Server-Sent Events stream: each event's data parsed as JSON. When the stream ends or breaks it
   * reconnects with the last event id seen (the server resumes from it), waiting the server's `retry` or 1 s;
   * it gives up after `maxFailures` connection failures in a row. Ends when `signal` aborts.
   */
  async *events(path: string, query: Record<string, string | undefined>, signal: AbortSignal, maxFailures = 5): AsyncGenerator<{ id: string | null; event: string; data: unknown }> {
    let lastId: string | null = null;
    let retryMs = 1000;
    let failures = 0;
    while (!signal.aborted) {
      let response: Response;
      try {
        response = await this.send('GET', path, { query }, { accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) }, signal);
      } catch (error) {
        if (signal.aborted) return;
        if (!(error instanceof ApiError) || error.status !== null || ++failures >= maxFailures) throw error;
        await sleep(retryMs, signal);
        continue;
      }
      if (!response.ok) throw refusal(response.status, parseJson(await response.text()), this.server);
      failures = 0;
      const decoder = new TextDecoder();
      let buffer = '';
      let event = { id: null as string | null, name: 'message', data: [] as string[] };
      try {
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.search(/\r?\n/)) >= 0) {
            const line = buffer.slice(0, end);
            buffer = buffer.slice(end + (buffer[end] === '\r' ? 2 : 1));
            if (line === '') {
              if (event.data.length > 0) {
                if (event.id !== null) lastId = event.id;
                yield { id: event.id, event: event.name, data: parseJson(event.data.join('\n')) };
              }
              event = { id: null, name: 'message', data: [] };
              continue;
            }
            if (line.startsWith(':')) continue; // a comment: the server's heartbeat
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'data') event.data.push(value);
            else if (field === 'id') event.id = value;
            else if (field === 'event') event.name = value;
            else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        // expected: the connection broke mid-stream (the server restarted); reconnect below
        if (!(error instanceof Error)) throw error;
      }
      if (signal.aborted) return;
      await sleep(retryMs, signal);
    }
  }

  private async send(method: string, path: string, options: RequestOptions, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    const url = new URL(`${this.server}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const body = options.json !== undefined ? JSON.stringify(options.json) : options.body;
    const contentType = options.json !== undefined ? 'application/json' : options.contentType;
    try {
      return await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.apiKey}`, ...(contentType ? { 'content-type': contentType } : {}), ...headers },
        body,
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
      throw new ApiError('unreachable', `cannot reach ${this.server} (${why}); is subako serve running there? (subako login --server URL for another)`);
    }
  }
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error; // expected: a proxy's page, not JSON
    return text;
  }
}

/**
 * The server's `{"error": {code, message, problems}}` as one line (its problems, such as a bundle's, each with
 * its code), with what to do for the refusals a person can fix.
 */
function refusal(status: number, answer: unknown, server: string): ApiError {
  const error = (answer as Partial<ErrorBody> | null)?.error;
  const code = error?.code ?? `http_${status}`;
  if (status === 401) return new ApiError(code, `${server} refused the API key (401); run subako login --server ${server}`, status);
  if (status === 403 && code === 'read_only_key') return new ApiError(code, `${error?.message} (subako login --server ${server} with one)`, status);
  const message = error?.message ?? (typeof answer === 'string' && answer.length > 0 ? answer.slice(0, 200) : 'no details');
  const problems = (error?.problems ?? []).filter((p) => p.message !== undefined && p.message !== message).map((p) => `${p.message} [${p.code ?? 'problem'}]`);
  return new ApiError(code, `${message}${problems.length > 0 ? `: ${problems.join('; ')}` : ''} (HTTP ${status}, ${code})`, status);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
