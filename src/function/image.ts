/**
 * Images the model may see: PNG, JPEG, GIF or WebP, told by their bytes (never by a claimed mimeType),
 * and at most 2000 px on their long edge (larger ones are downscaled, keeping the aspect ratio).
 */
import sharp from 'sharp';

export const MAX_IMAGE_EDGE = 2000;

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

export interface ModelImage {
  mimeType: ImageType;
  data: Buffer;
  width: number;
  height: number;
  downscaled: boolean;
}

/**
 * Decodes just enough to know the size; re-encodes only when the long edge is over the limit. A file that
 * claims a type by its magic bytes but does not decode is refused (returns a reason instead).
 */
export async function prepareImage(bytes: Uint8Array): Promise<ModelImage | string> {
  const type = sniffImageType(bytes);
  if (!type) return 'not a PNG, JPEG, GIF or WebP image';
  try {
    const image = sharp(bytes, { animated: false, limitInputPixels: 268_402_689 });
    const meta = await image.metadata();
    const width = meta.width ?? 0;
    const height = meta.height ?? 0;
    if (width === 0 || height === 0) return 'an image without a size';
    if (Math.max(width, height) <= MAX_IMAGE_EDGE) {
      return { mimeType: type, data: Buffer.from(bytes), width, height, downscaled: false };
    }
    const resized = image.resize({ width: MAX_IMAGE_EDGE, height: MAX_IMAGE_EDGE, fit: 'inside' });
    // GIF and WebP keep their format; PNG stays lossless; JPEG stays JPEG.
    const encoded = await resized.toFormat(type.slice('image/'.length) as 'png' | 'jpeg' | 'gif' | 'webp').toBuffer({ resolveWithObject: true });
    return { mimeType: type, data: encoded.data, width: encoded.info.width, height: encoded.info.height, downscaled: true };
  } catch (err) {
    return `an image that does not decode (${(err as Error).message.split('\n')[0]})`;
  }
}
