/**
 * Reading a request body with a hard cap. A declared Content-Length over the cap is refused before reading;
 * a body that grows past it while streaming is refused as soon as it does (413), without buffering the rest.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';

export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    throw tooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, 'body_too_large', `the request body is larger than ${maxBytes} bytes`);
}
