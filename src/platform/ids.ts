/**
 * Identifiers and secrets. Ids sort by creation time (a millisecond timestamp then randomness), so a list
 * ordered by id is ordered by age and the last id of a page is a stable cursor. Secrets (API keys, session
 * tokens) carry 192 random bits and are stored only as their sha-256.
 */
import { createHash, randomBytes } from 'node:crypto';
import { takeRandomBytes } from '../common/index.js';

let lastMs = 0;
let counter = 0;

/** `<prefix>_<12 hex ms><4 hex counter><12 hex random>`: unique, and increasing within one process. */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now === lastMs) counter = (counter + 1) & 0xffff;
  else {
    lastMs = now;
    counter = 0;
  }
  const time = now.toString(16).padStart(12, '0');
  return `${prefix}_${time}${counter.toString(16).padStart(4, '0')}${Buffer.from(takeRandomBytes(6).buffer).toString('hex')}`;
}

/** A high-entropy secret with a readable prefix (`sk_…` for API keys, `st_…` for session tokens). */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

/** sha-256, hex: enough for secrets of 192 random bits (no dictionary to attack). */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export function nowIso(): string {
  return new Date().toISOString();
}
