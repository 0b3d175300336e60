/**
 * Images the model may see: PNG, JPEG, GIF or WebP, told by their bytes (never by a claimed mimeType),
 * and at most 2000 px on their long edge (larger ones are downscaled, keeping the aspect ratio).
 * The size is read from the header first, so the renderer can refuse an image before anything decodes it.
 */
import { createRequire } from 'node:module';
import type sharpType from 'sharp';
import { IMAGE_THREADS, MAX_IMAGE_EDGE, MAX_IMAGE_PIXELS } from './render-limits.js';

export { MAX_IMAGE_EDGE };

let library: typeof sharpType | null = null;

/**
 * libvips, loaded with the first image rather than with this module: it is a native library whose loading is
 * a good part of a fresh `subako call`'s start, and most calls return no image.
 */
function sharp(...args: Parameters<typeof sharpType>): ReturnType<typeof sharpType> {
  if (!library) {
    library = createRequire(import.meta.url)('sharp') as typeof sharpType;
    // Process-wide settings of libvips: one thread per image operation, so one decode cannot take every core;
    // no operation cache, since every guest image is seen once and a cache would only keep its pixels alive.
    library.concurrency(IMAGE_THREADS);
    library.cache(false);
  }
  return library(...args);
}

export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** Tells the image type from the first bytes; null when they are none of the four. */
export function sniffImageType(bytes: Uint8Array): ImageType | null {
  const b = bytes;
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38 && (b[4] === 0x37 || b[4] === 0x39) && b[5] === 0x61) return 'image/gif';
  if (b.length >= 12 && b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) return 'image/webp';
  return null;
}

/** What an image's header says: its type and the size of its first frame. */
export interface ImageHeader {
  mimeType: ImageType;
  width: number;
  height: number;
}

export interface ModelImage {
  mimeType: ImageType;
  data: Buffer;
  width: number;
  height: number;
  downscaled: boolean;
}

const firstLine = (err: unknown): string => String((err as Error)?.message ?? err).split('\n')[0];

/**
 * Reads the type and size without decoding any pixel: libvips parses only the header here, whatever size it
 * declares (the pixel limit is the caller's to apply, with the numbers in hand). A reason when the bytes are
 * not one of the four types or their header does not parse.
 */
export async function readImageHeader(bytes: Uint8Array): Promise<ImageHeader | string> {
  const mimeType = sniffImageType(bytes);
  if (!mimeType) return 'not a PNG, JPEG, GIF or WebP image';
  try {
    const meta = await sharp(bytes, { animated: false, limitInputPixels: false }).metadata();
    const width = meta.width ?? 0;
    const height = meta.height ?? 0;
    if (width === 0 || height === 0) return 'an image without a size';
    return { mimeType, width, height };
  } catch (err) {
    return `an image that does not decode (${firstLine(err)})`;
  }
}

/**
 * The image as the model sees it: the bytes as they are when the long edge is within the limit, otherwise
 * decoded and re-encoded smaller in the same format. sharp refuses to decode past MAX_IMAGE_PIXELS even if
 * the caller did not check. A reason instead when the bytes do not decode.
 */
export async function prepareImage(bytes: Uint8Array, header: ImageHeader): Promise<ModelImage | string> {
  const { mimeType, width, height } = header;
  if (Math.max(width, height) <= MAX_IMAGE_EDGE) {
    return { mimeType, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), width, height, downscaled: false };
  }
  try {
    const image = sharp(bytes, { animated: false, limitInputPixels: MAX_IMAGE_PIXELS, sequentialRead: true });
    const resized = image.resize({ width: MAX_IMAGE_EDGE, height: MAX_IMAGE_EDGE, fit: 'inside' });
    // GIF and WebP keep their format; PNG stays lossless; JPEG stays JPEG.
    const encoded = await resized.toFormat(mimeType.slice('image/'.length) as 'png' | 'jpeg' | 'gif' | 'webp').toBuffer({ resolveWithObject: true });
    return { mimeType, data: encoded.data, width: encoded.info.width, height: encoded.info.height, downscaled: true };
  } catch (err) {
    return `an image that does not decode (${firstLine(err)})`;
  }
}
