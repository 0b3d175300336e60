/**
 * Input requests of `prompts/get` and `resources/read` through a session (MCP 2026-07-28 multi-round-trip input), as
 * input-relay.ts does for tool calls: a remote server that answers `input_required` has its questions passed to the
 * session's client when that client declared it can answer every one of them; otherwise a 2026-07-28 client is
 * answered -32021 naming what it did not declare (the server was told what it declared, exactly).
 *
 * The server's own `requestState` never goes to the client as it is: the client carries a state of subako's, sealed
 * (request-state-seal.ts, AES-256-GCM with the platform key) around the server's state and the keys it asked, bound
 * to the method, the prompt's name or the resource's URI, the arguments, an expiry — and, as authenticated data, to
 * this session (`subako.catalog-input.v1:<session id>`): a state given for a prompt cannot be replayed on a resource
 * read, on another prompt, with other arguments, or in another session. A retry whose state does not open is refused
 * (-32602, `invalid_request_state`) and the server sees nothing; one that opens gives the server its own state back
 * byte for byte, and only the answers to what it asked.
 */
import {
  ClientCapabilityRequiredError, McpInputRequiredError, McpServerError, RequestStateRefusedError, RequestStateSeal, ToolInputRequiredError, capabilitiesNamedFor,
  type Catalog, type CatalogRequestContext, type InputRequestMessage, type StatefulRequest,
} from '../../mcp/index.js';
import { unanswerable } from './input-relay.js';

const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
const KNOWN_CAPABILITIES = new Set(['elicitation', 'sampling', 'roots']);

/** What the client carries inside the sealed state: the server's own state, and the keys it asked. */
interface Carried {
  up?: string;
  keys: string[];
}

function parseCarried(text: string): Carried | undefined {
  try {
    const value = JSON.parse(text) as Partial<Carried>;
    if (!Array.isArray(value.keys) || !value.keys.every((k) => typeof k === 'string') || (value.up !== undefined && typeof value.up !== 'string')) return undefined;
    return { keys: value.keys, ...(value.up !== undefined ? { up: value.up } : {}) };
  } catch {
    return undefined;
  }
}

export interface CatalogInputRelayOptions {
  sessionId: string;
  /** The platform's 32-byte sealing key. */
  key: Buffer;
  now?: () => number;
}

/** `catalog` with its prompts' and resources' input requests relayed to the session's client. */
export function withCatalogInputRelay(catalog: Catalog, options: CatalogInputRelayOptions): Catalog {
  const seal = new RequestStateSeal(options.key, undefined, options.now, `subako.catalog-input.v1:${options.sessionId}`);

  const relayed = async <T>(asked: StatefulRequest, ctx: CatalogRequestContext, run: (ctx: CatalogRequestContext) => Promise<T>): Promise<T> => {
    const input = ctx.input;
    let inner = ctx;
    if (input?.requestState !== undefined) {
      // A state that does not open is RequestStateRefusedError: the endpoint answers it -32602 (catalog-handlers.ts).
      const carried = parseCarried(seal.open(asked, input.requestState));
      if (carried === undefined) throw new RequestStateRefusedError('the requestState was not given by this session');
      const responses: Record<string, unknown> = {};
      for (const key of carried.keys) {
        if (input.responses !== undefined && Object.hasOwn(input.responses, key)) {
          Object.defineProperty(responses, key, { value: input.responses[key], enumerable: true, writable: true, configurable: true });
        }
      }
      const { requestState: _ours, responses: _all, ...rest } = input;
      inner = { ...ctx, input: { ...rest, responses, ...(carried.up !== undefined ? { requestState: carried.up } : {}) } };
    } else if (input !== undefined) {
      // A first request carries no answers: nothing the client sent unasked reaches the server.
      const { responses: _unasked, ...rest } = input;
      inner = { ...ctx, input: rest };
    }
    try {
      return await run(inner);
    } catch (err) {
      if (err instanceof McpInputRequiredError) {
        const requests = err.inputRequests;
        const missing = unanswerable(requests, input?.accepts);
        if (input === undefined || missing.length > 0) {
          throw new ClientCapabilityRequiredError(`${what(asked)} needs input from the client that this request did not declare it can give`, capabilitiesNamedFor(missing.length > 0 ? missing : ['form']));
        }
        const state = seal.seal(asked, JSON.stringify({ keys: Object.keys(requests), ...(err.requestState !== undefined ? { up: err.requestState } : {}) } satisfies Carried));
        throw new ToolInputRequiredError(`${what(asked)} asks its client for input`, requests as Record<string, InputRequestMessage>, state);
      }
      if (err instanceof McpServerError && err.rpcCode === MISSING_REQUIRED_CLIENT_CAPABILITY) {
        const named = (err.requiredCapabilities ?? []).filter((c) => KNOWN_CAPABILITIES.has(c));
        throw new ClientCapabilityRequiredError(`${what(asked)}: its server needs the client capabilit${named.length > 1 ? 'ies' : 'y'} ${named.join(', ') || 'it named'}, which this request did not declare`, Object.fromEntries(named.map((c) => [c, {}])));
      }
      throw err;
    }
  };

  return Object.freeze({
    capabilities: catalog.capabilities,
    listResources: (cursor, ctx) => catalog.listResources(cursor, ctx),
    listResourceTemplates: (cursor, ctx) => catalog.listResourceTemplates(cursor, ctx),
    listPrompts: (cursor, ctx) => catalog.listPrompts(cursor, ctx),
    complete: (request, ctx) => catalog.complete(request, ctx),
    readResource: (uri, ctx) => relayed({ method: 'resources/read', name: uri, args: {} }, ctx, (inner) => catalog.readResource(uri, inner)),
    getPrompt: (name, args, ctx) => relayed({ method: 'prompts/get', name, args }, ctx, (inner) => catalog.getPrompt(name, args, inner)),
  } satisfies Catalog);
}

function what(asked: StatefulRequest): string {
  return asked.method === 'prompts/get' ? `the prompt ${JSON.stringify(asked.name.slice(0, 128))}` : `the resource ${JSON.stringify(asked.name.slice(0, 256))}`;
}
