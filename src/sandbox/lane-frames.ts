/**
 * Frames on a lane (the socket between the server and one sandbox worker). A frame is:
 *
 *   u32 length of the rest (big-endian) | u32 header length | header (JSON, UTF-8) | bytes
 *
 * The header is the message without its one byte-array field (a run's stdin, an output piece, a bridge
 * payload), which travels raw after it and is named in the header's `$bin`. JSON and a raw tail, not V8's
 * serializer: a call crosses a lane three times, and this costs a few microseconds where that cost tens.
 * Pure: bytes in, values out.
 *
 * The reader is the server's guard against a sandbox process that is no longer what we started (a guest that
 * broke out of its isolate owns that process): a frame past `maxFrameBytes`, a header that is not a JSON
 * object, or a raw field under a name no message has is a `LaneFrameError`, and the lane is dropped, never the
 * server.
 */

const LENGTH_BYTES = 4;
/** The only fields that travel raw. */
const RAW_FIELDS = new Set(['bytes', 'stdin', 'payload']);

export class LaneFrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LaneFrameError';
  }
}

/** `message`'s byte-array field (at most one: `bytes`, `stdin` or `payload`) goes raw after its header. */
export function encodeFrame(message: object): Buffer {
  let header: Record<string, unknown> = message as Record<string, unknown>;
  let raw: Uint8Array | null = null;
  for (const field of RAW_FIELDS) {
    const value = header[field];
    if (!(value instanceof Uint8Array)) continue;
    raw = value;
    header = { ...header, [field]: undefined, $bin: field };
    break;
  }
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const rawLength = raw?.length ?? 0;
  const frame = Buffer.allocUnsafe(2 * LENGTH_BYTES + json.length + rawLength);
  frame.writeUInt32BE(LENGTH_BYTES + json.length + rawLength, 0);
  frame.writeUInt32BE(json.length, LENGTH_BYTES);
  json.copy(frame, 2 * LENGTH_BYTES);
  if (raw) frame.set(raw, 2 * LENGTH_BYTES + json.length);
  return frame;
}

/** One frame's rest (after its length) back to the message; the raw field is copied out of `body`. */
function decodeBody(body: Buffer): unknown {
  if (body.length < LENGTH_BYTES) throw new LaneFrameError('a lane frame is shorter than its header length');
  const headerLength = body.readUInt32BE(0);
  if (headerLength > body.length - LENGTH_BYTES) throw new LaneFrameError('a lane frame\'s header runs past the frame');
  let header: unknown;
  try {
    header = JSON.parse(body.toString('utf8', LENGTH_BYTES, LENGTH_BYTES + headerLength));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new LaneFrameError(`a lane frame's header is not JSON: ${error.message}`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new LaneFrameError('a lane frame\'s header is not an object');
  const message = header as Record<string, unknown>;
  const field = message.$bin;
  if (field === undefined) {
    if (body.length !== LENGTH_BYTES + headerLength) throw new LaneFrameError('a lane frame carries bytes no field names');
    return message;
  }
  if (typeof field !== 'string' || !RAW_FIELDS.has(field)) throw new LaneFrameError('a lane frame names a raw field no message has');
  delete message.$bin;
  message[field] = new Uint8Array(body.subarray(LENGTH_BYTES + headerLength));
  return message;
}

/** Cuts a byte stream into frames; keeps at most one partial frame. */
export class FrameReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxFrameBytes: number) {}

  /** Calls `onFrame` for every whole frame in what has arrived so far. Throws `LaneFrameError`. */
  push(chunk: Buffer, onFrame: (value: unknown) => void): void {
    let data = chunk;
    if (this.pendingBytes > 0) {
      this.pending.push(chunk);
      data = Buffer.concat(this.pending, this.pendingBytes + chunk.length);
      this.pending = [];
      this.pendingBytes = 0;
    }
    let at = 0;
    while (data.length - at >= LENGTH_BYTES) {
      const length = data.readUInt32BE(at);
      if (length > this.maxFrameBytes) {
        throw new LaneFrameError(`a lane frame of ${length} bytes is past the cap of ${this.maxFrameBytes}`);
      }
      if (data.length - at - LENGTH_BYTES < length) break;
      const body = data.subarray(at + LENGTH_BYTES, at + LENGTH_BYTES + length);
      at += LENGTH_BYTES + length;
      onFrame(decodeBody(body));
    }
    if (at < data.length) {
      const rest = data.subarray(at);
      this.pending.push(rest);
      this.pendingBytes = rest.length;
    }
  }
}
