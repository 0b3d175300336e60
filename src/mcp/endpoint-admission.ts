/**
 * The one gate in front of an MCP endpoint, shared by its web-standard and node:http faces, so both refuse
 * the same requests with the same answers: an Origin the policy does not allow (403, against DNS rebinding
 * and cross-site use from browsers), a body over the limit — declared (413, nothing read) or as it streams
 * in (413, reading stops there) — and a JSON-RPC batch (an array body, which only 2025-03-26 clients send;
 * later revisions removed batching) of more than the allowed messages (400, -32600), refused whole before
 * anything in it runs, so one POST cannot start more calls than a client may make at once.
 *
 * What passes is handed on with its body read once: as parsed JSON when it is JSON, else as text (an empty
 * body or one that is not JSON goes to the SDK as it came, so its answers — parse error, legacy fallback —
 * stay its own).
 */

export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Messages one JSON-RPC batch may carry (2025-03-26 clients batch; later revisions do not). */
export const DEFAULT_MAX_BATCH_MESSAGES = 8;

/** What a face's body reader answers once more than the limit has arrived (reading stops there). */
export const BODY_TOO_LARGE = Symbol('body too large');
export type BodyText = string | typeof BODY_TOO_LARGE;

/** A body that could not be read to its end: the client went away mid-body, or the stream broke. */
export class BodyReadError extends Error {
  constructor(cause?: unknown) {
    super('the request closed before its body ended', cause === undefined ? undefined : { cause });
    this.name = 'BodyReadError';
  }
}

export interface AdmissionSettings {
  maxBodyBytes: number;
  maxBatchMessages: number;
  isOriginAllowed: (origin: string | null | undefined) => boolean;
  /** Told of every refusal the client may not be the one to read (a disallowed Origin, a batch too large). */
  report: (error: Error) => void;
}

/** What the gate needs of a request before reading its body. */
export interface RequestHead {
  origin: string | null | undefined;
  contentLength: string | null | undefined;
  /** Whether the face reads a body for this request at all (not for GET or HEAD). */
  hasBody: boolean;
}

/** A refused request's answer, the same from both faces: a JSON-RPC error with no id. */
export interface Refusal {
  status: number;
  rpcCode: number;
  message: string;
  headers: Record<string, string>;
}

export interface Admitted {
  /** The body as text; undefined when the request carries none. */
  text: string | undefined;
  /** The body parsed, when it is JSON. */
  parsed: { value: unknown } | undefined;
}

export type Admission = { refused: Refusal } | { admitted: Admitted };

const refuse = (status: number, rpcCode: number, message: string, headers: Record<string, string> = {}): { refused: Refusal } =>
  ({ refused: { status, rpcCode, message, headers } });

/** Checks the request, reading its body through `readBody` (bounded by the limit it is given) when it has one. */
export async function admitRequest(head: RequestHead, readBody: (limit: number) => Promise<BodyText>, settings: AdmissionSettings): Promise<Admission> {
  const { maxBodyBytes, maxBatchMessages, isOriginAllowed, report } = settings;
  if (!isOriginAllowed(head.origin)) {
    report(new Error('refused a request from a disallowed Origin'));
    return refuse(403, -32000, 'Forbidden: Origin not allowed');
  }
  const tooLarge = () => refuse(413, -32000, `Request body larger than ${maxBodyBytes} bytes`, { connection: 'close' });
  if (head.contentLength !== null && head.contentLength !== undefined && Number(head.contentLength) > maxBodyBytes) return tooLarge();
  if (!head.hasBody) return { admitted: { text: undefined, parsed: undefined } };
  let text: BodyText;
  try {
    text = await readBody(maxBodyBytes);
  } catch (error) {
    if (!(error instanceof BodyReadError)) throw error;
    return refuse(400, -32700, 'Parse error: the request body could not be read');
  }
  if (text === BODY_TOO_LARGE) return tooLarge();
  const parsed = parseJson(text);
  const refused = parsed === undefined ? null : batchRefusal(parsed.value, maxBatchMessages);
  if (refused !== null) {
    report(new Error(refused));
    return refuse(400, -32600, refused);
  }
  return { admitted: { text, parsed } };
}

/** The refusal's body, as both faces send it. */
export function refusalBody(refusal: Refusal): string {
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: refusal.rpcCode, message: refusal.message } });
}

function parseJson(text: string): { value: unknown } | undefined {
  if (text.length === 0) return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    // Not JSON: the SDK answers it (a parse error) from the text.
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** The refusal of a batch larger than `max`, or null when `body` is no batch or a small enough one. */
function batchRefusal(body: unknown, max: number): string | null {
  if (!Array.isArray(body) || body.length <= max) return null;
  return `Invalid Request: a JSON-RPC batch may carry at most ${max} messages; this one carries ${body.length}. ` +
    'Send fewer per POST (protocol revisions after 2025-03-26 carry one message per POST)';
}
