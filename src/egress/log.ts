/**
 * The egress log: one entry per HTTP exchange attempted (each redirect hop is its own entry), and one for a
 * request refused before any exchange. Built from safe data only: the URL loses its userinfo and fragment,
 * and credential headers never appear.
 */
import type { HttpErrorKind } from '../sandbox/index.js';

export interface EgressLogEntry {
  method: string;
  /** The hop's URL, query kept, userinfo and fragment stripped. Empty when the guest's URL did not parse. */
  url: string;
  status?: number;
  error?: HttpErrorKind;
  /** Response body bytes received (for a file output: written). */
  bytesIn: number;
  /** Request body bytes sent. */
  bytesOut: number;
  durationMs: number;
}

/** A URL as it may be logged: no userinfo, no fragment. Unparseable text logs as empty. */
export function urlForLog(url: URL | string): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : new URL(url.href);
  } catch {
    return '';
  }
  parsed.username = '';
  parsed.password = '';
  parsed.hash = '';
  return parsed.href;
}
