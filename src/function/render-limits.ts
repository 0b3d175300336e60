/**
 * The limits on rendering one result for the model, in one place (the README's limits table names them).
 * A guest chooses every image and link it answers, so each of these bounds work the host would otherwise do
 * for it after it exited: reading, decoding and re-encoding images costs the host memory and CPU, and
 * without limits 60 links to one 1 MB 16000×16000 PNG cost 30 s of CPU and 1.6 GiB.
 */

/** Images (inline `image` blocks and `volume:///` links together) looked at per result; the rest are one note. */
export const MAX_IMAGES_PER_RESULT = 16;

/**
 * Pixels one image may declare (width × height of its first frame), read from its header before it is decoded,
 * and passed to sharp as `limitInputPixels` as a second guard. 40 Mpx holds a typical camera photo (24 to
 * 33 Mpx) while one decode stays under 160 MB at 4 bytes a pixel.
 */
export const MAX_IMAGE_PIXELS = 40_000_000;

/** Pixels all the images of one result may declare together: two of the largest, or 25 charts of 2000×2000. */
export const MAX_RESULT_PIXELS = 100_000_000;

/** Bytes of image data shown to the model per result (before base64), so a result's images stay a few MiB. */
export const MAX_RESULT_IMAGE_BYTES = 32 * 1024 * 1024;

/** A linked image larger than this is not read at all. */
export const MAX_LINKED_FILE_BYTES = 64 * 1024 * 1024;

/** Images are at most this many pixels on their long edge when shown; larger ones are downscaled. */
export const MAX_IMAGE_EDGE = 2000;

/**
 * Images read and decoded at once in the whole host process, across every call: one render holds at most one,
 * and a flood of concurrent results waits its turn (under each call's deadline) instead of holding a file
 * buffer and a decode each. Two keeps two of libuv's four threads free for the file system, and bounds what
 * rendering holds at once to about 2 × (64 MiB of file + 40 Mpx × 4 bytes) ≈ 450 MiB in the worst case.
 */
export const IMAGES_DECODED_AT_ONCE = 2;

/** libvips threads per image operation (`sharp.concurrency`): one, so one decode cannot take every core. */
export const IMAGE_THREADS = 1;
