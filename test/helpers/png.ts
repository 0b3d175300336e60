/**
 * PNG files written chunk by chunk, for tests that need what an encoder would not make: a header that
 * declares any size over a few bytes of pixels, or a valid small image padded with a large private chunk.
 */
import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed) >>> 0);
  return Buffer.concat([length, typed, crc]);
}

function header(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  return chunk('IHDR', ihdr);
}

/**
 * A PNG whose header declares width × height but whose pixel data is one compressed row of zeros: a few
 * dozen bytes that claim any number of pixels (a decoder would have to fail, or fill the rest).
 */
export function pngDeclaring(width: number, height: number): Buffer {
  const oneRow = deflateSync(Buffer.alloc(1 + Math.min(width, 1024) * 3));
  return Buffer.concat([SIGNATURE, header(width, height), chunk('IDAT', oneRow), chunk('IEND', Buffer.alloc(0))]);
}

/** A valid width × height black PNG carrying `padBytes` of a private ancillary chunk that decoders skip. */
export function paddedPng(width: number, height: number, padBytes: number): Buffer {
  const rows = Buffer.alloc((1 + width * 3) * height);
  return Buffer.concat([
    SIGNATURE, header(width, height), chunk('prVt', Buffer.alloc(padBytes, 0x61)),
    chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0)),
  ]);
}
