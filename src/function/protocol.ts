/**
 * The requests subako sends a guest: stateless MCP 2026-07-28, one JSON-RPC message per line, each with
 * `_meta` carrying the revision, our client info and our (empty) capabilities, and a fresh opaque id.
 */
import { randomBytes } from 'node:crypto';
import { SUBAKO_VERSION } from '../version.js';

export const PROTOCOL_VERSION = '2026-07-28';

/** `_meta` exactly as the ABI page shows it; built once, it never changes within a process. */
const REQUEST_META = Object.freeze({
  'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientInfo': Object.freeze({ name: 'subako', version: SUBAKO_VERSION }),
  'io.modelcontextprotocol/clientCapabilities': Object.freeze({}),
});

export type RequestId = string;

/**
 * Ids are opaque strings that never repeat: a random per-process prefix (so ids differ across restarts too)
 * and a counter. Cheaper than a UUID per request, and just as unguessable to a guest that cannot see others.
 */
const ID_PREFIX = randomBytes(6).toString('hex');
let idCounter = 0;

export function freshId(kind: string): RequestId {
  idCounter += 1;
  return `${kind}-${ID_PREFIX}-${idCounter.toString(36)}`;
}

export interface OutgoingRequest {
  id: RequestId;
  method: string;
  /** The request as one line of compact JSON ending in a newline. */
  line: string;
}

/** `_meta` serialised once; every request line splices it in rather than serialising it again. */
const META_JSON = JSON.stringify(REQUEST_META);

/**
 * `progressToken`: the call wants progress; the token goes first in `_meta`, and the guest's
 * `notifications/progress` lines carrying it are relayed. It is ours (freshId), never the client's: nothing a
 * client chose reaches the guest, and a guest cannot aim its notifications at another call's token.
 */
export function buildRequest(kind: string, method: string, params: Record<string, unknown> = {}, progressToken?: string): OutgoingRequest {
  const id = freshId(kind);
  const rest = JSON.stringify(params);
  const meta = progressToken === undefined ? META_JSON : `{"progressToken":${JSON.stringify(progressToken)},${META_JSON.slice(1)}`;
  const withMeta = rest === '{}' ? `{"_meta":${meta}}` : `${rest.slice(0, -1)},"_meta":${meta}}`;
  const line = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(method)},"params":${withMeta}}\n`;
  return { id, method, line };
}
