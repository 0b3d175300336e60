/**
 * The egress log: one entry per HTTP exchange attempted (each redirect hop is its own entry), and one for a
 * request refused before any exchange. Built from safe data only: the URL loses its userinfo and fragment,
 * and credential headers never appear.
 */
import type { HttpErrorKind } from '../sandbox/index.js';
import type { EgressRecord } from '../tool.js';

export interface EgressLogEntry extends EgressRecord {
  error?: HttpErrorKind;
}

/** A URL as it may be logged: no userinfo, no fragment. Unparseable text logs as empty. */
export function urlForLog(url: URL | string): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : new URL(url.href);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error; // expected: not a URL
    return '';
  }
  parsed.username = '';
  parsed.password = '';
  parsed.hash = '';
  return parsed.href;
}
