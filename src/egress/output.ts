/**
 * Where a response body goes: inline into the guest's answer (at most 256 KiB of UTF-8, reading stops past
 * the limit) or streamed straight into a volume file (never through guest memory), each chunk drawn from
 * the call's write budget before it is written.
 */
import type { Readable } from 'node:stream';
import { isSystemError } from '../common/index.js';
import { EgressError } from './errors.js';
import { openVolumeFileForWrite, type VolumeMount } from './volume-path.js';

export const MAX_INLINE_BODY_BYTES = 256 * 1024;

export type AnswerBody = { type: 'inline'; text: string } | { type: 'file'; path: string; bytes: number };

export interface BodyResult {
  body: AnswerBody;
  bytesIn: number;
}

/** A budget the output draws on, as RunContext.writeBudget provides it. */
export interface OutputBudget {
  tryConsume(bytes: number): boolean;
}

/** Reads the whole body into memory if it fits and is UTF-8. */
export async function readInlineBody(body: Readable): Promise<BodyResult> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > MAX_INLINE_BODY_BYTES) {
      body.destroy();
      throw new EgressError(
        'too_large',
        `the response body is over ${MAX_INLINE_BODY_BYTES} bytes, the inline limit; save it to a file with "output": {"type": "file", …}`,
      );
    }
    chunks.push(chunk);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, total));
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: a fatal TextDecoder throws TypeError on bytes that are not UTF-8
    throw new EgressError(
      'not_text',
      'the response body is not UTF-8 text; save it to a file with "output": {"type": "file", …}',
    );
  }
  return { body: { type: 'inline', text }, bytesIn: total };
}

/**
 * Streams the body into the volume file at `guestPath` (parents created, an existing file overwritten).
 * On any failure the partial file is removed, so a file that exists after a failed request was never
 * mistaken for a complete download: relative to its held directory, and only while the name still is the
 * file we wrote (a name swapped meanwhile is left alone, and nothing outside the volume is ever removed).
 */
export async function writeBodyToVolume(
  body: Readable,
  guestPath: string,
  mounts: readonly VolumeMount[],
  budget: OutputBudget,
): Promise<BodyResult> {
  const target = await openVolumeFileForWrite(guestPath, mounts, budget);
  let written = 0;
  let completed = false;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (!budget.tryConsume(chunk.length)) {
        body.destroy();
        throw new EgressError(
          'write_budget',
          `saving the response to ${target.guestPath} would exceed this call's write budget (${written} bytes written so far)`,
        );
      }
      let offset = 0;
      while (offset < chunk.length) {
        let bytesWritten: number;
        try {
          ({ bytesWritten } = await target.handle.write(chunk, offset, chunk.length - offset));
        } catch (error) {
          body.destroy();
          if (!isSystemError(error)) throw error; // expected: the disk refusing the write (ENOSPC, EIO, …)
          throw new EgressError('bad_path', `${JSON.stringify(target.guestPath)} could not be written`);
        }
        offset += bytesWritten;
      }
      written += chunk.length;
    }
    completed = true;
  } finally {
    await target.finish(!completed);
  }
  return { body: { type: 'file', path: target.guestPath, bytes: written }, bytesIn: written };
}
