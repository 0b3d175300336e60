/**
 * `subako mcp stdio --url URL`: for MCP clients that can only launch a local server over stdio (desktop
 * clients, older agent frameworks), a relay from this process's stdin and stdout to a Streamable HTTP
 * endpoint — a session URL, an `mcp.serve` URL, any MCP server.
 *
 * It relays messages, it does not speak the protocol: every JSON-RPC message the client writes is sent as
 * it is, and every message the server answers (results, errors, the notifications and requests on a
 * request's stream: progress, logging, input requests) is written back as it is. So whatever the two ends
 * agree on — resources, prompts, tasks, either era — passes without the bridge knowing of it. The only
 * thing it reads is a 2025-era `initialize` result, whose version the HTTP transport must then send in its
 * `MCP-Protocol-Version` header (a 2026-07-28 request carries its version in its own `_meta`, and the SDK's
 * transport derives the headers from it).
 *
 * Auth is the same as `mcp tools`/`mcp call` (header values or a stored OAuth credential), added at the
 * HTTP side only: the client never sees it, and a server echoing it back has it cut out. A request the
 * server could not be reached for is answered with a JSON-RPC error in one line that names what failed and
 * not the URL (a capability URL is a secret). Answers are read up to the same byte cap as every client of
 * subako's (8 MiB a message).
 */
import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE, parseJSONRPCMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { redactSecretsDeep, type Secret } from '../common/index.js';
import type { Auth } from './auth.js';
import { BoundedTransport } from './bounded-transport.js';
import { DEFAULT_MAX_ANSWER_BYTES } from './answer-cap.js';
import { classifyFailure } from './classify-error.js';
import { transportAuth } from './connection.js';
import { RESUMPTION, requestIdOf } from './resuming-transport.js';

/** The JSON-RPC error code of a request the bridge could not deliver (the implementation-defined range). */
export const BRIDGE_FAILED_RPC_CODE = -32000;
/** The longest line held from the client: the SDK's own cap on a stdio message (10 MiB). */
const MAX_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;
/** JSON-RPC's code for a line that is not a message. */
const PARSE_ERROR_RPC_CODE = -32700;

export interface StdioBridgeOptions {
  url: string;
  auth: Auth;
  /** The client's side; default this process's stdin and stdout. */
  input?: Readable;
  output?: Writable;
  maxAnswerBytes?: number;
  /** A line for the person running it (stderr): why the bridge stopped, a request that could not be sent. */
  log?: (line: string) => void;
}

export interface StdioBridge {
  /** Settles when the client closed its stdin (or the bridge was closed) and both sides are shut. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

export async function bridgeStdio(options: StdioBridgeOptions): Promise<StdioBridge> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const log = options.log ?? (() => undefined);
  const secrets = new Set<Secret>();
  const marker = randomUUID();
  const http = new BoundedTransport(
    new URL(options.url),
    { ...transportAuth(options.auth, secrets), reconnectionOptions: RESUMPTION },
    marker,
    options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
  );
  // The person is told which server by its origin only: the path, query and user-info of a URL can be its secret
  // (a session's capability URL is nothing but a token in its path).
  const shownUrl = new URL(options.url).origin;
  const failure = (err: unknown, operation: string): string =>
    classifyFailure(err, { url: shownUrl, auth: options.auth, operation, secrets, transportMarker: marker }).error.message;

  /** Requests sent and not answered yet: when the client closes its stdin, their answers are still awaited. */
  const unanswered = new Set<string | number>();
  /** Ids of `initialize` requests in flight: their result names the 2025-era version the server chose. */
  const initializing = new Set<string | number>();
  let inputEnded = false;

  let closing: Promise<void> | undefined;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const close = (): Promise<void> => {
    closing ??= (async () => {
      input.off('data', onData);
      input.pause();
      await http.close().catch(() => undefined);
      markClosed();
    })();
    return closing;
  };
  const closeWhenDone = (): void => {
    if (inputEnded && unanswered.size === 0) void close();
  };

  const toClient = (message: JSONRPCMessage): void => {
    const id = (message as { id?: string | number }).id;
    const isAnswer = id !== undefined && (message as { method?: unknown }).method === undefined;
    if (isAnswer && initializing.delete(id)) {
      const version = (message as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
      if (typeof version === 'string') http.setProtocolVersion(version);
    }
    if (!closing) output.write(`${JSON.stringify(redactSecretsDeep(message, secrets))}\n`);
    if (isAnswer && unanswered.delete(id)) closeWhenDone();
  };

  const toServer = async (message: JSONRPCMessage): Promise<void> => {
    const id = requestIdOf(message);
    if (id !== undefined) {
      unanswered.add(id);
      if ((message as { method?: string }).method === 'initialize') initializing.add(id);
    }
    try {
      await http.send(message);
    } catch (err) {
      const reason = failure(err, `send ${(message as { method?: string }).method ?? 'a response'}`);
      log(`subako mcp stdio: ${reason}`);
      // A notification or a response has no one waiting for an answer; a request is answered with the reason.
      if (id !== undefined) toClient({ jsonrpc: '2.0', id, error: { code: BRIDGE_FAILED_RPC_CODE, message: reason } } as JSONRPCMessage);
    }
  };

  // Lines are split here, not by the SDK's ReadBuffer, which skips a line that is not JSON: JSON-RPC answers it.
  // A decoder, so a character split between two chunks stays whole; a line is held up to the SDK's stdio cap,
  // past it the rest of the line is dropped as it comes and the line answered with a parse error.
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let overlong = false;
  const refuseLine = (why: string): void => {
    log(`subako mcp stdio: a line on standard input ${why}; it was answered with a parse error`);
    toClient({ jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR_RPC_CODE, message: `parse error: the line ${why}` } } as unknown as JSONRPCMessage);
  };
  function onData(chunk: Buffer): void {
    pending += decoder.write(chunk);
    let end: number;
    while ((end = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, end).replace(/\r$/, '');
      pending = pending.slice(end + 1);
      if (overlong) {
        overlong = false;
        refuseLine(`passed ${MAX_LINE_BYTES} bytes`);
        continue;
      }
      if (line.trim() === '') continue;
      let message: JSONRPCMessage;
      try {
        message = parseJSONRPCMessage(JSON.parse(line));
      } catch {
        refuseLine('is not a JSON-RPC message');
        continue;
      }
      void toServer(message);
    }
    if (Buffer.byteLength(pending) > MAX_LINE_BYTES) {
      overlong = true;
      pending = '';
    }
  }

  http.onmessage = toClient;
  // A failed request is answered to the client (and told on stderr) where it is sent; the transport's own
  // report of the same failure would only say it twice.
  http.onerror = () => undefined;
  output.on('error', () => void close()); // the client went away
  input.on('data', onData);
  input.once('end', () => {
    inputEnded = true;
    closeWhenDone();
  });
  await http.start();
  return { closed, close };
}
