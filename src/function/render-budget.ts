/**
 * What one result's images may cost: how many are looked at, the pixels they declare (each and together) and
 * the bytes shown. Pure counting; the renderer asks before each step and turns a refusal into a note.
 */
import {
  MAX_IMAGE_PIXELS, MAX_IMAGES_PER_RESULT, MAX_RESULT_IMAGE_BYTES, MAX_RESULT_PIXELS,
} from './render-limits.js';

export interface ImageBudgetLimits {
  images: number;
  pixelsPerImage: number;
  pixelsPerResult: number;
  bytesPerResult: number;
}

export const RESULT_IMAGE_LIMITS: Readonly<ImageBudgetLimits> = Object.freeze({
  images: MAX_IMAGES_PER_RESULT,
  pixelsPerImage: MAX_IMAGE_PIXELS,
  pixelsPerResult: MAX_RESULT_PIXELS,
  bytesPerResult: MAX_RESULT_IMAGE_BYTES,
});

const megapixels = (pixels: number): string => `${Math.round(pixels / 100_000) / 10} Mpx`;
const mebibytes = (bytes: number): string => `${Math.round(bytes / 104_857.6) / 10} MiB`;

export class ImageBudget {
  private images = 0;
  private pixels = 0;
  private bytes = 0;

  constructor(readonly limits: Readonly<ImageBudgetLimits> = RESULT_IMAGE_LIMITS) {}

  /** Takes one of the result's image places; false once they are all taken. */
  takeImage(): boolean {
    if (this.images >= this.limits.images) return false;
    this.images += 1;
    return true;
  }

  /** Why an image of this size is refused, or null (and its pixels are counted) when it fits. */
  spendPixels(width: number, height: number): string | null {
    const pixels = width * height;
    const { pixelsPerImage, pixelsPerResult } = this.limits;
    if (pixels > pixelsPerImage) {
      return `it is ${width}×${height} px (${megapixels(pixels)}); an image may have at most ${megapixels(pixelsPerImage)}`;
    }
    if (this.pixels + pixels > pixelsPerResult) {
      return `its ${megapixels(pixels)} would take the result's images past ${megapixels(pixelsPerResult)} together `
        + `(${megapixels(this.pixels)} already shown); show fewer or smaller images`;
    }
    this.pixels += pixels;
    return null;
  }

  /** Why an image of this many bytes is not shown, or null (and its bytes are counted) when it fits. */
  spendBytes(bytes: number): string | null {
    const { bytesPerResult } = this.limits;
    if (this.bytes + bytes > bytesPerResult) {
      return `its ${mebibytes(bytes)} would take the result's images past ${mebibytes(bytesPerResult)} together `
        + `(${mebibytes(this.bytes)} already shown); show fewer or smaller images`;
    }
    this.bytes += bytes;
    return null;
  }
}
