/** Errors the WASI host raises to its caller (never to the guest, which only ever sees errno values). */
import { SubakoError } from '../errors.js';

export const WASI_ERROR_CODES = {
  /** A preopen's host directory could not be opened, or its paths are not absolute. */
  preopen: 'wasi.preopen',
  /** The instance exports no `memory`. */
  noMemory: 'wasi.no_memory',
  /** The instance exports no `_start` function. */
  noStart: 'wasi.no_start',
} as const;

export class WasiSetupError extends SubakoError {}
