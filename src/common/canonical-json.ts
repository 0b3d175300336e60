/**
 * JSON with object keys sorted at every depth, and its digest: what binds something sealed (an approval, a
 * request state) to the arguments of one call, however a client ordered their keys when it sent them again.
 */
import { createHash } from 'node:crypto';

/** The same value always gives the same text. Arrays keep their order: it is part of the value. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The SHA-256 of the arguments' canonical JSON, hex. */
export function argumentsDigest(args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(args), 'utf8').digest('hex');
}
