/**
 * Multi-round-trip input (MCP 2026-07-28) as both sides of subako see it: a tool that needs something only the
 * client can give — a person's answer (elicitation, form or URL mode), a model completion (sampling), the
 * client's roots — answers `input_required` with keyed input requests and an opaque `requestState`; the client
 * answers them and retries the same request with `inputResponses` and the state echoed byte for byte.
 *
 * Here: the error a served tool throws to ask (ToolInputRequiredError), what a request's declared capabilities
 * let it ask (`acceptedInputKinds`), and the check of input requests that come from a server subako does not
 * trust (`checkInputRequests`): a remote tool's requests are relayed to a client only in shapes the revision
 * defines, and within bounds.
 */
import { SubakoError } from '../errors.js';
import type { InputKinds } from '../tool.js';

/** One embedded input request as the wire carries it: `{ method, params }`. */
export interface InputRequestMessage {
  method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list';
  params?: Record<string, unknown>;
}

/** One form elicitation a tool asks the client's person for: a message and the flat schema of the answer. */
export interface Elicitation {
  message: string;
  requestedSchema: { type: 'object'; properties: Record<string, Record<string, unknown>>; required?: string[] };
}

/** A form elicitation as an input request. */
export function formElicitation(elicitation: Elicitation): InputRequestMessage {
  return { method: 'elicitation/create', params: { mode: 'form', message: elicitation.message, requestedSchema: elicitation.requestedSchema } };
}

/** A model completion as an input request (`sampling/createMessage`): the messages and at most `maxTokens`. */
export function samplingRequest(params: { messages: { role: 'user' | 'assistant'; content: Record<string, unknown> }[]; maxTokens: number; [key: string]: unknown }): InputRequestMessage {
  return { method: 'sampling/createMessage', params };
}

/** The client's roots as an input request (`roots/list`). */
export function rootsRequest(): InputRequestMessage {
  return { method: 'roots/list', params: {} };
}

/**
 * Thrown by a tool (or a defined prompt or resource), when its caller can ask (`ctx.input`), to ask the client
 * first: the endpoint answers `input_required` with these input requests (keyed) and `requestState`, which the
 * client echoes on its retry — sealed by `mcp.serve` and opened again, so the handler reads back exactly what it
 * gave or is not run. A request for a kind the client did not declare (`ctx.input.accepts`) is answered -32021.
 * Never thrown to a caller without `ctx.input`.
 */
export class ToolInputRequiredError extends SubakoError {
  constructor(message: string, readonly inputRequests: Record<string, InputRequestMessage>, readonly requestState?: string) {
    super('input_required', message);
  }
}

/**
 * Thrown by a tool that cannot go on without a client capability its request did not declare (a relayed server
 * refused for it): the endpoint answers MissingRequiredClientCapability (-32021, HTTP 400) naming them, e.g.
 * `{ sampling: {} }`, as MCP 2026-07-28 requires.
 */
export class ClientCapabilityRequiredError extends SubakoError {
  constructor(message: string, readonly requiredCapabilities: Record<string, object>) {
    super('input.capability_required', message);
  }
}

/** The client capabilities that name these kinds of input (what a -32021 answer says was needed). */
export function capabilitiesNamedFor(kinds: readonly (keyof InputKinds)[]): Record<string, object> {
  const named: Record<string, object> = {};
  for (const kind of kinds) {
    if (kind === 'form' || kind === 'url') named.elicitation = { ...(named.elicitation ?? {}), [kind]: {} };
    else named[kind] = {};
  }
  return named;
}

/** An elicitation's answer, when the person accepted: its content (untrusted), else undefined. */
export function acceptedContent(response: unknown): Record<string, unknown> | undefined {
  const answer = response as { action?: unknown; content?: unknown } | null;
  if (typeof answer !== 'object' || answer === null || answer.action !== 'accept') return undefined;
  return typeof answer.content === 'object' && answer.content !== null && !Array.isArray(answer.content) ? answer.content as Record<string, unknown> : {};
}

/** Whether request capabilities declare form elicitation (an empty `elicitation` object means form, as the spec says). */
export function elicitsForms(capabilities: unknown): boolean {
  return acceptedInputKinds(capabilities).form;
}

/** The kinds of input request a request's declared client capabilities accept. */
export function acceptedInputKinds(capabilities: unknown): InputKinds {
  const declared = (typeof capabilities === 'object' && capabilities !== null ? capabilities : {}) as Record<string, unknown>;
  const elicitation = declared.elicitation;
  const modes = typeof elicitation === 'object' && elicitation !== null ? Object.keys(elicitation) : null;
  return {
    form: modes !== null && (modes.length === 0 || modes.includes('form')),
    url: modes !== null && modes.includes('url'),
    sampling: typeof declared.sampling === 'object' && declared.sampling !== null,
    roots: typeof declared.roots === 'object' && declared.roots !== null,
  };
}

/** The client capabilities that declare `kinds` (what a request's `_meta` carries to a server). */
export function capabilitiesFor(kinds: InputKinds): Record<string, object> {
  const elicitation = { ...(kinds.form ? { form: {} } : {}), ...(kinds.url ? { url: {} } : {}) };
  return {
    ...(kinds.form || kinds.url ? { elicitation } : {}), ...(kinds.sampling ? { sampling: {} } : {}), ...(kinds.roots ? { roots: {} } : {}),
  };
}

/** The `_meta` key of a request's declared client capabilities (MCP 2026-07-28). */
export const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** What kind of input an input request asks for. */
export function inputKindOf(request: InputRequestMessage): keyof InputKinds {
  if (request.method === 'sampling/createMessage') return 'sampling';
  if (request.method === 'roots/list') return 'roots';
  return request.params?.mode === 'url' ? 'url' : 'form';
}

/** Bounds on what a server may ask a client for in one round. */
export const MAX_INPUT_REQUESTS = 16;
export const MAX_INPUT_KEY_CHARS = 128;
export const MAX_REQUEST_STATE_CHARS = 64 * 1024;
const MAX_MESSAGE_CHARS = 16 * 1024;
const MAX_URL_CHARS = 8 * 1024;

export type CheckedInputRequests = { ok: true; requests: Record<string, InputRequestMessage> } | { ok: false; problem: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Input requests from a server subako does not trust, checked before they go anywhere: at most 16, keys of
 * at most 128 characters, each a method the revision defines with params of its shape — a form elicitation's
 * message and object schema, a URL elicitation's message and an http(s) URL, sampling's messages, roots with
 * none — and a state of at most 64 KiB. The requests come back as new objects holding only those; the rest of
 * what the server sent (its own `_meta` included) is not relayed.
 */
export function checkInputRequests(raw: unknown, requestState: unknown): CheckedInputRequests {
  if (requestState !== undefined && (typeof requestState !== 'string' || requestState.length > MAX_REQUEST_STATE_CHARS)) {
    return { ok: false, problem: `its requestState is not a string of at most ${MAX_REQUEST_STATE_CHARS} characters` };
  }
  if (raw === undefined) return { ok: true, requests: {} };
  if (!isPlainObject(raw)) return { ok: false, problem: 'its inputRequests is not an object' };
  const entries = Object.entries(raw);
  if (entries.length > MAX_INPUT_REQUESTS) return { ok: false, problem: `it asked ${entries.length} input requests at once, more than the ${MAX_INPUT_REQUESTS} subako relays` };
  const requests: Record<string, InputRequestMessage> = {};
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > MAX_INPUT_KEY_CHARS) return { ok: false, problem: `an input request's key is not 1-${MAX_INPUT_KEY_CHARS} characters` };
    const checked = checkOne(value);
    if (typeof checked === 'string') return { ok: false, problem: `its input request ${JSON.stringify(key.slice(0, 64))} ${checked}` };
    Object.defineProperty(requests, key, { value: checked, enumerable: true, writable: true, configurable: true });
  }
  return { ok: true, requests };
}

function checkOne(value: unknown): InputRequestMessage | string {
  if (!isPlainObject(value)) return 'is not an object';
  const params = value.params;
  switch (value.method) {
    case 'elicitation/create': {
      if (!isPlainObject(params)) return 'has no params';
      if (typeof params.message !== 'string' || params.message.length > MAX_MESSAGE_CHARS) return `has no message of at most ${MAX_MESSAGE_CHARS} characters`;
      if (params.mode === 'url') {
        const url = params.url;
        if (typeof url !== 'string' || url.length > MAX_URL_CHARS || !URL.canParse(url) || !['https:', 'http:'].includes(new URL(url).protocol)) {
          return 'asks the person to open something that is not an http(s) URL';
        }
        return { method: 'elicitation/create', params: { mode: 'url', message: params.message, url } };
      }
      if (params.mode !== undefined && params.mode !== 'form') return `asks for an elicitation mode (${JSON.stringify(String(params.mode).slice(0, 32))}) that is neither form nor url`;
      const schema = params.requestedSchema;
      if (!isPlainObject(schema) || schema.type !== 'object' || !isPlainObject(schema.properties)) return 'has no requestedSchema of type object with properties';
      return { method: 'elicitation/create', params: { mode: 'form', message: params.message, requestedSchema: schema } };
    }
    case 'sampling/createMessage': {
      if (!isPlainObject(params) || !Array.isArray(params.messages) || typeof params.maxTokens !== 'number') return 'has no messages and maxTokens';
      return { method: 'sampling/createMessage', params };
    }
    case 'roots/list':
      return { method: 'roots/list' };
    default:
      return `asks for ${JSON.stringify(String(value.method).slice(0, 64))}, which is not an input request of MCP 2026-07-28`;
  }
}
