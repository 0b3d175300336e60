/**
 * Connections to MCP servers, lazy and shared per descriptor (same URL, same auth identity), so tools never
 * manage connections: the first use connects, later uses share it, a failure drops it and the next use
 * makes a new one. The MCP client SDK negotiates the era: 2026-07-28 when the server speaks it, else the
 * 2025-era `initialize` handshake.
 *
 * Secrets reach the wire only here: header values through a fetch wrapper at request time, OAuth access
 * tokens through the transport's token provider. Neither is ever stored in a transport option.
 *
 * What a server answers is read up to a byte cap per message (bounded-transport.ts): an answer past it fails
 * its request with a reason naming the cap and what sets it, and is not read further.
 */
import { randomUUID } from 'node:crypto';
import { Client, type FetchLike } from '@modelcontextprotocol/client';
import { SUBAKO_VERSION } from '../version.js';
import { CallCancelledError } from '../tool.js';
import { accessTokenFor, authIdentity, type Auth } from './auth.js';
import { classifyFailure, keepsConnection } from './classify-error.js';
import { RESUMPTION } from './resuming-transport.js';
import { BoundedTransport } from './bounded-transport.js';
import { DEFAULT_MAX_ANSWER_BYTES } from './answer-cap.js';
import { boundedOutputValidator } from './output-validator.js';
import { redactSecretsDeep, type Secret } from '../common/index.js';
import { withRequestNotifications, type RequestNotificationSink } from './request-notifications.js';

export interface Descriptor {
  readonly url: string;
  readonly auth: Auth;
}

interface Entry {
  readonly key: string;
  readonly descriptor: Descriptor;
  readonly client: Client;
  readonly ready: Promise<void>;
  /** Every secret revealed on this connection, so that messages from the server can be scrubbed of them. */
  readonly secrets: Set<Secret>;
  /**
   * Marks the errors the transport makes up (never sent out): a request whose response stream was lost, one
   * whose answer passed the cap.
   */
  readonly transportMarker: string;
  busy: number;
  retired: boolean;
}

export interface UseOptions {
  operation: string;
  tool?: string;
  /** The caller's: when it aborts, the operation is cancelled and `use` rejects with CallCancelledError. */
  signal?: AbortSignal;
  /**
   * Receives the request-scoped notifications (`notifications/message`) the server sends on the operation's
   * requests' streams, with every secret revealed on the connection cut out, as the operation's value is.
   */
  notifications?: RequestNotificationSink;
}

export interface McpClientPoolOptions {
  /** Per-request timeout (connect included), in milliseconds. */
  timeoutMs?: number;
  /** The most read of one message a server answers (a JSON body, or one SSE event), in bytes; default 8 MiB. */
  maxAnswerBytes?: number;
  /** What sets `maxAnswerBytes` where this pool is made, named in the error of an answer past it. */
  maxAnswerSetting?: string;
}

function keyOf(descriptor: Descriptor): string {
  return `${descriptor.url}\n${authIdentity(descriptor.auth)}`;
}

export class McpClientPool {
  readonly #entries = new Map<string, Entry>();
  readonly #timeoutMs: number;
  readonly #maxAnswerBytes: number;
  readonly #maxAnswerSetting: string;
  /** Counts connections made, for tests and diagnostics. */
  connectsMade = 0;

  constructor(options: McpClientPoolOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
    this.#maxAnswerSetting = options.maxAnswerSetting ?? 'the McpClientPool option maxAnswerBytes';
  }

  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * Runs one operation on the descriptor's connection, connecting first when there is none. Its value comes
   * back with every secret revealed on the connection cut out of its strings: what a server echoes back is
   * shown redacted, like everywhere else.
   */
  async use<T>(descriptor: Descriptor, options: UseOptions, op: (client: Client) => Promise<T>): Promise<T> {
    const entry = this.#acquire(descriptor);
    entry.busy += 1;
    let connected = false;
    try {
      await entry.ready;
      connected = true;
      const sink = options.notifications;
      const run = () => op(entry.client);
      // Only the operation's own requests carry the sink: the connection was made before, outside it.
      const value = sink === undefined ? await run() : await withRequestNotifications((n) => sink(redactSecretsDeep(n, entry.secrets)), run);
      return redactSecretsDeep(value, entry.secrets);
    } catch (err) {
      // The caller went away while the operation ran: the SDK cancelled the request (it rejects with its own
      // error, not an AbortError), and the connection, which other calls share, stays.
      if (connected && options.signal?.aborted) throw new CallCancelledError(options.tool ?? options.operation);
      const { error, dropConnection } = classifyFailure(
        err,
        {
          url: descriptor.url,
          auth: descriptor.auth,
          operation: options.operation,
          tool: options.tool,
          secrets: entry.secrets,
          transportMarker: entry.transportMarker,
          maxAnswerSetting: this.#maxAnswerSetting,
        },
        options.signal,
      );
      // A connection that never came up is useless whatever the reason.
      if (dropConnection || !connected) this.#retire(entry);
      throw error;
    } finally {
      entry.busy -= 1;
      if (entry.retired && entry.busy === 0) void this.#close(entry);
    }
  }

  /** Closes every connection (a CLI run ends, a test finishes). */
  async closeAll(): Promise<void> {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map((entry) => this.#close(entry)));
  }

  /** Number of live (not retired) connections. */
  get size(): number {
    return this.#entries.size;
  }

  #acquire(descriptor: Descriptor): Entry {
    const key = keyOf(descriptor);
    const existing = this.#entries.get(key);
    if (existing && !existing.retired) return existing;
    const entry = this.#connect(key, descriptor);
    this.#entries.set(key, entry);
    return entry;
  }

  #retire(entry: Entry): void {
    entry.retired = true;
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
    if (entry.busy === 0) void this.#close(entry);
  }

  async #close(entry: Entry): Promise<void> {
    entry.retired = true;
    try {
      await entry.client.close();
    } catch {
      // Closing a broken connection can fail; it is gone either way.
    }
  }

  #connect(key: string, descriptor: Descriptor): Entry {
    const secrets = new Set<Secret>();
    const transportMarker = randomUUID();
    const client = new Client(
      { name: 'subako', version: SUBAKO_VERSION },
      // A remote tool's outputSchema is the server's: checked on the bounded engine, not the SDK's default.
      // Input requests are never fulfilled by the SDK: a tool call brings them back to its caller (input-rounds.ts),
      // and any other request that needs input is refused as such.
      { versionNegotiation: { mode: 'auto' }, jsonSchemaValidator: boundedOutputValidator, inputRequired: { autoFulfill: false } },
    );
    const transport = new BoundedTransport(
      new URL(descriptor.url),
      { ...transportAuth(descriptor.auth, secrets), reconnectionOptions: RESUMPTION },
      transportMarker,
      this.#maxAnswerBytes,
    );
    const entry: Entry = {
      key,
      descriptor,
      client,
      secrets,
      transportMarker,
      busy: 0,
      retired: false,
      ready: Promise.resolve(),
    };
    // A broken background stream or a closed transport means the session is likely gone: the next use
    // makes a new connection instead of failing on a dead one.
    // A 403 insufficient_scope is a refusal of one request, not a broken session.
    client.onerror = (error) => {
      if (!keepsConnection(error)) this.#retire(entry);
    };
    client.onclose = () => {
      entry.retired = true;
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    };
    this.connectsMade += 1;
    const ready = client.connect(transport, { timeout: this.#timeoutMs });
    ready.catch(() => undefined); // observed through `use`
    (entry as { ready: Promise<void> }).ready = ready;
    return entry;
  }
}

/**
 * How a transport to the server authenticates: header values through a fetch wrapper at request time, OAuth
 * tokens through a token provider (refreshed and retried once on a 401). Every secret revealed is added to
 * `secrets`, so that what the server echoes back can be scrubbed of it.
 */
export function transportAuth(
  auth: Auth,
  secrets: Set<Secret>,
): { fetch?: FetchLike; authProvider?: { token(): Promise<string | undefined>; onUnauthorized?(): Promise<void> } } {
  if (auth.kind === 'oauth') {
    // On a 401 the transport calls onUnauthorized and retries once: the retry gets a force-refreshed token.
    // A second 401 means the credential is no good any more (classified as McpAuthError `rejected`).
    let forceRefresh = false;
    return {
      authProvider: {
        token: async () => {
          const token = await accessTokenFor(auth.name, { forceRefresh });
          forceRefresh = false;
          secrets.add(token);
          return token.reveal();
        },
        onUnauthorized: async () => {
          forceRefresh = true;
        },
      },
    };
  }
  const entries = Object.entries(auth.values);
  if (entries.length === 0) return {};
  for (const [, value] of entries) secrets.add(value);
  const withHeaders: FetchLike = (input, init) => {
    const merged = new Headers();
    for (const [name, value] of entries) merged.set(name, value.reveal());
    // The transport's own headers (protocol version, session id) win over static ones.
    new Headers(init?.headers).forEach((value, name) => merged.set(name, value));
    return fetch(input, { ...init, headers: merged });
  };
  return { fetch: withHeaders };
}

/** The process-wide pool that `mcp.tools` and `mcp.call` use. */
export const sharedMcpClientPool = new McpClientPool();
