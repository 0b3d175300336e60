/**
 * Frames on a lane (the socket between the server and one sandbox worker): a 4-byte big-endian length,
 * then the value in V8's serialization (bytes cross as bytes, no base64). Pure: bytes in, values out.
 *
 * The reader is the server's guard against a sandbox process that is no longer what we started (a guest
 * that broke out of its isolate owns that process): a frame past `maxFrameBytes` or one V8 cannot read is
 * a `LaneFrameError`, and the lane is dropped, never the server.
 */
import { deserialize, serialize } from 'node:v8';

const LENGTH_BYTES = 4;

export class LaneFrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LaneFrameError';
  }
}

export function encodeFrame(value: unknown): Buffer {
  const body = serialize(value);
  const frame = Buffer.allocUnsafe(LENGTH_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, LENGTH_BYTES);
  return frame;
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
      let value: unknown;
      try {
        value = deserialize(body);
      } catch (error) {
        throw new LaneFrameError(`a lane frame could not be read: ${error instanceof Error ? error.message : String(error)}`);
      }
      onFrame(value);
    }
    if (at < data.length) {
      const rest = data.subarray(at);
      this.pending.push(rest);
      this.pendingBytes = rest.length;
    }
  }
}
